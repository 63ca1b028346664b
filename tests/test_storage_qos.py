"""The storage network's QoS plan: its storage switches in every dialect, the hosts' storage-qos.sh,
the ECN thresholds, `storage.lossless`, and QOS-STORAGE holding host to switch."""

from __future__ import annotations

import copy
import os
import re
import shutil
import stat
import subprocess
import uuid
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
import yaml

from cluster.artifacts import render_tree
from cluster.configs import dialect_renderer
from cluster.dialects.host.render import read_host
from cluster.intent.qos import QosSide, fabric_qos_intent, qos_intent
from cluster.intent.storage_qos import ECN_FLOOR_BYTES, storage_design, storage_intent
from cluster.pipeline import Valid, validate_mapping
from cluster.rules.base import Derived
from cluster.rules.qos import StoragePlan
from tests.conftest import ROOT

GOLDEN = ROOT / "tests" / "golden" / "stacks"
EVERY_DSCP = list(range(64))


def golden(dialect: str, **storage: Any) -> dict[str, Any]:
    data: dict[str, Any] = yaml.safe_load((GOLDEN / f"{dialect}.yaml").read_text())["config"]["gpu-cluster:cluster"]
    data["storage"].update(storage)
    return data


def prod(**changes: Any) -> dict[str, Any]:
    data: dict[str, Any] = yaml.safe_load((ROOT / "stacks" / "Pulumi.prod.yaml").read_text())["config"][
        "gpu-cluster:cluster"]
    data = copy.deepcopy(data)
    for key, value in changes.items():
        data[key] = value
    return data


def valid(data: dict[str, Any]) -> Valid:
    result = validate_mapping("t", data)
    assert isinstance(result, Valid) and result.ok, [str(f) for f in result.findings]
    return result


def storage_findings(result: Any) -> list[tuple[str, str]]:
    return [(f.path, f.message) for f in result.findings if f.rule == "QOS-STORAGE"]


# --------------------------------------------------------------------------- the storage switches


@pytest.mark.parametrize("lossless", [False, True])
@pytest.mark.parametrize("dialect", ["sonic", "nvue", "eos"])
def test_storage_switches_state_the_storage_plan_in_every_dialect(dialect: str, lossless: bool) -> None:
    """Read back over each platform's defaults, a storage leaf's config queues every DSCP as the
    storage plan's switch side does, with PFC on the storage priority exactly when lossless."""
    result = valid(golden(dialect, lossless=lossless))
    intent = storage_intent(result.spec)
    assert intent is not None
    renderer = dialect_renderer(dialect)
    files = render_tree(result.spec, result.topology)
    read: Callable[[str, list[int]], QosSide] = renderer.read_qos
    side = read(files[f"switches/stor-leaf-001/{renderer.QOS_FILE}"], EVERY_DSCP)
    assert side.dscp_to_priority == dict(intent.switch.dscp_map)
    assert side.dscp_to_priority[10] == 1  # qos.storage
    assert side.pfc_priorities == ({1} if lossless else set())


def test_the_storage_queue_marks_ecn_with_thresholds_for_its_port_speed() -> None:
    """200G storage leaves under a 400G fabric: half of qos.ecn (NVIDIA's 150 KB / 1.5 MB)."""
    files = render_tree(*_spec_topology(golden("nvue")))
    text = files["switches/stor-leaf-001/nvue.sh"]
    assert "nv set qos congestion-control default-global traffic-class 3 min-threshold 75000" in text
    assert "nv set qos congestion-control default-global traffic-class 3 max-threshold 750000" in text
    assert "nv set qos mapping default-global dscp 10 switch-priority 1" in text
    eos = render_tree(*_spec_topology(golden("eos")))["switches/stor-leaf-001/eos.cfg"]
    assert "random-detect ecn minimum-threshold 75000 bytes maximum-threshold 750000 bytes" in eos
    assert "qos trust dscp" in eos


