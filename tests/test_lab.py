"""`lab`: the rendered fabric in real FRR (Debian's zebra, bgpd, bfdd), one network namespace per
device, checked against the design, failed on purpose, and removed without a trace.

Each test's lab has its own state directory (so its own namespace prefix), and every test
removes its lab in a `finally`. Root is needed; on a root machine without FRR, lldpd, ping or
nft the tests fail (CI installs them from .ci/apt-packages.txt) rather than skip.
"""

from __future__ import annotations

import ipaddress
import json
import os
import re
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from cluster.lab import runtime

ROOT = Path(__file__).resolve().parent.parent

pytestmark = [pytest.mark.slow,
              pytest.mark.skipif(os.geteuid() != 0, reason="needs root to create network namespaces")]


def lab(state: Path, *args: str, timeout: float = 240) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "GPU_CLUSTER_LAB_DIR": str(state)}
    return subprocess.run([sys.executable, "-m", "cluster", "lab", *args], cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=timeout)


def leftovers(state: Path) -> tuple[list[str], list[int]]:
    """Namespaces with the lab's prefix, and processes whose command names its daemon folder."""
    prefix = runtime.namespace_prefix(state)
    nodes = str(runtime.NODES_ROOT / f"{prefix}nodes").encode()
    namespaces = [name for name in subprocess.run(["ip", "netns", "list"], capture_output=True, text=True,
                                                  check=True).stdout.split() if name.startswith(prefix)]
    processes = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if nodes in (entry / "cmdline").read_bytes():
                    processes.append(int(entry.name))
            except OSError:
                continue
    return namespaces, processes


@pytest.fixture(scope="module")
def ready() -> None:
    assert not runtime.missing_requirements(), runtime.missing_requirements()


@pytest.fixture()
def state(tmp_path: Path, ready: None) -> Iterator[Path]:
    folder = tmp_path / "lab"
    try:
        yield folder
    finally:
        lab(folder, "down", "any")
        assert leftovers(folder) == ([], [])


