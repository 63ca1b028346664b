"""Rendered artifacts checked by the real tools: iproute2 tc and ip in a network namespace,
FRR's vtysh --dryrun, and Python's json parser for SONiC config_db.json."""

from __future__ import annotations

import copy
import json
import os
import re
import shlex
import shutil
import subprocess
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import yaml

from cluster.artifacts import render_tree
from cluster.dialects import platform
from cluster.intent.qos import fabric_design, switch_plan
from cluster.intent.storage_qos import storage_design
from cluster.pipeline import Valid, validate, validate_mapping
from tests.conftest import ROOT, missing_tool
from tests.test_ecmp import wide_leaves

PROD = yaml.safe_load((ROOT / "stacks" / "Pulumi.prod.yaml").read_text())["config"]["gpu-cluster:cluster"]
MISSING_MODULE = re.compile(r"unknown|not found|Failed to load", re.I)
KNOWN_SONIC_TABLES = {
    "DEVICE_METADATA", "MGMT_PORT", "PORT", "DEVICE_NEIGHBOR", "LOOPBACK_INTERFACE", "INTERFACE",
    "DSCP_TO_TC_MAP", "TC_TO_QUEUE_MAP", "TC_TO_PRIORITY_GROUP_MAP", "MAP_PFC_PRIORITY_TO_QUEUE",
    "PFC_PRIORITY_TO_PRIORITY_GROUP_MAP", "WRED_PROFILE", "SCHEDULER", "PORT_QOS_MAP", "QUEUE", "CABLE_LENGTH",
    "PFC_WD", "BUFFER_POOL", "BUFFER_PROFILE", "BUFFER_PG", "BUFFER_QUEUE", "BUFFER_PORT_INGRESS_PROFILE_LIST",
    "BUFFER_PORT_EGRESS_PROFILE_LIST", "DEFAULT_LOSSLESS_BUFFER_PARAMETER", "LOSSLESS_TRAFFIC_PATTERN",
    "VLAN", "VLAN_MEMBER", "PORTCHANNEL", "PORTCHANNEL_MEMBER", "STP", "STP_VLAN", "STP_PORT",
    # the management plane (docs/reference/dialects.md, *Management plane*)
    "MGMT_VRF_CONFIG", "MGMT_INTERFACE", "VLAN_INTERFACE", "STATIC_ROUTE", "NTP", "NTP_SERVER", "SYSLOG_SERVER",
    "DNS_NAMESERVER", "TACPLUS", "TACPLUS_SERVER", "AAA", "SNMP", "SNMP_COMMUNITY", "SNMP_AGENT_ADDRESS_CONFIG",
    "BANNER_MESSAGE", "GNMI", "TELEMETRY_CLIENT",
}


def render_mapping(data: dict[str, Any]) -> dict[str, str]:
    result = validate_mapping("t", data)
    assert result.ok and isinstance(result, Valid)
    return render_tree(result.spec, result.topology)


def dscp46_prod() -> dict[str, Any]:
    data = copy.deepcopy(PROD)
    data["qos"]["roce"] = {"dscp": 46, "priority": 3}
    data["fabric"]["leaf"]["os"] = "sonic"
    data["fabric"]["spine"]["os"] = "nvue"  # a SONiC leaf under an NVUE spine, asked for
    return data


# --------------------------------------------------------------------------- qos.sh in a namespace
#
# The script's sections run with bash against this machine's ip and tc, inside a network namespace
# the test creates, with $QOS_SYSFS pointing at a fake sysfs tree: /sys/class/infiniband/<dev>/
# device/net/<netdev> as the mlx5 driver lays it out, and /sys/class/net/<netdev>/queues/tx-N.

# A DGX H100 as its RoCE netdevs might be named: all twelve mlx5 functions, the compute ones
# (mlx5_0,3,4,5,6,9,10,11 per the DGX H100 User Guide) and the BlueField-3 storage ports (1,2,7,8).
HOST_NETDEVS = {f"mlx5_{index}": f"enp{bus}s0np0" for index, bus in
                enumerate((24, 41, 42, 64, 79, 94, 154, 170, 171, 192, 206, 220))}
DGX_COMPUTE = ["mlx5_0", "mlx5_3", "mlx5_4", "mlx5_5", "mlx5_6", "mlx5_9", "mlx5_10", "mlx5_11"]
TX_QUEUES = 16
SECTIONS = ("# --- Rails:", "# --- NIC QoS:", "# --- RoCE:", "# --- tc for kernel traffic", "# --- Per-rail source routing",
            "# --- QoS runs in a subshell", "# --- End of QoS")


