"""Host networking: the rendered netplan files, netnames.sh and the DHCP plan, checked by the real
tools (netplan generate, kea-dhcp4 -t, and Kea + isc-dhcp-relay + udhcpc in network namespaces the
test creates); HOST-NET and the stack keys it reads."""

from __future__ import annotations

import configparser
import copy
import ipaddress
import json
import os
import re
import shutil
import subprocess
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from cluster.artifacts import render_tree
from cluster.pipeline import Valid, validate, validate_mapping
from tests.conftest import ROOT, missing_tool, run, stack

DEV = yaml.safe_load((ROOT / "stacks" / "Pulumi.dev.yaml").read_text())["config"]["gpu-cluster:cluster"]


def tree_of(name_or_data: str | dict[str, Any]) -> dict[str, str]:
    result = validate(name_or_data) if isinstance(name_or_data, str) else validate_mapping("t", name_or_data)
    assert isinstance(result, Valid) and result.ok, [f.message for f in result.findings][:3]
    return render_tree(result.spec, result.topology)


def need(tool: str, package: str) -> str:
    found = shutil.which(tool) or shutil.which(tool, path="/usr/sbin:/sbin")
    if found is None:
        missing_tool(f"{tool} is not installed (Debian `{package}`, listed in .ci/apt-packages.txt)")
    assert found is not None
    return found