def test_dev_comes_up_checks_clean_fails_as_whatif_says_and_goes_down(state: Path) -> None:
    limit = Path("/proc/sys/net/ipv4/neigh/default/gc_thresh3")
    before = limit.read_text()
    up = lab(state, "up", "dev", "--format", "json")
    assert up.returncode == 0, up.stderr
    summary = json.loads(up.stdout)
    # the fabric's 10 switches and 64 cables, the storage and management leaves and the 12 host ports on them
    assert (summary["switches"], summary["hosts"], summary["cables"]) == (12, 4, 76)
    # the out-of-band leaf and a cable to each switch's management port and each host's BMC
    assert (summary["oob_switches"], summary["oob_cables"]) == (1, 16)
    assert int(limit.read_text()) >= 65536  # every cable end holds an ARP entry, machine-wide
    assert summary["converge_s"] is not None

    again = lab(state, "up", "dev")
    assert again.returncode == 2 and "lab down" in again.stderr

    checked = lab(state, "check", "dev", "--format", "json")
    report = json.loads(checked.stdout)
    assert checked.returncode == 0, report["findings"][:5]
    assert report["counts"]["established"] == report["counts"]["sessions"] == report["counts"]["bfd_up"] == 64
    assert report["counts"]["prefixes"] > 0 and report["counts"]["lldp_cables"] == 76
    assert report["counts"]["host_network_probes"] > 0 and report["counts"]["nccl_sockets"] == 4
    assert report["counts"]["dhcp_leases"] == 3  # every host but the one that runs the DHCP server
    assert report["counts"]["oob_probes"] == 12  # every switch's management address, from the oob network
    # every BMC on its oob port; dev plans no oob DHCP server, so no BMC asks for a lease
    assert (report["counts"]["bmc_links"], report["counts"]["oob_dhcp_planned"], report["counts"]["bmc_leases"]) == (
        4, 0, 0)
    assert "no oob DHCP server planned" in lab(state, "check", "dev", "--no-lldp").stdout

    # Sessions torn down after the lab converged (BFD does so when a loaded machine starves its
    # daemons) are waited for and looked at again, not reported while they come back.
    spine = Path(json.loads((state / "state.json").read_text())["nodes"]) / "spine-001"
    subprocess.run(["vtysh", "--vty_socket", str(spine), "--config_dir", str(spine), "-c", "clear bgp *"],
                   check=True, capture_output=True, timeout=20)
    flapped = lab(state, "check", "dev", "--no-lldp", "--format", "json")
    assert flapped.returncode == 0, json.loads(flapped.stdout)["findings"][:3]

    for mode in ("link", "kill", "silent"):
        failed = lab(state, "fail", "dev", "spine-001", "--mode", mode, "--format", "json")
        result = json.loads(failed.stdout)
        assert failed.returncode == 0, result["findings"]
        assert result["withdraw_s"] is not None, mode
        # The surviving uplinks the leaves' kernels forward on give whatif's ratio.
        assert result["whatif_ratio"] and set(result["whatif_ratio"].values()) == {
            max(result["measured_ratio"].values())}
        # A silent spine is noticed by BFD, well inside BGP's 9 s hold time: within the design's bound.
        assert result["bound_loss_s"] == 2.0 and result["worst_loss_s"] <= 2.0, result["worst_loss_s"]
        assert lab(state, "restore", "dev").returncode == 0
        after = lab(state, "check", "dev", "--no-lldp", "--format", "json")
        assert after.returncode == 0, json.loads(after.stdout)["findings"][:3]

    # One cable of a bundle: the leaf keeps its other uplinks, as whatif's ratio for that cable says.
    cable = lab(state, "fail", "dev", "leaf-001-r0~spine-002", "--mode", "silent", "--format", "json")
    result = json.loads(cable.stdout)
    assert cable.returncode == 0, result["findings"]
    assert result["whatif_ratio"] == {"leaf-001-r0": max(result["measured_ratio"].values())}
    assert lab(state, "restore", "dev").returncode == 0

    down = lab(state, "down", "dev")
    assert down.returncode == 0 and "removed 21 namespaces" in down.stdout  # 12 switches, 4 hosts, 4 BMCs, 1 oob
    assert leftovers(state) == ([], [])
    assert lab(state, "check", "dev").returncode == 2
    assert limit.read_text() == before