def _spec_topology(data: dict[str, Any]) -> tuple[Any, Any]:
    result = valid(data)
    return result.spec, result.topology


@pytest.mark.parametrize(("storage", "expected"), [
    ({}, (75_000, 750_000)),  # 200G under 400G
    ({"ecn": {"min_bytes": 100_000, "max_bytes": 400_000}}, (100_000, 400_000)),  # as given
    ({"leaf": {"switch": "SN5600", "port_gbps": 25}}, (ECN_FLOOR_BYTES, 93_750)),  # 25G: the floor
])
def test_storage_ecn_thresholds(storage: dict[str, Any], expected: tuple[int, int]) -> None:
    data = prod()
    data["storage"] = {**data["storage"], **storage}
    if "leaf" in storage:
        data["node_pools"][0]["storage_nics"] = {"count": 2, "gbps": 25}
    design = storage_design(valid(data).spec)
    assert design is not None
    assert (design.ecn.min_bytes, design.ecn.max_bytes) == expected


def test_a_lossless_storage_network_on_a_lossy_only_sonic_sku_is_refused() -> None:
    from cluster.dialects.sonic.skus import sonic_platforms

    lossy = [(model, gbps) for model, platform in sonic_platforms().items()
             for gbps, sku in platform.skus.items() if not sku.buffers.lossless]
    if not lossy:
        pytest.skip("every SONiC SKU in the catalog has lossless buffers")
    model, gbps = lossy[0]
    data = prod(storage={"leaf": {"switch": model, "port_gbps": gbps, "os": "sonic"}, "lossless": True})
    data["node_pools"][0]["storage_nics"] = {"count": 2, "gbps": gbps}
    result = validate_mapping("t", data)
    assert result.exit_code == 2
    [finding] = [f for f in result.findings if f.path == "storage.leaf.port_gbps"]
    assert "lossy only" in finding.message and "storage.lossless: false" in finding.hint


# --------------------------------------------------------------------------- the hosts


@pytest.mark.parametrize("lossless", [False, True])
def test_storage_qos_sh_is_the_host_side_of_the_storage_plan(lossless: bool) -> None:
    result = valid(prod(storage={"leaf": {"switch": "SN5600", "port_gbps": 200}, "lossless": lossless}))
    intent = storage_intent(result.spec)
    assert intent is not None
    script = render_tree(result.spec, result.topology)["hosts/h200/storage-qos.sh"]
    for side in read_host(script, EVERY_DSCP):  # the mlnx_qos path and the dcb path
        assert side.dscp_to_priority == dict(intent.host.dscp_map)
        assert side.pfc_priorities == ({1} if lossless else set())
    assert "STORAGE=(stor0 stor1)" in script
    assert 'cma_roce_tos -d "${STORAGE_RDMA[0]}" -t 42' in script  # DSCP 10 << 2 | ECT(0)
    assert 'set_knob "$SYSFS/class/net/${STORAGE[1]}/ecn/roce_np/enable/1" 1' in script