def netplan_generate(root: Path, files: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """`netplan generate --root-dir` over `files` ({name under etc/netplan: text}), as netplan reads
    /etc/netplan (mode 0600: netplan warns on files others can read)."""
    netplan = need("netplan", "netplan.io")
    folder = root / "etc" / "netplan"
    shutil.rmtree(root, ignore_errors=True)
    folder.mkdir(parents=True)
    for name, text in files.items():
        (folder / name).write_text(text)
        (folder / name).chmod(0o600)
    return subprocess.run([netplan, "generate", "--root-dir", str(root)], capture_output=True, text=True, timeout=60)


def networkd(root: Path, netdev: str) -> configparser.ConfigParser:
    """The .network file netplan generated for `netdev` (sections may repeat: [Route] x N)."""
    parser = configparser.ConfigParser(strict=False, allow_no_value=True)
    parser.optionxform = str  # type: ignore[assignment,method-assign]
    text = (root / "run" / "systemd" / "network" / f"10-netplan-{netdev}.network").read_text()
    numbered = iter(range(1000))
    parser.read_string(re.sub(r"^\[(Route|RoutingPolicyRule)\]$", lambda m: f"[{m.group(1)} {next(numbered)}]", text,
                              flags=re.M))
    return parser


def test_every_rendered_netplan_file_is_accepted_by_netplan_and_says_the_plan(tmp_path: Path) -> None:
    for name in ("dev", "prod", str(ROOT / "tests/golden/stacks/infiniband.yaml")):
        tree = tree_of(name)
        hosts = sorted(path for path in tree if re.fullmatch(r"hosts/[^/]+/netplan/[^/]+\.yaml", path))
        assert hosts, name
        switch_files = "\n".join(text for path, text in tree.items() if path.startswith("switches/"))
        for path in hosts[:4] + hosts[-1:]:
            done = netplan_generate(tmp_path / "root", {"60-gpu-cluster.yaml": tree[path]})
            assert done.returncode == 0, (path, done.stderr)
            plan = yaml.safe_load(tree[path])["network"]["ethernets"]
            for netdev, settings in plan.items():
                unit = networkd(tmp_path / "root", netdev)
                address = settings["addresses"][0]
                assert unit["Network"]["Address"] == address
                gateways = {unit[section]["Gateway"] for section in unit.sections() if section.startswith("Route ")}
                assert len(gateways) == 1
                gateway = gateways.pop()
                # the gateway is the other end of the host's /31, which a switch config holds
                assert int(address.split(".")[-1].split("/")[0]) + 1 == int(gateway.split(".")[-1])
                assert re.search(rf"\b{re.escape(gateway)}/31\b", switch_files), (path, gateway)
                rules = [unit[s] for s in unit.sections() if s.startswith("RoutingPolicyRule")]
                assert [rule["From"] for rule in rules] == [address.split("/")[0]]


def test_netplan_refuses_a_broken_file_so_the_check_can_fail(tmp_path: Path) -> None:
    text = tree_of("dev")["hosts/h200/netplan/h200-node-002.yaml"].replace("10.176.0.2/31", "10.176.0.2/33")
    done = netplan_generate(tmp_path / "root", {"60-gpu-cluster.yaml": text})
    assert done.returncode != 0 and "prefix" in done.stderr


def test_routes_stay_in_their_network() -> None:
    """The default route leaves by the management port only; storage ports route the storage
    network's host range and the stack's storage targets, nothing else."""
    data = copy.deepcopy(DEV)
    data["storage"] = {"targets": ["10.200.0.0/24"]}
    tree = tree_of(data)
    plan = yaml.safe_load(tree["hosts/h200/netplan/h200-node-003.yaml"])["network"]["ethernets"]
    assert set(plan) == {"mgmt0", "stor0", "stor1"}
    defaults = [(dev, route) for dev, s in plan.items() for route in s["routes"] if route["to"] == "default"]
    assert {dev for dev, _ in defaults} == {"mgmt0"}
    assert [route.get("table") for _, route in defaults] == [None, 1000]
    for dev in ("stor0", "stor1"):
        assert {route["to"] for route in plan[dev]["routes"]} == {"10.160.0.0/12", "10.200.0.0/24"}
    assert {route["metric"] for route in plan["stor1"]["routes"] if "metric" in route} == {101}


def test_kea_accepts_the_dhcp_plan_and_every_management_port_has_its_one_address(tmp_path: Path) -> None:
    kea = need("kea-dhcp4", "kea-dhcp4-server")
    for name in ("dev", "prod"):
        tree = tree_of(name)
        conf = tmp_path / f"{name}.conf"
        conf.write_text(tree["dhcp/kea-dhcp4.conf"])
        done = subprocess.run([kea, "-t", str(conf)], capture_output=True, text=True, timeout=60)
        assert done.returncode == 0, done.stdout[-2000:]
        subnets = json.loads(tree["dhcp/kea-dhcp4.conf"])["Dhcp4"]["subnet4"]
        planned = {yaml.safe_load(text)["network"]["ethernets"]["mgmt0"]["addresses"][0]
                   for path, text in tree.items() if "/netplan/" in path}
        assert {f"{s['pools'][0]['pool'].split(' - ')[0]}/31" for s in subnets} == planned
        assert all(s["subnet"] == f"{s['pools'][0]['pool'].split(' - ')[0]}/31" for s in subnets)
    broken = json.loads(tree["dhcp/kea-dhcp4.conf"])
    broken["Dhcp4"]["subnet4"][1]["id"] = broken["Dhcp4"]["subnet4"][0]["id"]
    conf.write_text(json.dumps(broken))
    assert subprocess.run([kea, "-t", str(conf)], capture_output=True, text=True, timeout=60).returncode != 0


def test_relay_lines_per_dialect() -> None:
    """NVUE: a server group whose upstream is the server's own port on a one-leaf management
    network; EOS: ip helper-address on each relayed routed port; both skip the server's port."""
    tree = tree_of("dev")
    nvue = tree["switches/mgmt-leaf-001/nvue.sh"]
    assert "nv set service dhcp-relay default server-group hosts server 10.176.0.0" in nvue
    assert "nv set service dhcp-relay default server-group hosts upstream-interface swp1" in nvue
    assert re.findall(r"downstream-interface (\S+) server-group-name hosts", nvue) == ["swp2", "swp3", "swp4"]
    data = copy.deepcopy(DEV)
    data["management"] = {"leaf": {"switch": "MGMT-48x25", "os": "eos"}}
    eos = tree_of(data)["switches/mgmt-leaf-001/eos.cfg"]
    relayed = re.findall(r"^interface (\S+)\n   ip helper-address 10\.176\.0\.0$", eos, re.M)
    assert relayed == ["Ethernet2/1", "Ethernet3/1", "Ethernet4/1"]
    without = {key: value for key, value in DEV.items() if key != "provisioning"}
    assert "dhcp-relay" not in tree_of(without)["switches/mgmt-leaf-001/nvue.sh"]


@pytest.mark.parametrize(("change", "rule", "path", "severity"), [
    ({"provisioning": {"dhcp_server": "10.176.0.1"}}, "HOST-NET", "provisioning.dhcp_server", "error"),
    ({"provisioning": {"dhcp_server": "10.176.0.0", "next_server": "10.9.0.1"}}, "HOST-NET",
     "provisioning.next_server", "error"),
    ({"provisioning": {"dhcp_server": "10.176.0.0"}, "management": {"leaf": {"switch": "SN5600", "ports": 32,
                                                                          "port_gbps": 100, "os": "sonic"}}},
     "HOST-NET", "provisioning.dhcp_server", "warning"),
    ({"provisioning": {"dhcp_server": "10.176.0.300"}}, "SCHEMA", "provisioning.dhcp_server", "error"),
    ({"storage": {"targets": ["10.130.0.0/16"]}}, "SCHEMA", "storage.targets[0]", "error"),
    ({"storage": {"targets": ["10.200.0.0/33"]}}, "SCHEMA", "storage.targets[0]", "error"),
    ({"provisioning": {"dhcp_server": "10.176.0.0", "boot_filename": "a b"}}, "SCHEMA",
     "provisioning.boot_filename", "error"),
])
def test_host_networking_findings(change: dict[str, Any], rule: str, path: str, severity: str) -> None:
    result = run(stack(**change))
    found = [(f.rule, f.path, str(f.severity)) for f in result.findings]
    assert (rule, path, severity) in found, found


def test_the_dev_design_is_clean_and_a_cloud_stack_ignores_provisioning() -> None:
    assert run(stack(provisioning={"dhcp_server": "10.176.0.0"})).findings == []
    cloud = run(stack(target="aws", cloud={"region": "us-east-1", "zone": "us-east-1a"},
                      node_pools=[{"name": "p5", "nodes": 2, "instance_type": "p5.48xlarge"}],
                      provisioning={"dhcp_server": "10.176.0.0"}))
    assert ("SPEC-IGNORED", "provisioning") in {(f.rule, f.path) for f in cloud.findings}


# --------------------------------------------------------------------------- in network namespaces

@pytest.fixture()
def namespaces() -> Iterator[list[str]]:
    if os.geteuid() != 0:
        pytest.skip("needs root to create network namespaces")
    need("ip", "iproute2")
    made: list[str] = []
    try:
        yield made
    finally:
        for name in made:
            subprocess.run(["ip", "netns", "del", name], check=False, timeout=30)


def _ns(made: list[str], role: str) -> str:
    name = f"hn{uuid.uuid4().hex[:6]}-{role}"
    subprocess.run(["ip", "netns", "add", name], check=True, timeout=30)
    subprocess.run(["ip", "-n", name, "link", "set", "lo", "up"], check=True, timeout=30)
    made.append(name)
    return name


def _sh(ns: str, *argv: str, **kwargs: Any) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["ip", "netns", "exec", ns, *argv], capture_output=True, text=True, timeout=60, **kwargs)