def _break(tree: Path) -> dict[str, str]:
    """Three faults in a rendered dev tree: a wrong ASN, a missing neighbor, one 1500-byte port."""
    asn_file = tree / "switches/leaf-001-r0/frr.conf"
    text = asn_file.read_text()
    asn_file.write_text(re.sub(r"^router bgp (\d+)", r"router bgp 4200009999", text, count=1, flags=re.MULTILINE))
    neighbor_file = tree / "switches/leaf-001-r1/frr.conf"
    text = neighbor_file.read_text()
    missing = re.search(r"^ neighbor (\S+) peer-group FABRIC$", text, re.MULTILINE)
    assert missing
    neighbor_file.write_text("".join(line + "\n" for line in text.splitlines()
                                     if not line.startswith(f" neighbor {missing.group(1)} ")))
    db_file = tree / "switches/leaf-001-r4/config_db.json"
    db = json.loads(db_file.read_text())
    uplink = next(key.split("|")[0] for key in db["INTERFACE"] if key.split("|")[-1].startswith("10.64."))
    db["PORT"][uplink]["mtu"] = "1500"
    db_file.write_text(json.dumps(db, indent=4))
    # a spine's downlink at 1500: the cable's finding is the spine's file, not the leaf's below it
    spine_file = tree / "switches/spine-002/config_db.json"
    spine = json.loads(spine_file.read_text())
    downlink = next(port for port, entry in spine["PORT"].items() if entry["description"].startswith("leaf-001-r5 "))
    spine["PORT"][downlink]["mtu"] = "1500"
    spine_file.write_text(json.dumps(spine, indent=4))
    # spine-001 filters leaf-001-r6's loopback toward leaf-001-r7: the finding is spine-001's, not the victim's
    spine_one = json.loads((tree / "switches/spine-001/config_db.json").read_text())
    toward = next(port for port, entry in spine_one["PORT"].items() if entry["description"].startswith("leaf-001-r7 "))
    own = next(key.split("|")[1] for key in spine_one["INTERFACE"] if key.startswith(f"{toward}|"))
    victim = str(next(address for address in ipaddress.ip_interface(own).network if str(address) != own.split("/")[0]))
    lost = next(key.split("|")[1] for key in json.loads((tree / "switches/leaf-001-r6/config_db.json").read_text())[
        "LOOPBACK_INTERFACE"] if "|" in key)
    frr = tree / "switches/spine-001/frr.conf"
    text = frr.read_text().replace(" address-family ipv4 unicast\n",
                                   f" address-family ipv4 unicast\n  neighbor {victim} route-map DROPONE out\n", 1)
    frr.write_text(text + f"ip prefix-list DROPONE seq 5 deny {lost}\nip prefix-list DROPONE seq 10 permit 0.0.0.0/0 "
                   "le 32\nroute-map DROPONE permit 10\n match ip address prefix-list DROPONE\n")
    # the host script: rail 1 loses its source rule, rail 2 its next hop in the fabric's multipath route
    (script,) = tree.glob("hosts/*/qos.sh")
    lines = script.read_text().splitlines()
    kept = [line for line in lines if line not in ('ip rule add from "${ADDRS[1]%/*}" table 101 priority 101',
                                                   'NEXTHOPS+=(nexthop via "${GWS[2]}" dev "$dev")')]
    assert len(kept) == len(lines) - 2
    script.write_text("\n".join(kept) + "\n")
    # the cabling plan: leaf-001-r2's and leaf-001-r3's first uplinks crossed at spine-001
    plan = tree / "cabling.csv"
    rows = plan.read_text().splitlines()
    crossed = [index for index, row in enumerate(rows)
               if re.search(r",leaf-001-r[23],p29,spine-001,", row)]
    first, second = (rows[index].split(",") for index in crossed)
    first[5:7], second[5:7], first[11], second[11] = second[5:7], first[5:7], second[11], first[11]
    rows[crossed[0]], rows[crossed[1]] = ",".join(first), ",".join(second)
    plan.write_text("\n".join(rows) + "\n")
    # host networking: node-002's management address off its /31, node-003's storage route in the
    # main table gone (its storage leaves by its second port), node-004's first storage port at 1500
    netplan = script.parent / "netplan"
    _edit(netplan / "h200-node-002.yaml", "addresses: [10.176.0.2/31]", "addresses: [10.176.0.12/31]")
    _edit(netplan / "h200-node-003.yaml", "          via: 10.160.0.9\n          metric: 100\n", "")
    _edit(netplan / "h200-node-003.yaml", "        - to: 10.160.0.0/12\n        - to:", "        - to:")
    _edit(netplan / "h200-node-004.yaml", "mtu: 9000", "mtu: 1500")
    # the DHCP server's configuration without node-003's subnet: its request through the relay goes unanswered
    kea = tree / "dhcp/kea-dhcp4.conf"
    config = json.loads(kea.read_text())
    config["Dhcp4"]["subnet4"] = [subnet for subnet in config["Dhcp4"]["subnet4"]
                                  if subnet["user-context"]["host"] != "h200-node-003"]
    kea.write_text(json.dumps(config, indent=2))
    # management plane: leaf-001-r5's address off the oob plan, leaf-001-r6 without its management
    # VRF, the management leaf's gateway another than the design's
    for name, edit in (("leaf-001-r5", "address"), ("leaf-001-r6", "vrf")):
        path = tree / f"switches/{name}/config_db.json"
        db = json.loads(path.read_text())
        if edit == "address":
            (key,) = db["MGMT_INTERFACE"]
            db["MGMT_INTERFACE"] = {"eth0|172.16.128.99/16": db["MGMT_INTERFACE"][key]}
        else:
            del db["MGMT_VRF_CONFIG"]
        path.write_text(json.dumps(db, indent=4))
    _edit(tree / "switches/mgmt-leaf-001/nvue.sh", "nv set interface eth0 ip gateway 172.16.0.1",
          "nv set interface eth0 ip gateway 172.16.0.9")
    return {"neighbor": missing.group(1), "port": uplink, "spine_port": downlink, "filtered": lost,
            "script": script.relative_to(tree).as_posix()}


