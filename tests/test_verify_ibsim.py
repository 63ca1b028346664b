"""InfiniBand: Debian's ibsim simulates the designed fabric and a miscabled copy; the real
ibnetdiscover (plain and -p) discovers each; verify must find exactly the three faults."""

from __future__ import annotations

import argparse
import json
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from cluster.cli import VERBS
from cluster.commands import verify as verify_command
from cluster.pipeline import Valid, validate
from cluster.verify.check import gather, verify
from cluster.verify.expected import expected_cables
from cluster.verify.infiniband import parse_ib
from tests.ibsim import on_simulator

DATA = Path(__file__).parent / "data" / "verify"
STACK = DATA / "Pulumi.tiny-ib.yaml"



def discover(net: Path, *flags: str) -> str:
    """The real ibnetdiscover's walk of ibsim simulating `net` (tests/ibsim.py)."""
    run = on_simulator(net, ["ibnetdiscover", *flags])
    assert run.returncode == 0 and run.stdout.strip(), f"ibnetdiscover failed: {run.stderr}"
    return run.stdout


@pytest.fixture(scope="module")
def discoveries() -> Iterator[dict[tuple[str, str], str]]:
    for tool in ("ibsim", "ibsim-run", "ibnetdiscover"):
        if shutil.which(tool) is None:
            pytest.fail(f"{tool} not found: apt-get install ibsim-utils infiniband-diags (in .ci/apt-packages.txt)")
    yield {(net, form): discover(DATA / "ib" / f"{net}.net", *flags)
           for net in ("designed", "miscabled") for form, flags in (("plain", ()), ("ports", ("-p",)))}


def findings(text: str, tmp_path: Path) -> tuple[set[tuple[str, str]], int]:
    path = tmp_path / "fabric.txt"
    path.write_text(text)
    result = validate(str(STACK))
    assert isinstance(result, Valid)
    cables = expected_cables(result.spec, result.topology)
    gathered = gather(result.topology, cables, None, path, None)
    checked = verify(result.spec, result.topology, cables, gathered, ["fabric"])
    return {(f.rule, f.message) for f in checked.findings}, sum(checked.comparison.matched.values())


@pytest.mark.parametrize("form", ["plain", "ports"])
def test_designed_fabric_has_no_findings(discoveries: dict[tuple[str, str], str], form: str, tmp_path: Path) -> None:
    found, matched = findings(discoveries[("designed", form)], tmp_path)
    assert found == set()
    assert matched == 8


@pytest.mark.parametrize("form", ["plain", "ports"])
def test_miscabled_fabric_finds_swap_missing_and_slow_link(
        discoveries: dict[tuple[str, str], str], form: str, tmp_path: Path) -> None:
    found, matched = findings(discoveries[("miscabled", form)], tmp_path)
    assert found == {
        ("CABLE-SWAPPED", "cables swapped (rail 0 and rail 1): host gpu-node-001 port mlx5_0/1 reaches rail 1 leaf "
         "leaf-001-r1 port 1 and host gpu-node-001 port mlx5_1/1 reaches rail 0 leaf leaf-001-r0 port 1; the design "
         "has gpu-node-001 mlx5_0/1 <-> leaf-001-r0 port 1 and gpu-node-001 mlx5_1/1 <-> leaf-001-r1 port 1"),
        ("CABLE-MISSING", "gpu-node-002 mlx5_1/1 <-> leaf-001-r1 port 2 (fabric host-leaf, rail 1): no link, neither end "
         "reports a neighbor"),
        ("CABLE-SPEED", "leaf-001-r0 port 127 <-> spine-001 port 1 (fabric leaf-spine) runs at 100 Gb/s, the design "
         "expects 200 Gb/s"),
    }
    assert matched == 5  # the speed-degraded uplink is cabled right, so it counts as matched


def main(argv: list[str]) -> int:
    assert "verify" in VERBS
    root = argparse.ArgumentParser(prog="python -m cluster")
    verify_command.add_parser(root.add_subparsers(dest="verb", required=True))
    code: int = verify_command.run(root.parse_args(argv))
    return code


def test_cli_exit_codes_on_ibsim_discoveries(discoveries: dict[tuple[str, str], str], tmp_path: Path,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    good, bad = tmp_path / "good.txt", tmp_path / "bad.txt"
    good.write_text(discoveries[("designed", "ports")])
    bad.write_text(discoveries[("miscabled", "plain")])
    assert main(["verify", str(STACK), "--ib", str(good)]) == 0
    assert "fabric      host-leaf         4 / 4" in capsys.readouterr().out
    assert main(["verify", str(STACK), "--ib", str(bad), "--format", "json"]) == 1
    assert '"CABLE-SWAPPED"' in capsys.readouterr().out


def test_node_name_map_names_a_fabric_whose_descriptions_are_vendor_defaults(
        discoveries: dict[tuple[str, str], str], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Real switches describe themselves as `MF0;<host>:MQM9700/U1`, HCAs as their model: the
    node-name map (GUID -> design name) is what names them."""
    text = discoveries[("miscabled", "plain")]
    lines = []
    for link in parse_ib(text):
        for port in (link.a, link.b):
            lines.append(f'0x{port.guid:016x} "{port.description}"')
            text = text.replace(f'"{port.description}"', f'"{"MT4123 ConnectX6" if port.kind == "CA" else "MF0;sw:MQM9700/U1"}"')
    assert "gpu-node-001" not in text
    (tmp_path / "fabric.txt").write_text(text)
    (tmp_path / "guids.map").write_text("# node GUID -> design name\n" + "\n".join(sorted(set(lines))) + "\n")
    assert main(["verify", str(STACK), "--ib", str(tmp_path / "fabric.txt"), "--ib-map", str(tmp_path / "guids.map"),
                 "--format", "json"]) == 1
    out = capsys.readouterr().out
    assert sorted(item["rule"] for item in json.loads(out)["findings"]) == ["CABLE-MISSING", "CABLE-SPEED",
                                                                           "CABLE-SWAPPED"]