def test_a_storage_network_on_the_fabric_takes_the_fabric_plan_which_holds_the_storage_class() -> None:
    """`fabric.shared_with: [storage]`: no storage switch, no storage plan of its own; the storage
    ports follow the fabric's plan, whose both sides put qos.storage's DSCP on its priority."""
    data = prod()
    data["fabric"] = {**data["fabric"], "shared_with": ["storage"], "leaves": None, "spines": None,
                      "leaf_uplinks": None}
    data["fabric"] = {key: value for key, value in data["fabric"].items() if value is not None}
    result = validate_mapping("t", data)
    assert isinstance(result, Valid)
    assert storage_design(result.spec) is None
    files = render_tree(result.spec, result.topology)
    assert not [path for path in files if path.startswith("switches/stor-")]
    fabric = qos_intent(result.spec.qos)  # type: ignore[arg-type]
    assert dict(fabric.host.dscp_map)[10] == dict(fabric.switch.dscp_map)[10] == 1
    script = files["hosts/h200/storage-qos.sh"]
    assert "the GPU fabric's QoS plan (storage shares the fabric leaves)" in script
    for side in read_host(script, EVERY_DSCP):
        assert side.dscp_to_priority == dict(fabric.host.dscp_map)
        assert side.pfc_priorities == set(fabric.host.lossless)
    # Storage RDMA keeps its own lossy class, as FAB-ISOLATION's verdict says: the storage ports
    # send with qos.storage's ToS (DSCP 10 << 2 | ECT(0)), never the GPU's lossless RoCE ToS 106,
    # with DCQCN on both RDMA priorities; the fabric leaves mark ECN on both queues.
    assert 'cma_roce_tos -d "${STORAGE_RDMA[0]}" -t 42' in script and "-t 106" not in script
    for priority in (1, 3):
        assert f'set_knob "$SYSFS/class/net/${{STORAGE[0]}}/ecn/roce_np/enable/{priority}" 1' in script
        assert f'set_knob "$SYSFS/class/net/${{RAILS[0]}}/ecn/roce_rp/enable/{priority}" 1' in files["hosts/h200/qos.sh"]
    shared_plan = fabric_qos_intent(result.spec)
    assert shared_plan is not None and shared_plan.switch.ecn == shared_plan.host.ecn == (1, 3)
    leaf = files["switches/leaf-001-r0/nvue.sh"]
    tc_of = {int(priority): int(tc) for priority, tc in re.findall(
        r"^nv set qos egress-queue-mapping default-global switch-priority (\d) traffic-class (\d)$", leaf, re.M)}
    marked = {int(tc) for tc in re.findall(
        r"^nv set qos congestion-control default-global traffic-class (\d) ecn enable$", leaf, re.M)}
    assert marked == {tc_of[1], tc_of[3]}


