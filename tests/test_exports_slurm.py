"""Slurm topology.conf: structure, and Debian's real slurmctld reading it without a warning."""

from __future__ import annotations

import os
import re
import shutil
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import run, stack

from cluster.exports.hierarchy import compress
from cluster.exports.slurm import block_conf, topology_conf
from cluster.pipeline import Result, Valid, validate
from cluster.topology import FABRIC

# Warnings that do not stop the controller but mean the topology is wrong (FACTS.md section 6).
LOG_PROBLEMS = re.compile(r"warning|lookup failure|invalid hostnames|lack access|multiple leaf", re.IGNORECASE)
THREE_TIER = stack(
    node_pools=[{"name": "a", "nodes": 60, "gpu": "H200"}, {"name": "b", "nodes": 10, "gpu": "B200"}],
    fabric={"leaf": {"ports": 16, "port_gbps": 400}, "spine": {"ports": 16, "port_gbps": 400},
            "core": {"ports": 32, "port_gbps": 400}},
)

DUAL_PLANE = stack(
    node_pools=[{"name": "b300", "nodes": 40, "gpu": "B300", "server": "hgx-b300-dual-plane"}],
    fabric={"planes": 2, "leaf": {"ports": 64, "port_gbps": 400}, "spine": {"ports": 64, "port_gbps": 400}},
)
DESIGNS = {"three-tier": THREE_TIER, "dual-plane": DUAL_PLANE}


def _require_slurm() -> None:
    if shutil.which("slurmctld") and shutil.which("scontrol"):
        return
    if os.environ.get("CI") == "true":
        pytest.fail("slurmctld / scontrol missing in CI: they are listed in .ci/apt-packages.txt")
    pytest.skip("Debian slurmctld and slurm-client are not installed (apt-get install slurmctld slurm-client)")


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


class Controller:
    """A running slurmctld on loopback with a generated slurm.conf and our topology.conf."""

    def __init__(self, folder: Path, hosts: list[str], topology: str) -> None:
        self.folder = folder
        self.conf = folder / "slurm.conf"
        self.log = folder / "slurmctld.log"
        state = folder / "state"
        state.mkdir()
        (folder / "topology.conf").write_text(topology)
        self.conf.write_text("\n".join([
            "ClusterName=exporttest",
            "SlurmctldHost=localhost",
            f"SlurmctldPort={_free_port()}",
            "AuthType=auth/none",
            "CredType=cred/none",
            "SlurmUser=root",
            f"StateSaveLocation={state}",
            f"SlurmctldLogFile={self.log}",
            f"SlurmctldPidFile={folder / 'slurmctld.pid'}",
            "MpiDefault=none",
            "MailProg=/bin/true",
            "SelectType=select/cons_tres",
            "TopologyPlugin=topology/tree",
            # NodeAddr: without it slurmctld resolves every node name and stalls (FACTS.md 6).
            *(f"NodeName={host} CPUs=1 State=CLOUD NodeAddr=127.0.0.1" for host in hosts),
            "PartitionName=all Nodes=ALL Default=YES",
        ]) + "\n")
        self.env = {**os.environ, "SLURM_CONF": str(self.conf)}
        self.process = subprocess.Popen(["slurmctld", "-D", "-f", str(self.conf)], stdout=subprocess.DEVNULL,
                                        stderr=subprocess.DEVNULL)

    def scontrol(self, *args: str) -> str:
        done = subprocess.run(["scontrol", *args], env=self.env, capture_output=True, text=True, timeout=20)
        return done.stdout

    def wait_up(self) -> None:
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                pytest.fail(f"slurmctld exited {self.process.returncode}:\n{self.log_text()}")
            if "is UP" in self.scontrol("ping"):
                return
            time.sleep(0.1)
        pytest.fail(f"slurmctld did not answer scontrol ping:\n{self.log_text()}")

    def log_text(self) -> str:
        return self.log.read_text() if self.log.exists() else "(no log)"

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


@pytest.fixture()
def controller(tmp_path: Path) -> Iterator[list[Controller]]:
    _require_slurm()
    started: list[Controller] = []
    yield started
    for item in started:
        item.stop()


def _start(started: list[Controller], folder: Path, result: Result) -> Controller:
    assert isinstance(result, Valid)
    text = topology_conf(result.spec, result.topology)
    assert text is not None
    hosts = [host for pool in result.topology.hosts_by_pool.values() for host in pool]
    item = Controller(folder, hosts, text)
    started.append(item)
    item.wait_up()
    return item


def _parse_topology(text: str) -> dict[str, dict[str, str]]:
    switches = {}
    for line in text.splitlines():
        fields = dict(part.split("=", 1) for part in line.split() if "=" in part)
        if "SwitchName" in fields:
            switches[fields.pop("SwitchName")] = fields
    return switches


def _expected_groups(result: Result) -> dict[int, set[str]]:
    """Leaf group -> hosts, straight from the graph's fabric cables."""
    assert isinstance(result, Valid)
    graph = result.topology.graph
    groups: dict[int, set[str]] = {}
    for host, data in graph.nodes(data=True):
        if data["kind"] != "host":
            continue
        mine = {graph.nodes[peer]["group"] for peer in graph[host] if FABRIC in graph[host][peer]}
        assert len(mine) == 1, f"{host} is cabled to leaf groups {mine}"
        groups.setdefault(mine.pop(), set()).add(host)
    return groups