def _link_file(text: str) -> dict[str, dict[str, str]]:
    """A systemd .link file as {section: {key: value}}."""
    parser = configparser.ConfigParser()
    parser.optionxform = str  # type: ignore[assignment,method-assign]
    parser.read_string(text)
    return {section: dict(parser[section]) for section in parser.sections()}


def test_netnames_pins_the_labels_by_mac_and_netplan_merges_them(namespaces: list[str], tmp_path: Path) -> None:
    """netnames.sh in a namespace over a fake sysfs: the management port found by its address, the
    storage ports and the rails by their RDMA devices (a rail whose device lists two netdevs by
    the GID table's netdev, as qos.sh reads it); netplan merges its file with the host's and
    renames the management and storage NICs, a .link file per rail renames the rail, each to
    the name cabling.csv and the switches give it."""
    data = copy.deepcopy(DEV)
    data["node_pools"][0]["storage_nics"] = {"count": 2, "gbps": 200, "devices": ["mlx5_8", "mlx5_9"]}
    tree = tree_of(data)
    script = tmp_path / "netnames.sh"
    script.write_text(tree["hosts/h200/netnames.sh"])
    host = _ns(namespaces, "host")
    subprocess.run(["ip", "-n", host, "link", "add", "enp9s0", "type", "veth", "peer", "name", "peer0"], check=True)
    subprocess.run(["ip", "-n", host, "address", "add", "10.176.0.4/31", "dev", "enp9s0"], check=True)
    sysfs = tmp_path / "sys"
    macs = {"enp9s0": _sh(host, "cat", "/sys/class/net/enp9s0/address").stdout.strip(),
            "ens1f1np1": "b8:3f:d2:00:00:01", "ens2f1np1": "b8:3f:d2:00:00:02"}
    devices = {"mlx5_8": "ens1f1np1", "mlx5_9": "ens2f1np1"}
    for rail in range(8):
        devices[f"mlx5_{rail}"] = f"ens{rail + 3}f0np0"
        macs[f"ens{rail + 3}f0np0"] = f"b8:3f:d2:00:01:{rail:02x}"
    for rdma, netdev in devices.items():
        (sysfs / "class/infiniband" / rdma / "device/net" / netdev).mkdir(parents=True)
    # rail 7's PCI function also carries a representor: its netdev is the GID table's
    (sysfs / "class/infiniband/mlx5_7/device/net/eth9").mkdir()
    (sysfs / "class/infiniband/mlx5_7/ports/1/gid_attrs/ndevs").mkdir(parents=True)
    (sysfs / "class/infiniband/mlx5_7/ports/1/gid_attrs/ndevs/0").write_text("ens10f0np0\n")
    for netdev, mac in macs.items():
        (sysfs / "class/net" / netdev).mkdir(parents=True)
        (sysfs / "class/net" / netdev / "address").write_text(mac + "\n")
    links = tmp_path / "links"
    links.mkdir()
    env = {**os.environ, "NETNAMES_SYSFS": str(sysfs), "NETPLAN_DIR": str(tmp_path), "LINK_DIR": str(links)}
    done = _sh(host, "bash", str(script), "h200-node-003", env=env)
    assert done.returncode == 0, done.stderr
    names = (tmp_path / "59-gpu-cluster-names.yaml").read_text()
    generated = netplan_generate(tmp_path / "root", {"59-gpu-cluster-names.yaml": names,
                                                     "60-gpu-cluster.yaml": tree["hosts/h200/netplan/h200-node-003.yaml"]})
    assert generated.returncode == 0, generated.stderr
    networkd = tmp_path / "root/run/systemd/network"
    for label, netdev in {"mgmt0": "enp9s0", "stor0": "ens1f1np1", "stor1": "ens2f1np1"}.items():
        link = (networkd / f"10-netplan-{label}.link").read_text()
        assert f"PermanentMACAddress={macs[netdev]}" in link and f"Name={label}" in link
    assert "Address=10.176.0.4/31" in (networkd / "10-netplan-mgmt0.network").read_text()
    # the rails are renamed by .link files only: no .network hands a rail to systemd-networkd (qos.sh configures it)
    assert not list(networkd.glob("*rail*")), sorted(path.name for path in networkd.iterdir())
    assert sorted(path.name for path in links.iterdir()) == sorted(f"10-gpu-cluster-rail{r}.link" for r in range(8))
    for rail in range(8):
        ours = _link_file((links / f"10-gpu-cluster-rail{rail}.link").read_text())
        assert ours == {"Match": {"PermanentMACAddress": macs[f"ens{rail + 3}f0np0"]}, "Link": {"Name": f"rail{rail}"}}
        # the same rename as netplan's own set-name writes it (netplan generate: its .link file, less WakeOnLan)
        same = netplan_generate(tmp_path / "same", {"59-rail.yaml": yaml.safe_dump({"network": {"version": 2, "ethernets": {
            f"rail{rail}": {"match": {"macaddress": macs[f"ens{rail + 3}f0np0"]}, "set-name": f"rail{rail}"}}}})})
        assert same.returncode == 0, same.stderr
        theirs = _link_file((tmp_path / f"same/run/systemd/network/10-netplan-rail{rail}.link").read_text())
        theirs["Link"].pop("WakeOnLan", None)
        assert ours == theirs
    # the rails' names are the host ends of the fabric cables as cabling.csv and the leaves name them
    rows = [row.split(",") for row in tree["cabling.csv"].splitlines() if ",h200-node-003," in row and ",fabric," in row]
    assert sorted(row[10] for row in rows) == sorted(f"rail{rail}" for rail in range(8))
    # another host's planned address is not on this one: exit 3, naming the stack key
    missing = _sh(host, "bash", str(script), "h200-node-002", env=env)
    assert missing.returncode == 3 and "management_nics.interfaces" in missing.stderr
    # a rail's RDMA device that is not on the host: exit 3, naming the stack key
    shutil.rmtree(sysfs / "class/infiniband/mlx5_4")
    gone = _sh(host, "bash", str(script), "h200-node-003", env=env)
    assert gone.returncode == 3 and "mlx5_4 of rail 4" in gone.stderr and "fabric_nics.devices" in gone.stderr