def _edit(path: Path, old: str, new: str) -> None:
    """Replace the first `old` of a rendered file (which must hold it) with `new`."""
    text = path.read_text()
    assert old in text, (path, old)
    path.write_text(text.replace(old, new, 1))


def test_broken_configs_give_the_finding_that_names_them(state: Path, tmp_path: Path) -> None:
    tree = tmp_path / "rendered"
    rendered = subprocess.run([sys.executable, "-m", "cluster", "render", "dev", "--out", str(tree)], cwd=ROOT,
                              capture_output=True, text=True, timeout=120)
    assert rendered.returncode == 0, rendered.stderr
    broken = _break(tree)
    up = lab(state, "up", "dev", "--from", str(tree), "--timeout", "20")
    assert up.returncode in (0, 1), up.stderr  # 1: a missing neighbor never converges
    checked = lab(state, "check", "dev", "--format", "json")
    assert checked.returncode == 1
    findings = json.loads(checked.stdout)["findings"]
    by_rule: dict[str, list[dict[str, str]]] = {}
    for finding in findings:
        by_rule.setdefault(finding["rule"], []).append(finding)
    assert any(f["path"] == "switches/leaf-001-r0/frr.conf" and "AS 4200009999" in f["message"]
               for f in by_rule["LAB-ASN"])
    assert any(f["path"] == "switches/leaf-001-r1/frr.conf" and broken["neighbor"] in f["message"]
               and "no BGP neighbor configured" in f["message"] for f in by_rule["LAB-BGP"])
    assert any(f["path"] == "switches/leaf-001-r4/config_db.json" and broken["port"] in f["message"]
               for f in by_rule["LAB-MTU"])
    spine_mtu = [f for f in by_rule["LAB-MTU"] if f"spine-002 {broken['spine_port']}" in f["message"]]
    assert spine_mtu and {f["path"] for f in spine_mtu} == {"switches/spine-002/config_db.json"}
    assert "spine-002 sets MTU 1500, the design 9216" in spine_mtu[0]["message"]
    assert not any(f["path"] == "switches/leaf-001-r5/config_db.json" for f in by_rule["LAB-MTU"])
    # The missing session also narrows leaf-001-r1's ECMP width, which the route check sees.
    assert any("leaf-001-r1 reaches" in f["message"] for f in by_rule["LAB-ROUTE"])
    # spine-001's filter is named at spine-001, the leaf it starves gets no maximum-paths hint for it.
    filtered = [f for f in by_rule["LAB-ROUTE"] if broken["filtered"] in f["message"] and "leaf-001-r7" in f["message"]]
    assert filtered and {f["path"] for f in filtered} == {"switches/spine-001/frr.conf"}, filtered
    assert "leaf-001-r7 receives no path" in filtered[0]["message"]
    # The host's rail 1 no longer leaves on its own rail; rail 2's leaf is missing from its multipath route.
    hosts = by_rule["LAB-RAIL"]
    assert {f["path"] for f in hosts} == {broken["script"]}
    assert any(" rail 1 (" in f["message"] and "on its own rail" in f["message"] for f in hosts)
    assert any("spreads it over every rail's leaf" in f["message"] for f in hosts)
    assert not any(" rail 2 (" in f["message"] for f in hosts)  # its own source rule still holds
    # The crossed rows of cabling.csv are wired as written: LLDP shows each crossed port.
    lldp = " ".join(f["message"] for f in by_rule["LAB-LLDP"])
    assert "leaf-001-r2" in lldp and "leaf-001-r3" in lldp, by_rule["LAB-LLDP"]
    # Host networking: each fault once, at the host's netplan file (or the NCCL script it starves).
    hostnet = {f["path"]: f["message"] for f in by_rule["LAB-HOSTNET"]}
    assert set(hostnet) == {"hosts/h200/netplan/h200-node-002.yaml", "hosts/h200/netplan/h200-node-003.yaml"}, hostnet
    assert "mgmt0 (10.176.0.2) does not reach its leaf mgmt-leaf-001" in hostnet["hosts/h200/netplan/h200-node-002.yaml"]
    assert "with no source address via 10.160.0.11 on stor1; the design sends it on its storage port stor0" in \
        hostnet["hosts/h200/netplan/h200-node-003.yaml"]
    assert any(f["path"] == "hosts/h200/netplan/h200-node-004.yaml" and "h200-node-004 sets MTU 1500, the design 9000"
               in f["message"] for f in by_rule["LAB-MTU"])
    assert [f["message"].split(":")[0] for f in by_rule["LAB-NCCL"]] == ["h200-node-002"]
    # node-003's subnet is gone; node-002 still gets its planned lease, whatever its netplan file says
    assert [(f["path"], f["message"].split(" gets ")[0]) for f in by_rule["LAB-DHCP"]] == [
        ("dhcp/kea-dhcp4.conf", "h200-node-003 mgmt0")]
    assert "the design hands it 10.176.0.4/31 with gateway 10.176.0.5" in str(by_rule["LAB-DHCP"])
    # The management plane: each fault once, at the switch's file.
    oob = {f["path"]: f["message"] for f in by_rule["LAB-OOB"]}
    assert set(oob) == {"switches/leaf-001-r5/config_db.json", "switches/leaf-001-r6/config_db.json",
                        "switches/mgmt-leaf-001/nvue.sh"}, by_rule["LAB-OOB"]
    assert "management address 172.16.128.6/16 does not answer from the oob network (oob-leaf-001, 172.16.240.1); " \
        "its file sets 172.16.128.99/16 on eth0" in oob["switches/leaf-001-r5/config_db.json"]
    assert "management port eth0 is in no VRF" in oob["switches/leaf-001-r6/config_db.json"]
    assert "via 172.16.0.9 on eth0; the design's gateway is 172.16.0.1" in oob["switches/mgmt-leaf-001/nvue.sh"]
    named = {f["path"] for f in findings if f["rule"] in ("LAB-ASN", "LAB-BGP")}
    assert all(any(device in path for device in ("leaf-001-r0", "leaf-001-r1", "leaf-001-r2", "leaf-001-r3",
                                                 "spine-00")) for path in named)