@pytest.mark.parametrize("name", ["prod", "superpod", "three-tier", "dual-plane"])
def test_real_slurmctld_accepts_topology_without_warnings(name: str, controller: list[Controller], tmp_path: Path) -> None:
    result = run(DESIGNS[name]) if name in DESIGNS else validate(name)
    assert isinstance(result, Valid)
    ctl = _start(controller, tmp_path, result)
    shown = _parse_topology(ctl.scontrol("show", "topology"))
    problems = [line for line in ctl.log_text().splitlines() if LOG_PROBLEMS.search(line)]
    assert not problems, "slurmctld warned about the topology:\n" + "\n".join(problems)

    def expand(expression: str) -> set[str]:
        return set(ctl.scontrol("show", "hostnames", expression).split())

    every_host = {host for hosts in result.topology.hosts_by_pool.values() for host in hosts}
    expected = _expected_groups(result)
    leaves = {name: data for name, data in shown.items() if data["Level"] == "0"}
    assert sorted(sorted(expand(data["Nodes"])) for data in leaves.values()) == \
        sorted(sorted(hosts) for hosts in expected.values())
    top_level = max(int(data["Level"]) for data in shown.values())
    roots = [data for data in shown.values() if int(data["Level"]) == top_level]
    assert len(roots) == 1 and expand(roots[0]["Nodes"]) == every_host
    assert top_level == result.topology.fabric_plan.tiers - 1  # type: ignore[union-attr]


def test_slurmctld_log_check_catches_a_node_under_two_leaves(controller: list[Controller], tmp_path: Path) -> None:
    """The log check is real: a node under two leaves keeps the controller up but is reported."""
    hosts = ["n-001", "n-002", "n-003"]
    bad = "SwitchName=a Nodes=n-[001-002]\nSwitchName=b Nodes=n-[002-003]\nSwitchName=top Switches=a,b\n"
    ctl = Controller(tmp_path, hosts, bad)
    controller.append(ctl)
    ctl.wait_up()
    problems = [line for line in ctl.log_text().splitlines() if LOG_PROBLEMS.search(line)]
    assert any("Multiple leaf switches" in line for line in problems)


def test_compress_matches_slurm_hostlist_form() -> None:
    assert compress([f"h200-node-{n:03d}" for n in range(1, 65)]) == "h200-node-[001-064]"
    assert compress(["a-001", "a-003", "a-002", "b-01", "a-007", "x"]) == "a-[001-003,007],b-01,x"
    assert compress(["leaf-001-r0", "leaf-001-r1"]) == "leaf-001-r[0-1]"


def test_tree_has_one_logical_leaf_per_rail_group() -> None:
    result = validate("superpod")
    assert isinstance(result, Valid)
    text = topology_conf(result.spec, result.topology)
    assert text is not None
    switch_lines = [line for line in text.splitlines() if line.startswith("SwitchName=")]
    assert switch_lines == [
        "SwitchName=leaf-001 Nodes=dgx-node-[001-032]",
        "SwitchName=leaf-002 Nodes=dgx-node-[033-064]",
        "SwitchName=leaf-003 Nodes=dgx-node-[065-096]",
        "SwitchName=leaf-004 Nodes=dgx-node-[097-127]",
        "SwitchName=spine Switches=leaf-[001-004]",
    ]
    assert "# leaf-004 = leaf-004-r[0-7]" in text
    assert "# spine = spine-[001-016]" in text
    assert topology_conf(result.spec, result.topology) == text  # deterministic


def test_dual_plane_group_is_one_logical_leaf() -> None:
    result = run(DUAL_PLANE)
    assert isinstance(result, Valid), result.findings
    text = topology_conf(result.spec, result.topology)
    assert text is not None
    assert "# leaf-001 = p0-leaf-001-r[0-7],p1-leaf-001-r[0-7]" in text
    assert "SwitchName=leaf-001 Nodes=b300-node-[001-020]" in text


def test_block_form_only_where_nvlink_spans_nodes() -> None:
    result = validate("prod")
    assert isinstance(result, Valid)
    assert block_conf(result.spec, result.topology) is None
    nvl = run(stack(node_pools=[{"name": "gb200", "nodes": 40, "gpu": "GB200", "gpus_per_node": 4}]))
    assert isinstance(nvl, Valid), nvl.findings
    text = block_conf(nvl.spec, nvl.topology)
    assert text is not None
    blocks = [line for line in text.splitlines() if line.startswith("BlockName=")]
    # 72 GPUs per domain / 4 per tray = 18 nodes per block; 40 nodes -> 18 + 18 + 4.
    assert blocks == [
        "BlockName=gb200-nvl-001 Nodes=gb200-node-[001-018]",
        "BlockName=gb200-nvl-002 Nodes=gb200-node-[019-036]",
        "BlockName=gb200-nvl-003 Nodes=gb200-node-[037-040]",
    ]
    assert "BlockSizes=18,36" in text.splitlines()
    assert "holds 4 of 18 nodes" in text


def test_no_slurm_topology_on_cloud() -> None:
    result = run(stack(target="aws", cloud={"region": "us-east-1", "zone": "us-east-1a"},
                       node_pools=[{"name": "p5", "nodes": 4, "instance_type": "p5.48xlarge"}]))
    assert isinstance(result, Valid), result.findings
    assert topology_conf(result.spec, result.topology) is None
