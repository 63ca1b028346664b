"""`import` from a live lab: `lab up dev` runs lldpd in every namespace (switches advertise their
model in the system description, as a switch OS does), `lab lldp` collects `lldpctl -f json` from
each, and the import of that folder is dev's GPU fabric, switch for switch and port for port."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from cluster.cli import main
from cluster.pipeline import Valid, validate
from cluster.verify.expected import expected_cables
from tests.test_import import assert_same_fabric
from tests.test_lab import lab, leftovers

pytestmark = [pytest.mark.slow,
              pytest.mark.skipif(os.geteuid() != 0, reason="needs root to create network namespaces")]


def test_a_live_labs_lldp_imports_as_the_design_it_runs(tmp_path: Path) -> None:
    state, folder, out = tmp_path / "lab", tmp_path / "lldp", tmp_path / "dev.yaml"
    try:
        up = lab(state, "up", "dev")
        assert up.returncode == 0, up.stderr
        collected = lab(state, "lldp", "dev", "--out", str(folder))
        assert collected.returncode == 0, collected.stderr
        neighbor_files = [path for path in folder.glob("*.json") if not path.name.startswith(".")]
        assert len(neighbor_files) == 16  # the fabric's 10 switches, the storage and management leaves, 4 hosts
        assert (folder / ".gpu-cluster-tree.json").is_file()  # published as a tree: a later run replaces only its own
    finally:
        lab(state, "down", "any")
        assert leftovers(state) == ([], [])
    # veths report 10 Gb/s: the speeds are the models' and the servers'
    assert main(["import", "--lldp", str(folder), "--name", "dev", "--ignore-speeds", "--out", str(out)]) == 0
    original, again = validate("dev"), validate(str(out))
    assert isinstance(original, Valid) and isinstance(again, Valid)
    assert "SN5600" in out.read_text()  # from the system description lldpd advertises
    assert_same_fabric(original.topology, again.topology, expected_cables(original.spec, original.topology),
                       expected_cables(again.spec, again.topology), networks={"fabric"})