def test_a_fabric_without_bfd_fails_check_and_a_silent_spine_outlasts_the_bound(state: Path, tmp_path: Path) -> None:
    """BFD taken off every switch: `lab check` names each session (LAB-BFD), and a silent spine is
    noticed only by BGP's hold timer, so `lab fail` exits 1 (LAB-CONVERGE) instead of 0."""
    tree = tmp_path / "rendered"
    rendered = subprocess.run([sys.executable, "-m", "cluster", "render", "dev", "--out", str(tree)], cwd=ROOT,
                              capture_output=True, text=True, timeout=120)
    assert rendered.returncode == 0, rendered.stderr
    for conf in tree.glob("switches/*/frr.conf"):
        text = conf.read_text()
        conf.write_text("".join(line + "\n" for line in text.splitlines() if not re.match(r" neighbor \S+ bfd", line)))
    assert lab(state, "up", "dev", "--from", str(tree)).returncode == 0
    checked = lab(state, "check", "dev", "--no-lldp", "--format", "json")
    report = json.loads(checked.stdout)
    assert checked.returncode == 1 and report["counts"]["bfd_up"] == 0
    bfd = [finding for finding in report["findings"] if finding["rule"] == "LAB-BFD"]
    assert len(bfd) == 64 and all("no BFD session" in finding["message"] for finding in bfd)
    assert {finding["rule"] for finding in report["findings"]} == {"LAB-BFD"}
    failed = lab(state, "fail", "dev", "spine-001", "--mode", "silent", "--format", "json")
    result = json.loads(failed.stdout)
    assert failed.returncode == 1
    assert result["worst_loss_s"] > result["bound_loss_s"] == 2.0
    assert [finding["rule"] for finding in result["findings"]][:1] == ["LAB-CONVERGE"]