def test_netnames_leaves_the_rails_the_stack_file_names_and_is_absent_when_it_names_every_netdev(
        tmp_path: Path) -> None:
    """Rails named by fabric_nics.interfaces are the host's own names (qos.sh checks that each
    exists): netnames.sh does not rename them; with every netdev named it is not rendered at all."""
    data = copy.deepcopy(DEV)
    pool = data["node_pools"][0]
    pool["fabric_nics"] = {"count": 8, "gbps": 400, "interfaces": [f"ens{r}np0" for r in range(8)]}
    tree = tree_of(data)
    assert "RAIL_NAMES" not in tree["hosts/h200/netnames.sh"]
    assert "MGMT_NAMES=(mgmt0)" in tree["hosts/h200/netnames.sh"]
    pool["management_nics"] = {"count": 1, "gbps": 25, "interfaces": ["eno1"]}
    pool["storage_nics"] = {"count": 2, "gbps": 200, "interfaces": ["ens20np0", "ens21np0"]}
    assert "hosts/h200/netnames.sh" not in tree_of(data)
    del pool["fabric_nics"]["interfaces"]
    rails_only = tree_of(data)["hosts/h200/netnames.sh"]
    assert "MGMT_NAMES=()" in rails_only and "RAIL_NAMES=(rail0 rail1 rail2 rail3 rail4 rail5 rail6 rail7)" in rails_only
    # run: a .link file per rail and no netplan file (the stack file names every netplan port)
    sysfs, links = tmp_path / "sys", tmp_path / "links"
    links.mkdir()
    for rail in range(8):
        (sysfs / "class/infiniband" / f"mlx5_{rail}" / "device/net" / f"enp{rail}s0np0").mkdir(parents=True)
        (sysfs / "class/net" / f"enp{rail}s0np0").mkdir(parents=True)
        (sysfs / "class/net" / f"enp{rail}s0np0" / "address").write_text(f"02:00:00:00:00:{rail:02x}\n")
    (tmp_path / "netnames.sh").write_text(rails_only)
    done = subprocess.run(["bash", str(tmp_path / "netnames.sh"), "h200-node-001"], capture_output=True, text=True,
                          env={**os.environ, "NETNAMES_SYSFS": str(sysfs), "NETPLAN_DIR": str(tmp_path),
                               "LINK_DIR": str(links)}, timeout=60)
    assert done.returncode == 0, done.stderr
    assert not (tmp_path / "59-gpu-cluster-names.yaml").exists()
    assert "PermanentMACAddress=02:00:00:00:00:05\n\n[Link]\nName=rail5\n" in (
        links / "10-gpu-cluster-rail5.link").read_text()


