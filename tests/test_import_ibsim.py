"""`import --ib`: Debian's ibsim simulates an InfiniBand fabric and the real ibnetdiscover (plain and
-p) walks it; the import of that walk is the design the fabric was built from."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from cluster.importer.infer import Options
from cluster.importer.observe import observe
from cluster.importer.run import import_design
from cluster.pipeline import Valid, validate, validate_mapping
from cluster.verify.expected import expected_cables
from tests.neighbor_reports import ibsim_net
from tests.test_import import assert_same_fabric
from tests.test_verify_ibsim import DATA, discover

TWO_GROUPS = {"name": "ib-two", "target": "onprem",
              "node_pools": [{"name": "a100", "nodes": 6, "gpu": "A100", "fabric_nics": {"count": 4, "gbps": 200}}],
              "fabric": {"transport": "infiniband", "leaf": {"switch": "QM9700", "port_gbps": 200, "ports": 8}}}


@pytest.fixture(scope="module")
def tools() -> None:
    for tool in ("ibsim", "ibsim-run", "ibnetdiscover"):
        if shutil.which(tool) is None:
            pytest.fail(f"{tool} not found: apt-get install ibsim-utils infiniband-diags (in .ci/apt-packages.txt)")


def import_walk(text: str, tmp_path: Path, name: str) -> tuple[Valid, list[str]]:
    walk = tmp_path / "fabric.txt"
    walk.write_text(text)
    done = import_design(observe(None, walk, None), Options(name=name, gpus={"gpu": "H100"}), str(walk))
    (tmp_path / "imported.yaml").write_text(done.text)
    again = validate(str(tmp_path / "imported.yaml"))
    assert isinstance(again, Valid), [finding.message for finding in again.findings]
    return again, [f"{finding.rule} {finding.message}" for finding in done.cable_findings]


@pytest.mark.parametrize("flags", [(), ("-p",)])
def test_the_designed_tiny_fabric_imports_as_its_stack(tools: None, flags: tuple[str, ...], tmp_path: Path) -> None:
    original = validate(str(DATA / "Pulumi.tiny-ib.yaml"))
    assert isinstance(original, Valid)
    again, findings = import_walk(discover(DATA / "ib" / "designed.net", *flags), tmp_path, "tiny-ib")
    assert findings == []
    assert_same_fabric(original.topology, again.topology, expected_cables(original.spec, original.topology),
                       expected_cables(again.spec, again.topology), networks={"fabric"})


def test_a_miscabled_fabric_imports_as_its_design_with_the_faults_named(tools: None, tmp_path: Path) -> None:
    original = validate(str(DATA / "Pulumi.tiny-ib.yaml"))
    assert isinstance(original, Valid)
    again, findings = import_walk(discover(DATA / "ib" / "miscabled.net", "-p"), tmp_path, "tiny-ib")
    assert_same_fabric(original.topology, again.topology, expected_cables(original.spec, original.topology),
                       expected_cables(again.spec, again.topology), networks={"fabric"})
    assert sorted(finding.split()[0] for finding in findings) == ["CABLE-MISSING", "CABLE-SPEED", "CABLE-SWAPPED"]


def test_a_two_group_fabric_generated_for_ibsim_imports_as_its_design(tools: None, tmp_path: Path) -> None:
    original = validate_mapping("ib-two", TWO_GROUPS)
    assert isinstance(original, Valid)
    plan = original.topology.fabric_plan
    assert plan is not None and plan.groups >= 2 and plan.spines >= 2
    net = tmp_path / "fabric.net"
    net.write_text(ibsim_net(original.topology, expected_cables(original.spec, original.topology)))
    again, findings = import_walk(discover(net), tmp_path, "ib-two")
    assert findings == []
    assert_same_fabric(original.topology, again.topology, expected_cables(original.spec, original.topology),
                       expected_cables(again.spec, again.topology), networks={"fabric"})