def test_an_nvue_tree_runs_as_its_script_says_and_its_edits_reach_the_lab(state: Path, tmp_path: Path) -> None:
    """prod's switches are NVUE: the lab runs each nvue.sh translated (not the routing plan), so an
    edited ASN, ECMP width or port MTU in the script is found at that script."""
    tree = tmp_path / "rendered"
    rendered = subprocess.run([sys.executable, "-m", "cluster", "render", "prod", "--out", str(tree)], cwd=ROOT,
                              capture_output=True, text=True, timeout=300)
    assert rendered.returncode == 0, rendered.stderr
    edits = {"leaf-001-r0": ("nv set router bgp autonomous-system 4200001001", "nv set router bgp autonomous-system 4200009999"),
             "leaf-001-r1": ("multipaths ebgp 64", "multipaths ebgp 1"),
             "spine-001": ("nv set interface swp1s0 link mtu 9216", "nv set interface swp1s0 link mtu 1500")}
    for switch, (old, new) in edits.items():
        script = tree / f"switches/{switch}/nvue.sh"
        text = script.read_text()
        assert old in text
        script.write_text(text.replace(old, new, 1))
    # the oob DHCP server's pool moved into the segment's static first quarter, its router another
    kea = tree / "dhcp/kea-dhcp4-oob.conf"
    config = json.loads(kea.read_text())
    (subnet,) = config["Dhcp4"]["subnet4"]
    subnet["pools"] = [{"pool": "172.16.32.0 - 172.16.32.255"}]
    subnet["option-data"] = [{"name": "routers", "data": "172.16.0.9"}]
    kea.write_text(json.dumps(config, indent=2))
    # node-003's and node-004's BMC rows crossed at the oob leaf: wired as written
    plan = tree / "cabling.csv"
    rows = plan.read_text().splitlines()
    crossed = [index for index, row in enumerate(rows) if re.search(r",h200-node-00[34],bmc,oob-leaf-001,", row)]
    first, second = (rows[index].split(",") for index in crossed)
    first[6], second[6], first[11], second[11] = second[6], first[6], second[11], first[11]
    rows[crossed[0]], rows[crossed[1]] = ",".join(first), ",".join(second)
    plan.write_text("\n".join(rows) + "\n")
    up = lab(state, "up", "prod", "--from", str(tree), "--timeout", "60", "--format", "json", timeout=600)
    assert up.returncode in (0, 1), up.stderr
    assert "FRR equivalent" not in up.stdout
    checked = lab(state, "check", "prod", "--no-lldp", "--format", "json", timeout=600)
    assert checked.returncode == 1
    findings = json.loads(checked.stdout)["findings"]
    paths = {(f["rule"], f["path"]) for f in findings}
    assert ("LAB-ASN", "switches/leaf-001-r0/nvue.sh") in paths
    assert any(f["rule"] == "LAB-ROUTE" and f["path"] == "switches/leaf-001-r1/nvue.sh" and "over 1 next hops"
               in f["message"] for f in findings)
    assert any(f["rule"] == "LAB-MTU" and f["path"] == "switches/spine-001/nvue.sh" and "swp1s0" in f["message"]
               for f in findings)
    bmc = [f for f in findings if f["rule"] == "LAB-BMC"]
    cabling = {f["message"].split("'s BMC")[0]: f["message"] for f in bmc if f["path"] == "cabling.csv"}
    assert set(cabling) == {"h200-node-003", "h200-node-004"}, cabling
    assert "is cabled to oob-leaf-001 swp4; the design cables it to oob-leaf-001 swp3" in cabling["h200-node-003"]
    # every BMC leases from the moved pool with the other router: each named at the server's file
    leases = [f for f in bmc if f["path"] == "dhcp/kea-dhcp4-oob.conf"]
    assert len(leases) == 62 and all("outside the design's pool 172.16.64.0 - 172.16.127.255" in f["message"]
                                     and "router 172.16.0.9, not management_plane.gateway 172.16.0.1" in f["message"]
                                     for f in leases), leases[:2]
    assert len(bmc) == 64