def _relay_of(nvue: str) -> tuple[str, list[str]]:
    """(server, every relayed and upstream port) from an nvue.sh's relay lines, as dhcrelay takes them."""
    server = re.findall(r"^nv set service dhcp-relay default server-group \S+ server (\S+)$", nvue, re.M)
    ports = re.findall(r"^nv set service dhcp-relay default (?:server-group \S+ upstream-interface|"
                       r"downstream-interface) (\S+)", nvue, re.M)
    assert len(server) == 1
    return server[0], ports


def test_the_rendered_kea_config_behind_the_rendered_relay_hands_each_host_its_planned_address(
        namespaces: list[str], tmp_path: Path) -> None:
    """The dev tree's DHCP path run for real: Kea with dhcp/kea-dhcp4.conf in the server host's
    namespace, isc-dhcp-relay on the leaf with the ports and server mgmt-leaf-001's nvue.sh names,
    udhcpc on each other host's management port: each gets its netplan file's address and gateway.
    Then a pool the config lacks: that host gets nothing."""
    kea, relay, client = need("kea-dhcp4", "kea-dhcp4-server"), need("dhcrelay", "isc-dhcp-relay"), \
        need("udhcpc", "udhcpc")
    tree = tree_of("dev")
    server, ports = _relay_of(tree["switches/mgmt-leaf-001/nvue.sh"])
    leaf = _ns(namespaces, "leaf")
    _sh(leaf, "sysctl", "-qw", "net.ipv4.ip_forward=1")
    hosts: dict[str, tuple[str, str, str]] = {}  # host -> (namespace, address/31, gateway)
    for index in range(1, 5):
        host = f"h200-node-00{index}"
        plan = yaml.safe_load(tree[f"hosts/h200/netplan/{host}.yaml"])["network"]["ethernets"]["mgmt0"]
        ns = _ns(namespaces, f"n{index}")
        port = f"swp{index}"
        subprocess.run(["ip", "link", "add", "mgmt0", "netns", ns, "type", "veth", "peer", "name", port, "netns",
                        leaf], check=True)
        gateway = plan["routes"][0]["via"]
        subprocess.run(["ip", "-n", leaf, "address", "add", f"{gateway}/31", "dev", port], check=True)
        subprocess.run(["ip", "-n", leaf, "link", "set", port, "up"], check=True)
        subprocess.run(["ip", "-n", ns, "link", "set", "mgmt0", "up"], check=True)
        hosts[host] = (ns, plan["addresses"][0], gateway)
    server_ns, server_address, server_gateway = hosts["h200-node-001"]
    assert server_address == f"{server}/31"
    subprocess.run(["ip", "-n", server_ns, "address", "add", server_address, "dev", "mgmt0"], check=True)
    subprocess.run(["ip", "-n", server_ns, "route", "add", "default", "via", server_gateway], check=True)
    config = json.loads(tree["dhcp/kea-dhcp4.conf"])
    config["Dhcp4"]["lease-database"] = {"type": "memfile", "persist": False}  # this test's leases only
    lease_script = tmp_path / "lease.sh"
    lease_script.write_text('#!/bin/sh\n[ "$1" = bound ] && echo "LEASE $ip/$mask $router"\nexit 0\n')
    lease_script.chmod(0o755)

    def leases(conf: dict[str, Any]) -> dict[str, str]:
        (tmp_path / "kea.conf").write_text(json.dumps(conf))
        env = {**os.environ, "KEA_PIDFILE_DIR": str(tmp_path), "KEA_LOCKFILE_DIR": str(tmp_path)}
        daemons = [subprocess.Popen(["ip", "netns", "exec", server_ns, kea, "-c", str(tmp_path / "kea.conf")],
                                    env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL),
                   subprocess.Popen(["ip", "netns", "exec", leaf, relay, "-4", "-d", *(a for p in ports
                                                                                    for a in ("-i", p)), server],
                                    stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)]
        try:
            time.sleep(1.5)
            got = {}
            for host, (ns, _, _) in hosts.items():
                if host == "h200-node-001":
                    continue
                done = _sh(ns, client, "-i", "mgmt0", "-n", "-q", "-f", "-s", str(lease_script), "-t", "3", "-T", "2")
                found = re.search(r"^LEASE (\S+) (\S+)$", done.stdout, re.M)
                got[host] = f"{found.group(1)} {found.group(2)}" if found else "none"
            return got
        finally:
            for daemon in daemons:
                daemon.terminate()
                daemon.wait(timeout=10)

    got = leases(config)
    assert got == {host: f"{address} {gateway}" for host, (_, address, gateway) in hosts.items()
                   if host != "h200-node-001"}
    short = copy.deepcopy(config)
    short["Dhcp4"]["subnet4"] = [s for s in short["Dhcp4"]["subnet4"] if s["user-context"]["host"] != "h200-node-003"]
    assert leases(short)["h200-node-003"] == "none"


