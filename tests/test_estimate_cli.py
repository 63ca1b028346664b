"""`estimate` verb: formats, exit codes, findings first, bad input."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cluster.cli import VERBS, _Parser
from cluster.commands import estimate as verb


def cli(*argv: str) -> int:
    """Run only this verb's parser and command (other verbs are other helpers' modules)."""
    root = _Parser(prog="python -m cluster")
    verbs = root.add_subparsers(dest="verb", required=True, parser_class=_Parser)
    verb.add_parser(verbs)
    return verb.run(root.parse_args(["estimate", *argv]))


def test_registered() -> None:
    assert "estimate" in VERBS


def test_one_collective_json(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli("prod", "--collective", "all_reduce", "--nodes", "16", "--size", "8GiB", "--format", "json") == 0
    data = json.loads(capsys.readouterr().out)
    for key in ("collective", "nodes", "gpus", "size_bytes", "algorithm", "time_s", "algbw_GBps", "busbw_GBps",
                "bottleneck"):
        assert key in data
    assert (data["collective"], data["nodes"], data["gpus"], data["size_bytes"]) == ("all_reduce", 16, 128, 8 * 2**30)
    assert data["busbw_GBps"] == pytest.approx(data["algbw_GBps"] * 2 * 127 / 128, rel=1e-4)
    assert data["time_s"] == pytest.approx(8 * 2**30 / data["algbw_GBps"] / 1e9, rel=1e-4)
    assert set(data["placements"]) == {"packed", "worst"}


def test_text_prints_findings_first_then_the_estimate(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli("article-a", "--collective", "all_to_all", "--nodes", "16", "--size", "1GB") == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("article-a: ") and "finding" in out[0]
    assert any("FAB-OVERSUB" in line for line in out[1:6])
    table = next(index for index, line in enumerate(out) if "busbw GB/s" in line)
    assert all("FAB-" not in line for line in out[table:])
    assert any("leaf uplinks" in line for line in out[table:])


def test_without_size_a_table_from_1mib_to_8gib(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli("prod", "--nodes", "4", "--format", "json") == 0
    rows = json.loads(capsys.readouterr().out)["rows"]
    sizes = [row["size_bytes"] for row in rows]
    assert sizes[0] == 2**20 and sizes[-1] == 8 * 2**30 and sizes == sorted(sizes)


def test_compare_collective(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli("article-a", "--compare", "article-b", "article-c", "--size", "8GiB", "--nodes", "16") == 0
    out = capsys.readouterr().out
    assert "article-a" in out and "article-b" in out and "article-c" in out


def test_step_compare_text_and_json(capsys: pytest.CaptureFixture[str]) -> None:
    args = ["--step", "--params", "70e9", "--dp", "16", "--tp", "8", "--pp", "4", "--step-compute-s", "7"]
    assert cli("article-a", "--compare", "article-b", "article-c", *args) == 0
    out = capsys.readouterr().out
    assert "communication share" in out and "DP gradient all-reduce" in out
    assert cli("article-c", *args, "--format", "json") == 0
    data = json.loads(capsys.readouterr().out)
    assert data["stack"] == "article-c" and data["gpus"] == 512
    assert data["step_s"] == pytest.approx(data["compute_s"] + data["exposed_s"], rel=1e-5)
    assert {entry["name"] for entry in data["items"]} >= {"DP gradient all-reduce", "TP activation all-reduce"}


@pytest.mark.parametrize(("argv", "message"), [
    (["prod", "--size", "8XB"], "--size"),
    (["prod", "--size", "0"], "--size"),
    (["prod", "--nodes", "65", "--size", "1GB"], "--nodes 65 is more than pool 'h200'"),
    (["prod", "--nodes", "0"], "--nodes must be at least 1"),
    (["prod", "--pool", "gpu"], "no pool named 'gpu'"),
    (["prod", "--step", "--dp", "16"], "--step needs --params, --step-compute-s"),
    (["prod", "--step", "--params", "70e9", "--dp", "128", "--tp", "8", "--step-compute-s", "7"], "1024 GPUs"),
    (["prod", "--step", "--params", "70e9", "--dp", "16", "--tp", "8", "--step-compute-s", "7", "--global-batch", "100"],
     "--global-batch"),
    (["no-such-stack"], "unreadable or fails SCHEMA"),
    (["prod", "--algorithm", "tree", "--collective", "all_gather", "--size", "1GB"], "all-reduce algorithm"),
])
def test_bad_requests_exit_2_with_a_message(argv: list[str], message: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli(*argv) == 2
    captured = capsys.readouterr()
    assert message in captured.err
    assert "Traceback" not in captured.err and captured.out == ""


def test_schema_failure_stops_it(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "Pulumi.bad.yaml"
    bad.write_text("config:\n  gpu-cluster:cluster:\n    name: bad\n    target: onprem\n"
                   "    node_pools: [{name: a, nodes: -3, gpu: H100}]\n")
    assert cli(str(bad), "--size", "1GB") == 2
    err = capsys.readouterr().err
    assert "SCHEMA" in err and "nodes" in err


def test_unknown_collective_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as stop:
        cli("prod", "--collective", "gossip")
    assert stop.value.code == 2