def test_prod_bmcs_lease_from_the_oob_dhcp_server_as_designed(state: Path) -> None:
    """prod sets management_plane.dhcp_server: the server runs the rendered kea-dhcp4-oob.conf on the
    oob network and every host's BMC gets a lease of the design's pool, answering from the root oob
    switch; the whole lab checks clean."""
    up = lab(state, "up", "prod", "--timeout", "120", "--format", "json", timeout=600)
    assert up.returncode == 0, up.stderr
    assert json.loads(up.stdout)["oob_cables"] == 84  # 16 switches' management ports, 64 BMCs, 4 oob uplinks
    checked = lab(state, "check", "prod", "--no-lldp", "--format", "json", timeout=600)
    report = json.loads(checked.stdout)
    assert checked.returncode == 0, report["findings"][:5]
    counts = report["counts"]
    assert (counts["bmc_links"], counts["oob_dhcp_planned"], counts["bmc_leases"]) == (64, 1, 64)
    # each BMC keeps its lease, and asking again (a second check) renews it
    again = lab(state, "check", "prod", "--no-lldp", "--format", "json", timeout=600)
    assert again.returncode == 0 and json.loads(again.stdout)["counts"]["bmc_leases"] == 64, again.stdout[-2000:]


def test_an_eos_tree_runs_as_its_config_says_and_its_edits_reach_the_lab(state: Path, tmp_path: Path) -> None:
    """An EOS design's switches run each eos.cfg translated: a leaf's ECMP cut to 1 and a spine port
    at MTU 1500 are found at their eos.cfg, and a clean tree checks clean, LLDP included (each port
    by its EOS name, Ethernet7/1, though its netdev is Ethernet7_1)."""
    stack = str(ROOT / "tests/golden/stacks/eos.yaml")
    tree = tmp_path / "rendered"
    rendered = subprocess.run([sys.executable, "-m", "cluster", "render", stack, "--out", str(tree)], cwd=ROOT,
                              capture_output=True, text=True, timeout=300)
    assert rendered.returncode == 0, rendered.stderr
    up = lab(state, "up", stack, "--from", str(tree), "--format", "json")
    assert up.returncode == 0, up.stderr
    clean = lab(state, "check", stack, "--format", "json")
    assert clean.returncode == 0, json.loads(clean.stdout)["findings"][:3]
    assert json.loads(clean.stdout)["counts"]["lldp_cables"] > 0
    assert lab(state, "down", stack).returncode == 0
    edits = {"leaf-001-r1": ("   maximum-paths 2 ecmp 2", "   maximum-paths 1 ecmp 1"),
             "spine-001": ("interface Ethernet1/1\n   description leaf-001-r0 Ethernet7/1\n   mtu 9216",
                           "interface Ethernet1/1\n   description leaf-001-r0 Ethernet7/1\n   mtu 1500")}
    for switch, (old, new) in edits.items():
        config = tree / f"switches/{switch}/eos.cfg"
        text = config.read_text()
        assert old in text
        config.write_text(text.replace(old, new, 1))
    assert lab(state, "up", stack, "--from", str(tree)).returncode == 0
    checked = lab(state, "check", stack, "--no-lldp", "--format", "json")
    assert checked.returncode == 1
    findings = json.loads(checked.stdout)["findings"]
    assert any(f["rule"] == "LAB-ROUTE" and f["path"] == "switches/leaf-001-r1/eos.cfg" and "over 1 next hops"
               in f["message"] for f in findings)
    assert any(f["rule"] == "LAB-MTU" and f["path"] == "switches/spine-001/eos.cfg" for f in findings)