def test_the_oob_dhcp_config_leases_a_bmc_an_address_of_its_pool_with_the_segment_gateway(
        namespaces: list[str], tmp_path: Path) -> None:
    """prod's dhcp/kea-dhcp4-oob.conf (management_plane.dhcp_server) passes `kea-dhcp4 -t`, and
    Kea running it on the server's address of the oob segment hands a client there (a BMC asking on
    its segment, no relay) an address of the second quarter with the segment's gateway and NTP."""
    kea, client = need("kea-dhcp4", "kea-dhcp4-server"), need("udhcpc", "udhcpc")
    tree = tree_of("prod")
    config = json.loads(tree["dhcp/kea-dhcp4-oob.conf"])
    (tmp_path / "oob.conf").write_text(tree["dhcp/kea-dhcp4-oob.conf"])
    checked = subprocess.run([kea, "-t", str(tmp_path / "oob.conf")], capture_output=True, text=True, timeout=60)
    assert checked.returncode == 0, checked.stdout[-2000:]
    assert "dhcp/kea-dhcp4-oob.conf" not in tree_of("dev")  # no dhcp_server: none rendered
    server, bmc = _ns(namespaces, "oobsrv"), _ns(namespaces, "bmc")
    subprocess.run(["ip", "link", "add", "oob0", "netns", server, "type", "veth", "peer", "name", "bmc0", "netns",
                    bmc], check=True)
    subprocess.run(["ip", "-n", server, "address", "add", "172.16.0.2/16", "dev", "oob0"], check=True)
    for ns, port in ((server, "oob0"), (bmc, "bmc0")):
        subprocess.run(["ip", "-n", ns, "link", "set", port, "up"], check=True)
    config["Dhcp4"]["lease-database"] = {"type": "memfile", "persist": False}  # this test's leases only
    (tmp_path / "kea.conf").write_text(json.dumps(config))
    lease_script = tmp_path / "lease.sh"
    lease_script.write_text('#!/bin/sh\n[ "$1" = bound ] && echo "LEASE $ip/$mask $router $ntpsrv"\nexit 0\n')
    lease_script.chmod(0o755)
    env = {**os.environ, "KEA_PIDFILE_DIR": str(tmp_path), "KEA_LOCKFILE_DIR": str(tmp_path)}
    daemon = subprocess.Popen(["ip", "netns", "exec", server, kea, "-c", str(tmp_path / "kea.conf")], env=env,
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        time.sleep(1.5)
        done = _sh(bmc, client, "-i", "bmc0", "-n", "-q", "-f", "-s", str(lease_script), "-t", "3", "-T", "2")
    finally:
        daemon.terminate()
        daemon.wait(timeout=10)
    found = re.search(r"^LEASE (\S+)/(\d+) (\S+) (\S+)$", done.stdout, re.M)
    assert found, done.stdout + done.stderr
    address = ipaddress.IPv4Address(found.group(1))
    assert address in ipaddress.IPv4Network("172.16.64.0/18") and found.group(2) == "16"
    assert (found.group(3), found.group(4)) == ("172.16.0.1", "172.16.0.1")