def section(script: str, marker: str) -> str:
    """One section of qos.sh, from its heading to the next section's."""
    start = script.index(marker)
    ends = [script.index(other, start + 1) for other in SECTIONS if other != marker and other in script[start + 1:]]
    return script[start:min(ends)]


def fake_sysfs(root: Path, netdevs: dict[str, str | list[str]], gid_netdev: dict[str, str] | None = None) -> Path:
    """class/infiniband/<dev>/device/net/<netdev>, class/net/<netdev>/queues/tx-N, and the MLNX_OFED knobs."""
    for dev, names in netdevs.items():
        base = root / "class" / "infiniband" / dev
        (base / "tc" / "1").mkdir(parents=True)
        (base / "tc" / "1" / "traffic_class").write_text("0\n")
        for name in [names] if isinstance(names, str) else names:
            (base / "device" / "net" / name).mkdir(parents=True)
            for queue in range(TX_QUEUES):
                (root / "class" / "net" / name / "queues" / f"tx-{queue}").mkdir(parents=True, exist_ok=True)
            for side in ("roce_np", "roce_rp"):
                enable = root / "class" / "net" / name / "ecn" / side / "enable"
                enable.mkdir(parents=True, exist_ok=True)
                for priority in range(8):
                    (enable / str(priority)).write_text("0\n")
        if gid_netdev and dev in gid_netdev:
            (base / "ports" / "1" / "gid_attrs" / "ndevs").mkdir(parents=True)
            (base / "ports" / "1" / "gid_attrs" / "ndevs" / "0").write_text(gid_netdev[dev] + "\n")
    return root