def test_two_leaf_groups_of_eight_rails_converge_and_a_spine_fails_as_whatif_says(state: Path) -> None:
    up = lab(state, "up", "article-c", "--slice", "all", "--format", "json")  # more than 2 cores hold without it
    assert up.returncode == 0, up.stderr
    summary = json.loads(up.stdout)
    # 24 of the fabric; a storage leaf, two management leaves and their management spine
    assert summary["switches"] == 28 and summary["hosts"] == 64
    checked = lab(state, "check", "article-c", "--format", "json")
    assert checked.returncode == 0, json.loads(checked.stdout)["findings"][:5]
    failed = lab(state, "fail", "article-c", "spine-003", "--format", "json")
    result = json.loads(failed.stdout)
    assert failed.returncode == 0, result["findings"]
    assert set(result["whatif_ratio"].values()) == {max(result["measured_ratio"].values())}


def test_a_slice_holds_one_leaf_group_with_every_spine_and_checks_clean(state: Path) -> None:
    up = lab(state, "up", "article-c", "--slice", "groups=1", "--format", "json")
    assert up.returncode == 0, up.stderr
    summary = json.loads(up.stdout)
    assert summary["switches"] == 19 and summary["hosts"] == 32  # 16 of the fabric, 3 of storage and management
    assert "leaf groups 1-1 of 2" in summary["slice"]
    checked = lab(state, "check", "article-c", "--no-lldp", "--format", "json")
    assert checked.returncode == 0, json.loads(checked.stdout)["findings"][:5]


def test_down_removes_a_lab_whose_up_was_killed_half_way(state: Path) -> None:
    env = {**os.environ, "GPU_CLUSTER_LAB_DIR": str(state)}
    up = subprocess.Popen([sys.executable, "-m", "cluster", "lab", "up", "dev"], cwd=ROOT, env=env,
                          stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        for _ in range(600):  # until daemons run: namespaces, cables and some FRR exist
            namespaces, processes = leftovers(state)
            if namespaces and processes:
                break
            time.sleep(0.05)
        else:
            pytest.fail("lab up created nothing within 30 s")
    finally:
        up.kill()
        up.wait()
    assert leftovers(state)[0], "the killed lab left nothing to remove: the test proves nothing"
    assert lab(state, "up", "dev").returncode == 2  # the half-built lab is still recorded
    down = lab(state, "down", "dev")
    assert down.returncode == 0 and "removed" in down.stdout
    assert leftovers(state) == ([], [])


def test_up_refuses_a_namespace_it_did_not_create_and_leaves_it_alone(state: Path) -> None:
    foreign = runtime.namespace_prefix(state) + "spine-001"
    subprocess.run(["ip", "netns", "add", foreign], check=True)
    try:
        up = lab(state, "up", "dev")
        assert up.returncode == 2 and f"network namespace {foreign} exists" in up.stderr
        assert foreign in subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout
        assert lab(state, "status", "dev").stdout.startswith("lab status: no lab is up")
    finally:
        subprocess.run(["ip", "netns", "del", foreign], check=False)
