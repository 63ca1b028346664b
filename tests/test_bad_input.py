"""Bad stack files: each gives a SCHEMA finding at the right path, exit code 2, no traceback."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from cluster.cli import main

GOOD = {
    "name": "t",
    "target": "onprem",
    "node_pools": [{"name": "h200", "nodes": 16, "gpu": "H200"}],
}


def write(tmp_path: Path, cluster: object) -> Path:
    path = tmp_path / "Pulumi.t.yaml"
    path.write_text(yaml.safe_dump({"config": {"gpu-cluster:cluster": cluster}}))
    return path


def with_(**changes: object) -> dict:
    data = json.loads(json.dumps(GOOD))
    data.update(changes)
    return data


def pool(**changes: object) -> dict:
    return with_(node_pools=[{**GOOD["node_pools"][0], **changes}])


def verdict(path: Path, capsys: pytest.CaptureFixture[str]) -> tuple[int, list[dict]]:
    code = main(["validate", str(path), "--format", "json"])
    out = capsys.readouterr().out
    return code, json.loads(out)["findings"]


CASES = [
    ("wrong type for nodes", pool(nodes="many"), "node_pools[0].nodes"),
    ("zero nodes", pool(nodes=0), "node_pools[0].nodes"),
    ("boolean as a count", pool(nodes=True), "node_pools[0].nodes"),
    ("quoted number", pool(nodes="16"), "node_pools[0].nodes"),
    ("ratio of the wrong type", with_(fabric={"max_oversubscription": "one to one"}), "fabric.max_oversubscription"),
    ("ratio of nothing", with_(fabric={"max_oversubscription": "1:0"}), "fabric.max_oversubscription"),
    ("per-tier ratio below 1", with_(fabric={"max_oversubscription": {"leaf": 0.5}}), "fabric.max_oversubscription.leaf"),
    ("negative nodes", pool(nodes=-4), "node_pools[0].nodes"),
    ("unknown GPU", pool(gpu="H900"), "node_pools[0].gpu"),
    ("unknown key", with_(fabrik={}), "fabrik"),
    ("unknown nested key", pool(nicks=8), "node_pools[0].nicks"),
    ("unknown switch model", with_(fabric={"leaf": {"switch": "SN9999"}}), "fabric.leaf.switch"),
    ("port speed the switch lacks", with_(fabric={"leaf": {"switch": "QM9700", "port_gbps": 800}}),
     "fabric.leaf.port_gbps"),
    ("duplicate pool names", with_(node_pools=[GOOD["node_pools"][0], GOOD["node_pools"][0]]), "node_pools[1].name"),
    ("leaves not a multiple of rails", with_(fabric={"leaves": 12}), "fabric.leaves"),
    ("ECN min above max", with_(qos={"ecn": {"min_bytes": 2000000, "max_bytes": 1000000}}), "qos.ecn"),
    ("GPU that does not match the instance type",
     with_(target="aws", cloud={"region": "us-east-1", "zone": "us-east-1a"},
           node_pools=[{"name": "p5e", "nodes": 2, "instance_type": "p5e.48xlarge", "gpu": "A100"}]),
     "node_pools[0].gpu"),
    ("unknown instance type",
     with_(target="aws", cloud={"region": "us-east-1", "zone": "us-east-1a"},
           node_pools=[{"name": "p5e", "nodes": 2, "instance_type": "p9.huge"}]),
     "node_pools[0].instance_type"),
    ("zone missing on aws",
     with_(target="aws", cloud={"region": "us-east-1"},
           node_pools=[{"name": "p5e", "nodes": 2, "instance_type": "p5e.48xlarge"}]),
     "cloud.zone"),
    ("unknown target", with_(target="openstack"), "target"),
    ("name not a DNS label", with_(name="Prod Cluster"), "name"),
    ("missing node_pools", {"name": "t", "target": "onprem"}, "node_pools"),
    ("empty node_pools", with_(node_pools=[]), "node_pools"),
    ("DSCP out of range", with_(qos={"roce": {"dscp": 64, "priority": 3}}), "qos.roce.dscp"),
    ("priority out of range", with_(qos={"pfc_priorities": [8]}), "qos.pfc_priorities[0]"),
    ("ratio below 1", with_(fabric={"max_oversubscription": 0.5}), "fabric.max_oversubscription"),
    ("bad CIDR", with_(addressing={"hosts": "10.300.0.0/10"}), "addressing.hosts"),
    ("overlapping address pools", with_(addressing={"loopbacks": "10.64.0.0/16"}), "addressing.loopbacks"),
    ("unknown rule to suppress", with_(policy={"suppress": ["FAB-NOPE"]}), "policy.suppress[0]"),
    ("ports not split over planes", with_(fabric={"planes": 3}), "node_pools[0].fabric_nics"),
    ("transport against switch", with_(fabric={"transport": "infiniband", "leaf": {"switch": "SN5600"}}),
     "fabric.leaf.switch"),
    ("more ports than the model", with_(fabric={"leaf": {"switch": "SN5600", "port_gbps": 800, "ports": 80}}),
     "fabric.leaf.ports"),
    ("generic switch without speed", with_(fabric={"leaf": {"ports": 64}}), "fabric.leaf"),
    ("InfiniBand switch on the storage network", with_(storage={"leaf": {"switch": "QM9790"}}), "storage.leaf.switch"),
    ("InfiniBand switch on the management network", with_(management={"spine": {"switch": "QM9700"}}),
     "management.spine.switch"),
    ("InfiniBand switch on the oob network", with_(oob={"leaf": {"switch": "Q3400"}}), "oob.leaf.switch"),
]


@pytest.mark.parametrize(("case", "cluster", "path"), CASES, ids=[case[0] for case in CASES])
def test_schema_finding_and_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str], case: str,
                                   cluster: dict, path: str) -> None:
    code, findings = verdict(write(tmp_path, cluster), capsys)
    assert code == 2
    schema = [f for f in findings if f["rule"] == "SCHEMA"]
    assert path in {f["path"] for f in schema}, schema
    for finding in schema:
        assert finding["severity"] == "error" and finding["hint"] and finding["message"]


RAW_FILES = [
    ("YAML syntax error", "config:\n  gpu-cluster:cluster: {name: t, target: [onprem\n"),
    ("empty file", ""),
    ("non-mapping root", "- a\n- b\n"),
    ("no cluster key", "config:\n  other:key: 1\n"),
    ("cluster value not a mapping", "config:\n  gpu-cluster:cluster: 42\n"),
    ("duplicate key", "config:\n  gpu-cluster:cluster:\n    name: t\n    name: u\n    target: onprem\n"
                      "    node_pools: [{name: a, nodes: 1, gpu: H200}]\n"),
    ("alias bomb", "a: &a [x, x, x, x, x, x, x, x, x, x]\nb: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a, *a]\n"
                   "c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b, *b]\nd: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c, *c]\n"
                   "e: &e [*d, *d, *d, *d, *d, *d, *d, *d, *d, *d]\nf: &f [*e, *e, *e, *e, *e, *e, *e, *e, *e, *e]\n"
                   "config: {gpu-cluster:cluster: *f}\n"),
    ("tab indentation", "config:\n\tgpu-cluster:cluster: {}\n"),
]


@pytest.mark.parametrize(("case", "text"), RAW_FILES, ids=[case[0] for case in RAW_FILES])
def test_unreadable_files_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str], case: str, text: str) -> None:
    path = tmp_path / "Pulumi.t.yaml"
    path.write_text(text)
    code, findings = verdict(path, capsys)
    assert code == 2
    assert findings and all(f["rule"] == "SCHEMA" for f in findings)


def test_binary_garbage_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "Pulumi.t.yaml"
    path.write_bytes(b"\xff\xfe\x00garbage\x80\x81")
    code, findings = verdict(path, capsys)
    assert code == 2 and findings[0]["path"] == "(file)"


def test_missing_file_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, findings = verdict(tmp_path / "nope.yaml", capsys)
    assert code == 2 and "not found" in findings[0]["message"]


def test_every_problem_reported_at_once(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    cluster = with_(node_pools=[{"name": "a", "nodes": 0, "gpu": "H200", "colour": "red"}], fabric={"planes": 0})
    code, findings = verdict(write(tmp_path, cluster), capsys)
    assert code == 2
    assert {"node_pools[0].nodes", "node_pools[0].colour", "fabric.planes"} <= {f["path"] for f in findings}


def test_unknown_key_hint_lists_known_keys(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # (`colour` is now one letter from the pool's `cloud`, whose rename the hint rightly suggests)
    _, findings = verdict(write(tmp_path, pool(paint=4)), capsys)
    hint = next(f["hint"] for f in findings if f["path"] == "node_pools[0].paint")
    assert "nodes" in hint and "fabric_nics" in hint


def test_a_misspelt_key_is_one_finding_with_the_name_it_meant(tmp_path: Path,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    data = pool(node=4)
    del data["node_pools"][0]["nodes"]
    _, findings = verdict(write(tmp_path, data), capsys)
    assert [(f["path"], f["message"], f["hint"]) for f in findings] == [
        ("node_pools[0].node", "unknown key `node`: did you mean `nodes`?", "rename `node` to `nodes`")]


def test_duplicate_key_names_the_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "Pulumi.t.yaml"
    path.write_text("config:\n  gpu-cluster:cluster:\n    name: t\n    name: u\n    target: onprem\n"
                    "    node_pools: [{name: a, nodes: 1, gpu: H200}]\n")
    _, findings = verdict(path, capsys)
    assert any(f["path"] == "name" and "line 4" in f["message"] for f in findings)


def test_usage_errors_exit_2(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as raised:
        main(["validate"])
    assert raised.value.code == 2
    with pytest.raises(SystemExit) as raised:
        main(["validate", "dev", "--format", "xml"])
    assert raised.value.code == 2
    with pytest.raises(SystemExit) as raised:
        main(["frobnicate", "dev"])
    assert raised.value.code == 2


def test_union_field_reports_once(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _, findings = verdict(write(tmp_path, with_(fabric={"max_oversubscription": {"leaf": 0.5}})), capsys)
    assert [f["path"] for f in findings] == ["fabric.max_oversubscription.leaf"]


def test_stack_file_name_must_be_a_stack_name(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "Pulumi.x$(touch pwned).yaml"
    path.write_text(yaml.safe_dump({"config": {"gpu-cluster:cluster": GOOD}}))
    code, findings = verdict(path, capsys)
    assert code == 2 and "not a Pulumi stack name" in findings[0]["message"]
    assert not (tmp_path / "pwned").exists()


def test_the_pipeline_builds_a_design_only_from_input_that_reads() -> None:
    """check() gives Invalid (findings only: no spec, no topology to misuse) when the stack cannot be
    read into a spec, and Valid (spec, topology, findings) once the design is built, whether or not
    its findings then fail the policy."""
    from cluster.pipeline import Invalid, Valid
    from tests.conftest import run, stack

    invalid = run({"name": "bad", "target": "onprem"})  # node_pools is required
    assert isinstance(invalid, Invalid)
    assert not hasattr(invalid, "spec") and not hasattr(invalid, "topology")
    assert (invalid.ok, invalid.exit_code) == (False, 2)
    assert [f.path for f in invalid.findings if f.rule == "SCHEMA"] == ["node_pools"]
    clean = run(stack())
    assert isinstance(clean, Valid) and clean.ok and clean.exit_code == 0
    assert clean.topology.graph.number_of_nodes() > 0 and clean.spec.name == stack()["name"]
    failing = run(stack(policy={"min_gbps_per_gpu": 800, "recommended_gbps_per_gpu": 800}))
    assert isinstance(failing, Valid) and (failing.ok, failing.exit_code) == (False, 1)
    assert "FAB-GPU-NIC" in {f.rule for f in failing.findings}