@dataclass
class Applied:
    namespace: str
    sysfs: Path = Path("/sys")
    ok: list[str] = field(default_factory=list)
    missing: list[tuple[str, str]] = field(default_factory=list)  # (tc arguments, tc's message)
    failed: list[tuple[str, int, str]] = field(default_factory=list)
    fallbacks: list[tuple[str, str]] = field(default_factory=list)  # `hw 1` refused, `hw 0` tried next
    calls: list[str] = field(default_factory=list)  # every tc call, in order

    def run(self, *argv: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(["ip", "netns", "exec", self.namespace, *argv], capture_output=True, text=True,
                              timeout=60, check=False)

    def script(self, program: str, sysfs: Path | None = None, strict: bool = True) -> subprocess.CompletedProcess[str]:
        """Run a bash program in the namespace with $QOS_SYSFS at the fake tree."""
        head = "set -euo pipefail\n" if strict else "set -uo pipefail\n"
        head += f"SYSFS={shlex.quote(str(sysfs or self.sysfs))}\n"
        return self.run("bash", "-c", head + program)


def _need_root_and_iproute() -> None:
    if os.geteuid() != 0:
        pytest.skip("network namespaces need root (CI runs as root)")
    if shutil.which("ip") is None or shutil.which("tc") is None:
        missing_tool("iproute2 is not installed (listed in .ci/apt-packages.txt)")


@pytest.fixture(scope="module")
def host(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Applied]:
    """A namespace of its own with one veth per host netdev (16 tx queues each) and a fake sysfs of them."""
    _need_root_and_iproute()
    name = f"gc-render-{uuid.uuid4().hex[:8]}"
    subprocess.run(["ip", "netns", "add", name], check=True, timeout=30)
    applied = Applied(name, fake_sysfs(tmp_path_factory.mktemp("sysfs"), dict(HOST_NETDEVS)))
    try:
        for index, netdev in enumerate(HOST_NETDEVS.values()):
            result = applied.run("ip", "link", "add", netdev, "numtxqueues", str(TX_QUEUES), "type", "veth",
                                 "peer", "name", f"peer{index}")
            assert result.returncode == 0, result.stderr
            for device in (netdev, f"peer{index}"):
                applied.run("ip", "link", "set", device, "up")
        yield applied
    finally:
        subprocess.run(["ip", "netns", "del", name], check=False, timeout=30)


@pytest.fixture(scope="module")
def dscp46_files() -> dict[str, str]:
    return render_mapping(dscp46_prod())


def dgx_roce(**fabric_nics: Any) -> dict[str, Any]:
    data = copy.deepcopy(PROD)
    data["node_pools"][0] = {"name": "dgx", "nodes": 64, "gpu": "H100", "server": "dgx-h100"}
    if fabric_nics:
        data["node_pools"][0]["fabric_nics"] = {"count": 8, "gbps": 400, **fabric_nics}
    return data


@pytest.fixture(scope="module")
def dgx_script() -> str:
    return render_mapping(dgx_roce())["hosts/dgx/qos.sh"]


RAILS_OUT = 'printf "%s\\n" "${RAILS[@]}"\n'


def test_rails_are_found_from_their_rdma_devices_on_a_dgx_h100(host: Applied, dgx_script: str) -> None:
    result = host.script(section(dgx_script, "# --- Rails:") + RAILS_OUT)
    assert result.returncode == 0, result.stderr
    rails = result.stdout.splitlines()[1:]
    assert rails == [HOST_NETDEVS[dev] for dev in DGX_COMPUTE]
    assert not {HOST_NETDEVS[dev] for dev in ("mlx5_1", "mlx5_2", "mlx5_7", "mlx5_8")} & set(rails)  # BlueField-3


def test_a_missing_rdma_device_stops_the_script_naming_it(host: Applied, dgx_script: str, tmp_path: Path) -> None:
    without = {dev: netdev for dev, netdev in HOST_NETDEVS.items() if dev != "mlx5_9"}
    result = host.script(section(dgx_script, "# --- Rails:") + RAILS_OUT, fake_sysfs(tmp_path, without))
    assert result.returncode == 3, (result.stdout, result.stderr)
    assert "rail 5: RDMA device mlx5_9 not found" in result.stderr
    assert "node_pools[0].fabric_nics.devices" in result.stderr and "mlx5_10" in result.stderr  # what the host has
    assert result.stdout == ""  # stopped before anything ran


def test_an_rdma_device_with_two_netdevs_takes_its_gid_netdev_or_stops(host: Applied, dgx_script: str,
                                                                         tmp_path: Path) -> None:
    rails = section(dgx_script, "# --- Rails:") + RAILS_OUT
    doubled: dict[str, str | list[str]] = {**HOST_NETDEVS, "mlx5_4": [HOST_NETDEVS["mlx5_4"], "enp79s0v0"]}
    result = host.script(rails, fake_sysfs(tmp_path / "no-gid", doubled))
    assert result.returncode == 3 and "rail 2: RDMA device mlx5_4 has 2 netdevs" in result.stderr, result.stderr
    result = host.script(rails, fake_sysfs(tmp_path / "gid", doubled, {"mlx5_4": "enp79s0v0"}))
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines()[3] == "enp79s0v0"


def test_netdevs_named_in_the_stack_file_win_and_must_exist(host: Applied) -> None:
    given = [HOST_NETDEVS[dev] for dev in DGX_COMPUTE]
    given[2] = "ens9f0np0"  # not on this host
    script = render_mapping(dgx_roce(interfaces=given))["hosts/dgx/qos.sh"]
    result = host.script(section(script, "# --- Rails:") + RAILS_OUT)
    assert result.returncode == 3
    assert "rail 2: netdev ens9f0np0 (node_pools[0].fabric_nics.interfaces[2]) not found" in result.stderr
    given[2] = HOST_NETDEVS["mlx5_1"]  # the stack file may name any netdev, even against the catalog
    script = render_mapping(dgx_roce(interfaces=given))["hosts/dgx/qos.sh"]
    result = host.script(section(script, "# --- Rails:") + RAILS_OUT)
    assert result.returncode == 0 and result.stdout.splitlines()[1:] == given, result.stderr


def test_roce_knobs_reach_the_discovered_netdevs_with_the_one_tos(host: Applied, tmp_path: Path) -> None:
    files = render_mapping(dgx_roce())
    script, env = files["hosts/dgx/qos.sh"], files["hosts/dgx/nccl.env"]
    sysfs = fake_sysfs(tmp_path, dict(HOST_NETDEVS))
    result = host.script(section(script, "# --- Rails:") + section(script, "# --- RoCE:"), sysfs)
    assert result.returncode == 0, result.stderr
    tos = re.search(r"^NCCL_IB_TC=(\d+)$", env, re.M)
    assert tos and tos[1] == str(26 << 2 | 2)
    for dev in HOST_NETDEVS:
        written = (sysfs / "class" / "infiniband" / dev / "tc" / "1" / "traffic_class").read_text().strip()
        assert written == (tos[1] if dev in DGX_COMPUTE else "0"), dev
        for side in ("roce_np", "roce_rp"):
            enable = sysfs / "class" / "net" / HOST_NETDEVS[dev] / "ecn" / side / "enable"
            assert [(enable / str(p)).read_text().strip() for p in range(8)] == (
                ["0", "0", "0", "1", "0", "0", "0", "0"] if dev in DGX_COMPUTE else ["0"] * 8), (dev, side)


TC_WRAPPER = """TC_LOG=$(mktemp)
tc() {
  local err rc=0
  err=$(command tc "$@" 2>&1 >/dev/null) || rc=$?
  printf '%s\\t%s\\t%s\\n' "$rc" "$*" "${err//$'\\n'/ }" >> "$TC_LOG"
  return "$rc"
}
"""


@pytest.fixture(scope="module")
def tc_applied(host: Applied, dscp46_files: dict[str, str]) -> Applied:
    """The script's tc section, run by bash with this machine's tc; every call logged with its exit code."""
    script = dscp46_files["hosts/h200/qos.sh"]
    program = TC_WRAPPER + section(script, "# --- Rails:") + section(script, "# --- tc for kernel traffic")
    result = host.script(program + 'cat "$TC_LOG"\n', strict=False)
    calls = [line.split("\t") for line in result.stdout.splitlines() if line.count("\t") == 2]
    assert len(calls) > 50, (result.stdout, result.stderr)
    for index, (code, argv, message) in enumerate(calls):
        host.calls.append(argv)
        if code == "0":
            host.ok.append(argv)
        elif argv.startswith("qdisc del"):
            continue  # an idempotency guard (delete what a previous run left); it fails on a fresh device
        elif "mqprio" in argv and argv.endswith(" hw 1") and calls[index + 1][1].endswith(" hw 0"):
            host.fallbacks.append((argv, message))  # no mqprio offload here: the script lays out the queues
        elif code == "2" and MISSING_MODULE.search(message):
            host.missing.append((argv, message))
        else:
            host.failed.append((argv, int(code), message))
    return host


def test_real_tc_accepts_every_rendered_line(tc_applied: Applied) -> None:
    assert tc_applied.failed == [], tc_applied.failed
    assert tc_applied.ok, "no tc line applied"
    for line, message in tc_applied.missing:
        print(f"kernel module missing here (not a syntax error): {line}: {message}")


def test_the_root_qdisc_is_mqprio_with_eight_classes_not_htb(dscp46_files: dict[str, str]) -> None:
    script = dscp46_files["hosts/h200/qos.sh"]
    tc = section(script, "# --- tc for kernel traffic")
    assert "htb" not in tc  # a single-queue root with burst-less classes replaced the multi-queue root
    assert "root handle 1: mqprio num_tc 8 map 0 1 2 3 4 5 6 7 0 0 0 0 0 0 0 0 hw 1" in tc
    assert 'mqprio num_tc 8 map 0 1 2 3 4 5 6 7 0 0 0 0 0 0 0 0 queues "${MQPRIO_QUEUES[@]}" hw 0' in tc


def test_every_rail_gets_mqprio_hardware_first_then_its_own_queue_layout(tc_applied: Applied) -> None:
    layout = " ".join(f"2@{2 * tc}" for tc in range(8))  # 16 tx queues in the fake sysfs: two per class
    for dev in (HOST_NETDEVS[f"mlx5_{rail}"] for rail in range(8)):
        mine = [argv for argv in tc_applied.calls if f"dev {dev} root" in argv]
        assert mine and mine[0].endswith(" hw 1"), mine
        if mine[0] not in tc_applied.ok:  # no offload (veth) or no mqprio here: the software layout follows
            assert mine[1:] == [f"qdisc replace dev {dev} root handle 1: mqprio num_tc 8 map "
                                f"0 1 2 3 4 5 6 7 0 0 0 0 0 0 0 0 queues {layout} hw 0"], mine


@pytest.mark.parametrize(("queues", "layout"), [(16, "2@0 2@2 2@4 2@6 2@8 2@10 2@12 2@14"),
                                                (12, "1@0 1@1 1@2 1@3 1@4 1@5 1@6 1@7"), (4, ""), (0, "")])
def test_the_queue_layout_follows_the_devices_tx_queues(host: Applied, dscp46_files: dict[str, str], tmp_path: Path,
                                                        queues: int, layout: str) -> None:
    for queue in range(queues):
        (tmp_path / "class" / "net" / "eth9" / "queues" / f"tx-{queue}").mkdir(parents=True)
    tc = section(dscp46_files["hosts/h200/qos.sh"], "# --- tc for kernel traffic")
    functions = tc[:tc.index('for dev in "${RAILS[@]}"')]
    result = host.script('count() { echo "$#"; }\n' + functions + 'mqprio_queues eth9\necho "${MQPRIO_QUEUES[*]}"\n',
                         tmp_path)
    assert result.returncode == 0 and result.stdout.strip() == layout, result.stderr


def test_mqprio_reads_back_where_the_kernel_has_it(tc_applied: Applied) -> None:
    missing = [message for line, message in tc_applied.missing if "mqprio" in line]
    if missing:
        pytest.skip(f"this kernel lacks mqprio ({missing[0]}); the lines parsed (exit 2, not 1)")
    shown = tc_applied.run("tc", "qdisc", "show", "dev", HOST_NETDEVS["mlx5_0"]).stdout
    assert "qdisc mqprio 1: root tc 8 map 0 1 2 3 4 5 6 7 0 0 0 0 0 0 0 0" in shown, shown
    assert "queues:(0:1) (2:3) (4:5) (6:7) (8:9) (10:11) (12:13) (14:15)" in shown, shown


def test_dscp_46_filter_reads_back_where_the_kernel_has_skbedit(tc_applied: Applied) -> None:
    skbedit = [line for line in tc_lines_of(tc_applied) if "skbedit" in line]
    assert any("match ip dsfield 0xb8 0xfc action skbedit priority 3" in line for line in skbedit)
    missing = [message for line, message in tc_applied.missing if "skbedit" in line]
    if missing:
        pytest.skip(f"this kernel lacks the skbedit action ({missing[0]}); the lines parsed (exit 2, not 1)")
    shown = tc_applied.run("tc", "filter", "show", "dev", HOST_NETDEVS["mlx5_0"], "egress").stdout
    blocks = shown.split("filter protocol ip pref ")
    roce = [block for block in blocks if "priority 3" in block]
    assert roce and "match 00b80000/00fc0000 at 0" in roce[0], shown
    assert "match 00280000/00fc0000 at 0" in shown  # storage DSCP 10
    assert "match 00c00000/00fc0000 at 0" in shown  # CNP DSCP 48


def tc_lines_of(applied: Applied) -> list[str]:
    return applied.ok + [line for line, _ in applied.missing]


def test_a_broken_tc_line_is_caught(host: Applied) -> None:
    """The check cannot pass vacuously: the widely shared `match ip dscp` is rejected with exit 1, and a
    misspelt mqprio option fails in tc's own parser, not as a missing module."""
    result = host.run(*shlex.split(
        "tc filter add dev peer0 egress protocol ip prio 1 u32 match ip dscp 46 0xfc action skbedit priority 3"))
    assert result.returncode == 1 and "Illegal" in result.stderr
    result = host.run(*shlex.split(
        "tc qdisc replace dev peer0 root handle 1: mqprio num_tc 8 mapp 0 1 2 3 4 5 6 7 queues 2@0 2@2 hw 0"))
    assert result.returncode != 0 and not (result.returncode == 2 and MISSING_MODULE.search(result.stderr))


def test_rail_routing_section_applies_with_real_ip(host: Applied, dscp46_files: dict[str, str]) -> None:
    script = dscp46_files["hosts/h200/qos.sh"]
    program = "HOST=h200-node-002\n" + section(script, "# --- Rails:") + section(script, "# --- Per-rail source routing")
    result = host.script(program)
    assert result.returncode == 0, result.stderr
    rules = host.run("ip", "rule", "show").stdout
    assert "from 10.128.0.16 lookup 100" in rules and "from 10.128.0.30 lookup 107" in rules
    table = host.run("ip", "route", "show", "table", "103").stdout
    assert f"default via 10.128.0.23 dev {HOST_NETDEVS['mlx5_3']}" in table
    main = host.run("ip", "route", "show", "10.128.0.0/11").stdout
    assert main.count("nexthop via") == 8
    rail5 = HOST_NETDEVS["mlx5_5"]
    sysctl = host.run("sysctl", "-n", f"net/ipv4/conf/{rail5}/arp_ignore", f"net/ipv4/conf/{rail5}/arp_announce",
                      f"net/ipv4/conf/{rail5}/rp_filter").stdout.split()
    assert sysctl == ["1", "2", "2"]


def test_rails_are_routed_before_qos_and_stay_routed_when_the_nic_refuses_qos(host: Applied, tmp_path: Path) -> None:
    """The whole qos.sh on veths, whose `dcb` refuses DCB ("Operation not supported"): exit 4 with a loud
    message, and every rail still has its address, its table and its place in the fabric route."""
    script = render_mapping(dgx_roce())["hosts/dgx/qos.sh"]
    path = tmp_path / "qos.sh"
    path.write_text(script)
    result = host.run("env", f"QOS_SYSFS={host.sysfs}", "PATH=/usr/sbin:/usr/bin:/sbin:/bin", "bash", str(path),
                      "dgx-node-002")
    assert result.returncode == 4, result.stdout + result.stderr
    assert "QoS FAILED" in result.stderr and "RoCE is NOT lossless" in result.stderr
    assert script.index("# --- Per-rail source routing") < script.index("# --- NIC QoS:")
    addresses = host.run("ip", "-o", "-4", "addr", "show").stdout
    for dev in DGX_COMPUTE:
        assert f" {HOST_NETDEVS[dev]} " in addresses.replace("    ", " "), addresses
    assert host.run("ip", "route", "show", "10.128.0.0/11").stdout.count("nexthop via") == 8


def test_a_rail_whose_link_is_down_leaves_the_fabric_route(host: Applied, dscp46_files: dict[str, str]) -> None:
    """ignore_routes_with_linkdown: the kernel marks the down rail's next hop dead, so no flow hashes onto it."""
    script = dscp46_files["hosts/h200/qos.sh"]
    program = "HOST=h200-node-003\n" + section(script, "# --- Rails:") + section(script, "# --- Per-rail source routing")
    assert host.script(program).returncode == 0
    peer = f"peer{list(HOST_NETDEVS).index('mlx5_5')}"
    try:
        host.run("ip", "link", "set", peer, "down")
        route = host.run("ip", "route", "show", "10.128.0.0/11").stdout
        down = [line for line in route.splitlines() if HOST_NETDEVS["mlx5_5"] in line]
        assert down and all("dead" in line and "linkdown" in line for line in down), route
        assert sum("dead" in line for line in route.splitlines()) == 1, route
    finally:
        host.run("ip", "link", "set", peer, "up")


@pytest.mark.parametrize("given", [False, True], ids=["found-by-address", "named-in-the-stack-file"])
def test_nccl_socket_names_the_netdev_that_holds_the_management_address(host: Applied, tmp_path: Path,
                                                                        given: bool) -> None:
    """NCCL_SOCKET_IFNAME==<the real netdev> in nccl.conf, other lines kept; a host without it is told how
    to fix it (exit 3), never handed a name that does not exist."""
    data = dgx_roce()
    if given:
        data["node_pools"][0]["management_nics"] = {"count": 1, "gbps": 25, "interfaces": ["enomgmt"]}
    files = render_mapping(data)
    script, env = files["hosts/dgx/nccl-socket.sh"], files["hosts/dgx/nccl.env"]
    assert ("NCCL_SOCKET_IFNAME==enomgmt" in env) == given and "mgmt0" not in env
    path, conf = tmp_path / "nccl-socket.sh", tmp_path / "nccl.conf"
    path.write_text(script)
    conf.write_text("NCCL_DEBUG=WARN\nNCCL_SOCKET_IFNAME==mgmt0\n")

    def run() -> subprocess.CompletedProcess[str]:
        return host.run("env", f"NCCL_CONF_PATH={conf}", "bash", str(path), "dgx-node-002")

    missing = run()
    assert missing.returncode == 3 and "node_pools[0].management_nics.interfaces" in missing.stderr, missing.stderr
    assert conf.read_text() == "NCCL_DEBUG=WARN\nNCCL_SOCKET_IFNAME==mgmt0\n"  # untouched on failure
    host.run("ip", "link", "add", "enomgmt", "type", "veth", "peer", "name", "enomgmt-peer")  # no dummy module here
    try:
        if not given:
            address = re.search(r"dgx-node-002\) ADDRESS=([0-9.]+)", script)
            assert address is not None
            host.run("ip", "addr", "add", f"{address.group(1)}/31", "dev", "enomgmt")
        done = run()
        assert done.returncode == 0, done.stderr
        assert conf.read_text() == "NCCL_DEBUG=WARN\nNCCL_SOCKET_IFNAME==enomgmt\n"
        assert host.run("env", f"NCCL_CONF_PATH={conf}", "bash", str(path), "dgx-node-999").returncode == (
            0 if given else 2)
    finally:
        host.run("ip", "link", "del", "enomgmt")


# --------------------------------------------------------------------------- FRR


def _vtysh() -> str:
    path = shutil.which("vtysh")
    if path is None:
        missing_tool("FRR is not installed (Debian `frr`, listed in .ci/apt-packages.txt)")
    return path


def _dryrun(path: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([_vtysh(), "--dryrun", "-f", str(path)], capture_output=True, text=True, timeout=60, check=False)


def _frr_files() -> dict[str, str]:
    files: dict[str, str] = {}
    for stack in ("dev", "tests/golden/stacks/infiniband.yaml"):
        result = validate(stack if "/" not in stack else str(ROOT / stack))
        assert isinstance(result, Valid)
        files.update({f"{stack}:{path}": text for path, text in render_tree(result.spec, result.topology).items()
                      if path.endswith("frr.conf")})
    files.update({f"dscp46:{path}": text for path, text in render_mapping(dscp46_prod()).items() if path.endswith("frr.conf")})
    # 128 uplinks per leaf: `maximum-paths 128` on the leaves, 32 on the spines
    files.update({f"wide:{path}": text for path, text in render_mapping(wide_leaves("sonic")).items()
                  if path.endswith("frr.conf")})
    return files


@pytest.mark.slow
def test_real_frr_accepts_every_rendered_bgp_config(tmp_path: Path) -> None:
    files = _frr_files()
    assert len(files) >= 10
    for index, (name, text) in enumerate(sorted(files.items())):
        path = tmp_path / f"{index}.conf"
        path.write_text(text)
        result = _dryrun(path)
        assert result.returncode == 0, (name, result.stdout, result.stderr)


@pytest.mark.slow
def test_real_frr_installs_exactly_as_many_paths_as_the_renderer_allows(tmp_path: Path) -> None:
    """FRR's multipath limit (a build option, 256 in Debian's and SONiC's FRR builds before 512) is the
    cap cluster.ecmp renders with: the limit parses, one more does not."""
    text = next(text for name, text in sorted(_frr_files().items()) if name.startswith("wide:") and "leaf-001-r0" in name)
    assert "  maximum-paths 128\n" in text
    for paths, accepted in ((platform("sonic").max_paths, True), (platform("sonic").max_paths + 1, False)):
        path = tmp_path / f"{paths}.conf"
        path.write_text(text.replace("  maximum-paths 128\n", f"  maximum-paths {paths}\n"))
        assert (_dryrun(path).returncode == 0) is accepted, paths


@pytest.mark.slow
def test_real_frr_rejects_a_broken_config(tmp_path: Path) -> None:
    text = next(text for name, text in sorted(_frr_files().items()) if "spine-001" in name)
    assert "remote-as external" in text
    path = tmp_path / "broken.conf"
    path.write_text(text.replace("remote-as external", "remote-as outside"))
    result = _dryrun(path)
    assert result.returncode != 0, result.stdout


# --------------------------------------------------------------------------- SONiC config_db.json


def lossless_storage_sonic() -> dict[str, Any]:
    data = yaml.safe_load((ROOT / "tests/golden/stacks/sonic.yaml").read_text())["config"]["gpu-cluster:cluster"]
    data["storage"]["lossless"] = True
    return data


@pytest.mark.parametrize("source", ["dev", "dscp46", "tests/golden/stacks/infiniband.yaml",
                                    "tests/golden/stacks/sonic.yaml", "lossless-storage"])
def test_every_sonic_config_db_parses_with_real_tables_and_the_plans_pfc(source: str) -> None:
    """Fabric switches carry the fabric's plan, storage switches the storage network's (its RoCE
    class being qos.storage), every other switch no QoS tables."""
    if source in ("dscp46", "lossless-storage"):
        result = validate_mapping("t", dscp46_prod() if source == "dscp46" else lossless_storage_sonic())
    else:
        result = validate(source if "/" not in source else str(ROOT / source))
    assert isinstance(result, Valid)
    files = render_tree(result.spec, result.topology)
    qos = result.spec.qos
    storage = storage_design(result.spec)
    plans = {"fabric": (switch_plan(fabric_design(qos)), qos.roce.priority) if qos is not None else None,
             "storage": (switch_plan(storage), storage.roce.priority) if storage is not None else None}
    checked = 0
    for path, text in sorted(files.items()):
        if not path.endswith("config_db.json"):
            continue
        db = json.loads(text)
        checked += 1
        assert set(db) <= KNOWN_SONIC_TABLES, set(db) - KNOWN_SONIC_TABLES
        name = path.split("/")[1]
        planned = plans.get(result.topology.graph.nodes[name]["network"])
        if planned is None:
            assert "PORT_QOS_MAP" not in db
            continue
        plan, roce = planned
        assert db["DEVICE_METADATA"]["localhost"]["buffer_model"] == "dynamic"  # buffermgrd sizes lossless PGs
        maps = db["DSCP_TO_TC_MAP"]["ROCE"]
        assert {int(d): int(tc) for d, tc in maps.items() if int(d) in plan.dscp_to_priority} == plan.dscp_to_priority
        expected_pfc = ",".join(str(p) for p in sorted(plan.pfc_priorities))
        ports = [port for port in db["PORT_QOS_MAP"] if port != "global"]
        assert ports and all(db["PORT_QOS_MAP"][port]["pfc_enable"] == expected_pfc for port in ports)
        cnp = qos.cnp.priority if qos else 6
        assert db["QUEUE"][f"{ports[0]}|{roce}"]["wred_profile"] == "ROCE_ECN"
        assert db["SCHEDULER"][db["QUEUE"][f"{ports[0]}|{cnp}"]["scheduler"]]["type"] == "STRICT"
        assert "wred_profile" not in db["QUEUE"][f"{ports[0]}|{cnp}"]
        assert set(db["PFC_WD"]) == ({"GLOBAL", *ports} if plan.pfc_priorities else {"GLOBAL"})
        assert set(db["CABLE_LENGTH"]["AZURE"]) == set(ports)
    if source == "lossless-storage":
        assert plans["storage"] is not None and plans["storage"][0].pfc_priorities == {1}
    assert checked >= (1 if "infiniband" in source else 3)  # InfiniBand: SONiC on the storage leaf only


def test_bash_parses_every_rendered_script(tmp_path: Path, dscp46_files: dict[str, str]) -> None:
    scripts = {path: text for path, text in dscp46_files.items() if path.endswith(".sh")}
    assert "hosts/h200/qos.sh" in scripts and any(path.endswith("nvue.sh") for path in scripts)
    for index, (path, text) in enumerate(sorted(scripts.items())):
        target = tmp_path / f"{index}.sh"
        target.write_text(text)
        result = subprocess.run(["bash", "-n", str(target)], capture_output=True, text=True, timeout=30, check=False)
        assert result.returncode == 0, (path, result.stderr)
    broken = tmp_path / "broken.sh"
    broken.write_text(scripts["hosts/h200/qos.sh"].replace("esac", "", 1))
    assert subprocess.run(["bash", "-n", str(broken)], capture_output=True, timeout=30, check=False).returncode != 0


@pytest.mark.slow
def test_shellcheck_finds_nothing_in_the_rendered_scripts(tmp_path: Path, dscp46_files: dict[str, str]) -> None:
    shellcheck = shutil.which("shellcheck")
    if shellcheck is None:
        missing_tool("shellcheck is not installed (Debian `shellcheck`, listed in .ci/apt-packages.txt)")
    scripts = {path: text for path, text in dscp46_files.items() if path.endswith(".sh")}
    # both ways qos.sh finds its netdevs: from the RDMA devices (above), and as the stack file names them
    given = render_mapping(dgx_roce(interfaces=[HOST_NETDEVS[dev] for dev in DGX_COMPUTE]))["hosts/dgx/qos.sh"]
    assert "GIVEN=(" in given and "GIVEN=(" not in scripts["hosts/h200/qos.sh"]
    scripts["given/qos.sh"] = given
    paths = []
    for index, path in enumerate(sorted(scripts)):
        target = tmp_path / f"{index}.sh"
        target.write_text(scripts[path])
        paths.append(str(target))
    result = subprocess.run([shellcheck, "--severity=warning", *paths], capture_output=True, text=True, timeout=120,
                            check=False)
    assert result.returncode == 0, result.stdout[:3000]
    result = subprocess.run(["bash", "-n", paths[sorted(scripts).index("given/qos.sh")]], capture_output=True,
                            text=True, timeout=30, check=False)
    assert result.returncode == 0, result.stderr