def test_storage_ports_on_the_fabric_that_send_on_the_gpu_class_fail_validation(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """QOS-STORAGE holds the storage ports' host plan to the fabric leaves': a host plan that marks
    no ECN on the storage priority (sending storage RDMA as the GPU's class) is a finding."""
    from cluster import pipeline

    data = shared(pfc_priorities=[1, 3])
    assert storage_findings(validate_mapping("t", data)) == []
    real = pipeline.storage_port_intent

    def gpu_class(spec: Any) -> Any:
        intent = real(spec)
        return replace(intent, host=replace(intent.host, ecn=(3,)))
    monkeypatch.setattr(pipeline, "storage_port_intent", gpu_class)
    found = storage_findings(validate_mapping("t", data))
    assert ("storage", "the GPU fabric's QoS plan (storage shares the fabric) marks no ECN on storage priority 1 "
            "(host side)") in found
    assert any("storage ports: host and switch intents disagree: ECN on host [3], switch [1, 3]" in message
               for _, message in found)


# --------------------------------------------------------------------------- QOS-STORAGE


def shared(**qos: Any) -> dict[str, Any]:
    data = prod(storage={"lossless": True}, qos={**prod()["qos"], **qos})
    data["fabric"] = {key: value for key, value in data["fabric"].items()
                      if key not in ("leaves", "spines", "leaf_uplinks")} | {"shared_with": ["storage"]}
    return data


def test_lossless_storage_on_a_fabric_plan_without_pfc_on_its_priority_is_a_finding() -> None:
    findings = storage_findings(validate_mapping("t", shared()))
    assert len(findings) == 1
    path, message = findings[0]
    assert path == "qos.pfc_priorities"
    assert "no PFC on storage priority 1" in message and "host PFC on [3], switch PFC on [3]" in message


def test_lossless_storage_on_a_fabric_plan_with_pfc_on_its_priority_passes() -> None:
    assert storage_findings(validate_mapping("t", shared(pfc_priorities=[1, 3]))) == []


def test_lossless_storage_on_a_lossy_fabric_plan_is_a_finding() -> None:
    [(path, _)] = storage_findings(validate_mapping("t", shared(mode="lossy", pfc_priorities=[])))
    assert path == "qos.pfc_priorities"


def test_storage_on_the_cnp_priority_is_a_finding() -> None:
    data = prod(qos={**prod()["qos"], "storage": {"dscp": 10, "priority": 6}})
    assert ("qos.storage.priority",) in [(path,) for path, _ in storage_findings(validate_mapping("t", data))]


def test_a_storage_plan_whose_sides_disagree_is_a_finding() -> None:
    """The storage plan's two sides, derived apart, held to each other (an intent bug is caught)."""
    result = valid(prod(storage={"leaf": {"switch": "SN5600", "port_gbps": 200}, "lossless": True}))
    intent = storage_intent(result.spec)
    assert intent is not None
    broken = replace(intent, switch=replace(intent.switch, lossless=()), host=replace(intent.host, ecn=()))
    derived = Derived(address_check=lambda: None, qos_intent=lambda: None,  # type: ignore[arg-type,return-value]
                      storage_intent=lambda: broken)
    found = [(f.path, f.message) for f in StoragePlan().check_derived(result.spec, result.topology, derived)]
    paths = {path for path, _ in found}
    assert {"storage.lossless", "storage"} <= paths
    assert any("PFC on host [1], switch []" in message for _, message in found)
    assert any("marks no ECN on storage priority 1 (host side)" in message for _, message in found)
    clean = Derived(address_check=lambda: None, qos_intent=lambda: None,  # type: ignore[arg-type,return-value]
                    storage_intent=lambda: intent)
    assert list(StoragePlan().check_derived(result.spec, result.topology, clean)) == []


def test_a_host_that_marks_storage_unlike_the_switches_fails_validation(monkeypatch: pytest.MonkeyPatch) -> None:
    """Sent without ECT, storage RDMA is not ECN-capable: the host side loses ECN, the switch keeps it."""
    from cluster.intent import qos

    assert storage_findings(validate_mapping("t", prod())) == []
    monkeypatch.setattr(qos, "tos", lambda dscp: dscp << 2)
    messages = [message for _, message in storage_findings(validate_mapping("t", prod()))]
    assert "storage network: host and switch intents disagree: ECN on host [], switch [1]" in messages


# --------------------------------------------------------------------------- storage-qos.sh run


def _need_root_and_iproute() -> None:
    if os.geteuid() != 0:
        pytest.skip("network namespaces need root (CI runs as root)")
    if shutil.which("ip") is None or shutil.which("tc") is None:
        pytest.skip("iproute2 is not installed")


def _fake_tools(bin_dir: Path, log: Path) -> None:
    """dcb and cma_roce_tos that log their arguments (veth has no DCB, the machine no RDMA-CM)."""
    bin_dir.mkdir()
    for tool in ("dcb", "cma_roce_tos"):
        path = bin_dir / tool
        path.write_text(f'#!/bin/sh\necho "{tool} $*" >> {log}\n')
        path.chmod(path.stat().st_mode | stat.S_IEXEC)


def test_storage_qos_sh_runs_in_a_namespace_on_the_storage_ports(tmp_path: Path) -> None:
    """The whole script, with real ip and tc on two veth storage ports and a fake sysfs: each port's
    RDMA device is found, dcb gets the plan, and real tc takes every qdisc and filter."""
    _need_root_and_iproute()
    result = valid(prod(storage={"leaf": {"switch": "SN5600", "port_gbps": 200}, "lossless": True}))
    script = tmp_path / "storage-qos.sh"
    script.write_text(render_tree(result.spec, result.topology)["hosts/h200/storage-qos.sh"])
    sysfs, log = tmp_path / "sys", tmp_path / "calls.log"
    for index, netdev in enumerate(("stor0", "stor1")):
        (sysfs / "class" / "infiniband" / f"mlx5_{index + 8}" / "device" / "net" / netdev).mkdir(parents=True)
        for queue in range(16):
            (sysfs / "class" / "net" / netdev / "queues" / f"tx-{queue}").mkdir(parents=True, exist_ok=True)
    _fake_tools(tmp_path / "bin", log)
    namespace = f"gc-storage-{uuid.uuid4().hex[:8]}"
    subprocess.run(["ip", "netns", "add", namespace], check=True, timeout=30)
    try:
        def run(*argv: str, **env: str) -> subprocess.CompletedProcess[str]:
            return subprocess.run(["ip", "netns", "exec", namespace, *argv], capture_output=True, text=True,
                                  timeout=60, check=False, env={**os.environ, **env})

        for index, netdev in enumerate(("stor0", "stor1")):
            assert run("ip", "link", "add", netdev, "numtxqueues", "16", "type", "veth", "peer", "name",
                       f"peer{index}").returncode == 0
            run("ip", "link", "set", netdev, "up")
        path = f"{tmp_path / 'bin'}:/usr/sbin:/usr/bin:/sbin:/bin"
        done = run("bash", str(script), "h200-node-001", QOS_SYSFS=str(sysfs), PATH=path)
        assert "storage ports stor0 stor1 on RDMA devices mlx5_8 mlx5_9" in done.stdout, done.stderr
        calls = log.read_text()
        assert "dcb pfc set dev stor0 prio-pfc all:off 1:on" in calls
        assert "dcb pfc set dev stor1 prio-pfc all:off 1:on" in calls
        assert "cma_roce_tos -d mlx5_9 -t 42" in calls
        if done.returncode == 4 and re.search(r"unknown|not found|Failed to load", done.stderr, re.I):
            # this machine's kernel lacks a qdisc or action module: the script says so and exits 4
            assert "storage QoS FAILED" in done.stderr
        else:
            assert done.returncode == 0, done.stdout + done.stderr
            assert "match 00280000/00fc0000" in run("tc", "filter", "show", "dev", "stor1", "egress").stdout
            assert "mqprio" in run("tc", "qdisc", "show", "dev", "stor0").stdout
        (sysfs / "class" / "infiniband" / "mlx5_9" / "device" / "net" / "stor1").rmdir()
        missing = run("bash", str(script), "h200-node-001", QOS_SYSFS=str(sysfs), PATH=path)
        assert missing.returncode == 3
        assert "netdev stor1 has 0 RDMA devices (none); set node_pools[0].storage_nics.devices" in missing.stderr
    finally:
        subprocess.run(["ip", "netns", "del", namespace], check=False, timeout=30)


def test_a_storage_network_beside_an_infiniband_fabric_gets_its_plan() -> None:
    """InfiniBand fabrics have no RoCE QoS, but their storage network is Ethernet RoCE: its SONiC leaf
    and the DGX pool's storage ports get the storage plan, from the qos section's defaults."""
    data = yaml.safe_load((GOLDEN / "infiniband.yaml").read_text())["config"]["gpu-cluster:cluster"]
    result = valid(data)
    assert result.spec.qos is None
    intent = storage_intent(result.spec)
    assert intent is not None and dict(intent.switch.dscp_map)[10] == 1
    files = render_tree(result.spec, result.topology)
    sonic = dialect_renderer("sonic")
    side = sonic.read_qos(files["switches/stor-leaf-001/config_db.json"], EVERY_DSCP)
    assert side.dscp_to_priority == dict(intent.switch.dscp_map)
    for host_side in read_host(files["hosts/dgx/storage-qos.sh"], EVERY_DSCP):
        assert host_side.dscp_to_priority == dict(intent.host.dscp_map)
    assert "hosts/dgx/qos.sh" not in files  # the fabric's QoS is the subnet manager's
