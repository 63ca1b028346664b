"""`lab` without a lab: what it would build (from the rendered files), what it expects (from the
design alone), slices, memory refusals and usage errors. No root needed."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path

import pytest

from cluster.artifacts import render_tree
from cluster.cli import main
from cluster.dialects import Management
from cluster.lab import model
from cluster.lab.expect import design
from cluster.lab.model import OOB_NOTE, LabPlan, Planned, Slice, build_plan, slice_devices
from cluster.pipeline import Valid, validate
from cluster.topology import FABRIC
from tests.conftest import ROOT


@pytest.fixture(scope="module")
def dev():  # type: ignore[no-untyped-def]
    result = validate("dev")
    assert isinstance(result, Valid)
    return result


def _built(planned: Planned) -> LabPlan:
    assert planned.findings == () and planned.plan is not None, planned.findings
    return planned.plan


def test_plan_takes_addresses_mtus_and_routing_from_the_rendered_files(dev) -> None:  # type: ignore[no-untyped-def]
    files = render_tree(dev.spec, dev.topology)
    plan = _built(build_plan(dev.spec, dev.topology, files, Slice()))
    # the fabric's 10 switches and 64 cables, the storage and management leaves and the 12 host ports on them
    assert (len(plan.switches), len(plan.hosts), len(plan.cables)) == (12, 4, 76)
    leaf = next(switch for switch in plan.switches if switch.name == "leaf-001-r0")
    assert leaf.frr_conf == files["switches/leaf-001-r0/frr.conf"]
    db = json.loads(files["switches/leaf-001-r0/config_db.json"])
    for interface in leaf.interfaces:
        assert interface.mtu == int(db["PORT"][interface.port]["mtu"])
        assert f"{interface.port}|{interface.address}" in db["INTERFACE"]
    host = plan.hosts[0]
    assert "ip rule add from" in host.routing and "RAILS=(rail0 rail1" in host.routing
    # its management and storage ports as its netplan file sets them, in `ip -batch` form
    ports = {i.name: (i.network, i.address, i.mtu) for i in host.interfaces if i.network != "fabric"}
    assert ports == {"mgmt0": ("management", "10.176.0.0/31", 1500), "stor0": ("storage", "10.160.0.0/31", 9000),
                     "stor1": ("storage", "10.160.0.2/31", 9000)}
    assert host.network.splitlines()[:2] == ["address add 10.176.0.0/31 dev mgmt0",
                                             "address add 10.160.0.0/31 dev stor0"]
    assert "route add default via 10.176.0.1 dev mgmt0 table 1000" in host.network
    assert "route add 10.160.0.0/12 via 10.160.0.3 dev stor1 metric 101" in host.network
    assert "rule add from 10.160.0.2 table 2001 priority 2001" in host.network
    assert host.nccl_socket == files["hosts/h200/nccl-socket.sh"]
    assert LabPlan.from_dict(json.loads(json.dumps(plan.to_dict()))) == plan

    edited = dict(files)
    edited["switches/leaf-001-r0/config_db.json"] = files["switches/leaf-001-r0/config_db.json"].replace(
        '"mtu": "9216"', '"mtu": "1500"', 1)
    changed = _built(build_plan(dev.spec, dev.topology, edited, Slice()))
    mtus = {i.mtu for s in changed.switches if s.name == "leaf-001-r0" for i in s.interfaces}
    assert mtus == {1500, 9216}


def test_the_lab_is_wired_as_the_cabling_plan_says_crossed_rows_included(dev) -> None:  # type: ignore[no-untyped-def]
    """Two rows of cabling.csv crossed (leaf-001-r0's first uplink and leaf-001-r1's): the lab's
    veths follow the file a technician follows, not the design, so `lab check` can show it."""
    files = render_tree(dev.spec, dev.topology)
    rows = files["cabling.csv"].splitlines()
    first = next(i for i, row in enumerate(rows) if row.startswith("C") and ",leaf-001-r0,p29,spine-001,p1," in row)
    second = next(i for i, row in enumerate(rows) if ",leaf-001-r1,p29,spine-001,p3," in row)
    a, b = rows[first].split(","), rows[second].split(",")
    a[5:7], b[5:7], a[11], b[11] = b[5:7], a[5:7], b[11], a[11]
    rows[first], rows[second] = ",".join(a), ",".join(b)
    crossed = _built(build_plan(dev.spec, dev.topology, {**files, "cabling.csv": "\n".join(rows) + "\n"}, Slice()))
    straight = _built(build_plan(dev.spec, dev.topology, files, Slice()))
    moved = set(crossed.cables) ^ set(straight.cables)
    assert {(cable.a, cable.a_if, cable.b, cable.b_if) for cable in moved} == {
        ("leaf-001-r0", "Ethernet112", "spine-001", "Ethernet0"), ("leaf-001-r1", "Ethernet112", "spine-001", "Ethernet8"),
        ("leaf-001-r0", "Ethernet112", "spine-001", "Ethernet8"), ("leaf-001-r1", "Ethernet112", "spine-001", "Ethernet0")}


def test_an_nvue_script_is_translated_and_a_line_it_does_not_know_is_refused() -> None:
    """prod's switches run their nvue.sh as the lab translates it (the ECMP width, BFD timers and
    prefix lists it sets); a line the translation does not know is a LAB-INPUT finding at it."""
    prod = validate("prod")
    assert isinstance(prod, Valid)
    files = render_tree(prod.spec, prod.topology)
    plan = _built(build_plan(prod.spec, prod.topology, files, Slice()))
    leaf = next(switch for switch in plan.switches if switch.name == "leaf-001-r0")
    assert leaf.source.startswith("switches/leaf-001-r0/nvue.sh")
    assert "  maximum-paths 64" in leaf.frr_conf and " neighbor 10.64.0.1 bfd profile BFD1" in leaf.frr_conf
    assert "ip prefix-list PLAN seq 30 permit 10.128.0.0/11 ge 31 le 31" in leaf.frr_conf
    script = "switches/leaf-001-r0/nvue.sh"
    edited = files[script].replace("nv config apply -y", "nv set router ospf enable on\nnv config apply -y")
    planned = build_plan(prod.spec, prod.topology, {**files, script: edited}, Slice())
    assert planned.plan is None
    assert [(f.rule, f.path) for f in planned.findings] == [("LAB-INPUT", script)]
    assert "'nv set router ospf enable on' is a setting the lab does not translate" in planned.findings[0].message


def test_an_eos_config_is_translated_and_a_line_it_does_not_know_is_refused() -> None:
    eos = validate(str(ROOT / "tests/golden/stacks/eos.yaml"))
    assert isinstance(eos, Valid)
    files = render_tree(eos.spec, eos.topology)
    plan = _built(build_plan(eos.spec, eos.topology, files, Slice()))
    leaf = next(switch for switch in plan.switches if switch.name == "leaf-001-r0")
    assert leaf.source.startswith("switches/leaf-001-r0/eos.cfg")
    assert plan.notes == ("Arista EOS switches run switches/<switch>/eos.cfg "
                          "(each line translated: ports, BGP, BFD, DHCP relay)", OOB_NOTE)
    # the management port as eos.cfg sets it: Management1 in VRF MGMT, its VRF's default route
    assert leaf.management == Management("Management1", "172.16.128.1/16", "172.16.0.1", "MGMT")
    # every switch's management port and every host's BMC
    assert [(bridge.name, len(bridge.ports)) for bridge in plan.bridges] == [
        ("oob-leaf-001", len(plan.switches) + len(plan.hosts))]
    assert "  maximum-paths 2" in leaf.frr_conf and "  neighbor 10.64.0.1 maximum-prefix 12000" in leaf.frr_conf
    assert {(i.port, i.mtu) for i in leaf.interfaces} == {("Ethernet1/1", 9216), ("Ethernet2/1", 9216),
                                                          ("Ethernet7/1", 9216), ("Ethernet8/1", 9216)}
    config = "switches/leaf-001-r0/eos.cfg"
    # a routed port that loses `no switchport` is a switchport again: no address in the lab
    edited = files[config].replace("   no switchport\n", "", 1)
    port = _built(build_plan(eos.spec, eos.topology, {**files, config: edited}, Slice()))
    assert next(i.address for s in port.switches if s.name == "leaf-001-r0" for i in s.interfaces) is None
    edited = files[config].replace("ip routing\n", "ip routing\nrouter ospf 1\n")
    planned = build_plan(eos.spec, eos.topology, {**files, config: edited}, Slice())
    assert [(f.rule, f.path) for f in planned.findings] == [("LAB-INPUT", config)]
    assert "'router ospf 1' is a setting the lab does not translate" in planned.findings[0].message


def test_an_eos_config_with_every_management_service_is_translated() -> None:
    """AAA, TACACS+, DNS, syslog, SNMP (traps too) and telemetry's gRPC tunnels are management plane
    the lab leaves out: an eos.cfg holding them builds, its management port still read."""
    import yaml

    data = yaml.safe_load((ROOT / "tests/golden/stacks/eos.yaml").read_text())["config"]["gpu-cluster:cluster"]
    data["management_plane"] = {"syslog_servers": ["192.0.2.20"], "dns_servers": ["192.0.2.53"],
                                "tacacs_servers": ["192.0.2.49"], "snmp": {"trap_receivers": ["192.0.2.162"]},
                                "telemetry": {"grpc_tunnel": ["172.16.0.72:57400"]}}
    from cluster.pipeline import validate_mapping

    eos = validate_mapping("eos", data)
    assert isinstance(eos, Valid) and eos.ok
    files = render_tree(eos.spec, eos.topology)
    assert "tacacs-server host 192.0.2.49" in files["switches/leaf-001-r0/eos.cfg"]
    assert "      destination 172.16.0.72 port 57400\n" in files["switches/leaf-001-r0/eos.cfg"]
    plan = _built(build_plan(eos.spec, eos.topology, files, Slice()))
    assert all(switch.management is not None for switch in plan.switches)


def test_the_oob_network_holds_each_switch_management_port_as_its_files_set_it(dev) -> None:  # type: ignore[no-untyped-def]
    """dev's switches reach the out-of-band leaf by their management ports (cabling.csv's switch-mgmt
    rows); each port carries what its files set (SONiC MGMT_INTERFACE and MGMT_VRF_CONFIG, NVUE eth0
    lines), and an edit of those lines reaches the plan."""
    files = render_tree(dev.spec, dev.topology)
    plan = _built(build_plan(dev.spec, dev.topology, files, Slice()))
    assert [(bridge.name, bridge.address, len(bridge.ports), bridge.links) for bridge in plan.bridges] == [
        ("oob-leaf-001", "172.16.240.1/16", 16, ())]  # 12 switches' management ports, 4 BMCs
    assert {(cable.a, cable.a_if, cable.b) for cable in plan.oob_cables} == {
        (switch.name, "eth0", "oob-leaf-001") for switch in plan.switches} | {
        (f"{host.name}-bmc", "bmc", "oob-leaf-001") for host in plan.hosts}
    managed = {switch.name: switch.management for switch in plan.switches}
    assert managed["leaf-001-r0"] == Management("eth0", "172.16.128.1/16", "172.16.0.1", "mgmt")
    assert managed["mgmt-leaf-001"] == Management("eth0", "172.16.232.1/16", "172.16.0.1", "mgmt")
    db_path, script = "switches/spine-001/config_db.json", "switches/stor-leaf-001/nvue.sh"
    db = json.loads(files[db_path])
    del db["MGMT_VRF_CONFIG"]
    edited = {**files, db_path: json.dumps(db),
              script: files[script].replace("nv set interface eth0 ip vrf mgmt\n", "")}
    changed = {s.name: s.management for s in _built(build_plan(dev.spec, dev.topology, edited, Slice())).switches}
    assert changed["spine-001"] == Management("eth0", "172.16.192.1/16", "172.16.0.1", None)
    assert changed["stor-leaf-001"] == Management("eth0", "172.16.224.1/16", "172.16.0.1", None)


def test_a_state_as_lab_up_writes_it_loads_back(dev, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """The state file's shape check accepts what `lab up` records, failures and pids included."""
    from cluster.lab import runtime

    plan = _built(build_plan(dev.spec, dev.topology, render_tree(dev.spec, dev.topology), Slice()))
    runtime.write_state(tmp_path, {
        "stack": "dev", "slice": "all", "phase": "up", "plan": plan.to_dict(),
        "namespaces": {device.name: f"gcl-{device.name}" for device in plan.devices}, "nodes": "/run/gcl-nodes",
        "created": ["gcl-leaf-001-r0"], "pids": {"leaf-001-r0/zebra": [4242, "/usr/lib/frr/zebra"]},
        "failures": [{"name": "spine-001", "mode": "link"}]})
    lab = runtime.load(tmp_path)
    assert lab is not None and lab.plan == plan and lab.ns("spine-001") == "gcl-spine-001"
    state = json.loads((tmp_path / "state.json").read_text())
    state["pids"]["leaf-001-r0/zebra"] = ["../../etc", "zebra"]  # a pid names a /proc path: only a number
    (tmp_path / "state.json").write_text(json.dumps(state))
    with pytest.raises(runtime.LabError, match='"pids" is not an object of'):
        runtime.load(tmp_path)


def _with_key(table: str, key: str) -> Callable[[str], str]:
    def edit(text: str) -> str:
        db = json.loads(text)
        db.setdefault(table, {})[key] = {}
        return json.dumps(db)
    return edit


def _first(old: str, new: str) -> Callable[[str], str]:
    return lambda text: text.replace(old, new, 1)


# (file of the rendered tree, its new text or None for none, what the finding at it says)
BROKEN_FILES: list[tuple[str, Callable[[str], str] | None, str]] = [
    ("hosts/h200/qos.sh", None, "missing; the lab needs the pool's host script"),
    ("switches/leaf-001-r0/frr.conf", None, "missing; the lab needs the switch's FRR config"),
    ("switches/spine-001/config_db.json", lambda _: "{not json", "not a SONiC config_db (Expecting"),
    ("switches/spine-001/config_db.json", lambda _: "[]", "not a SONiC config_db (a JSON list"),
    ("switches/spine-001/config_db.json", lambda _: '{"PORT": ["Ethernet0"]}', "PORT is a list, not a table"),
    ("switches/spine-001/config_db.json", _with_key("INTERFACE", "Ethernet0|10.0.0.300/31"),
     "'Ethernet0|10.0.0.300/31' is not an IPv4 interface address"),
    ("switches/spine-001/config_db.json", _first('"mtu": "9216"', '"mtu": "jumbo"'), "mtu 'jumbo' is not a number"),
    ("hosts/h200/qos.sh", lambda _: "#!/bin/bash\n", "no per-rail routing section"),
    ("hosts/h200/qos.sh", _first(") ADDRS=(", ") ADDRS=(10.9.9.9 "), "rail addresses for"),
    ("cabling.csv", None, "missing; the lab needs the cabling plan"),
    ("cabling.csv", lambda _: "cable,network\n", "no cabling plan (columns a_device"),
    ("cabling.csv", _first("spine-001,p1,400,optics-mmf,50,Ethernet112,Ethernet0",
                           "spine-001,p1,400,optics-mmf,50,Ethernet112,Ethernet999"),
     "row C0000033: spine-001 has no fabric port 'Ethernet999' in the design"),
    ("cabling.csv", _first("h200-node-003,gpu-nic1,leaf-001-r1,p3", "h200-node-003,gpu-nic0,leaf-001-r1,p3"),
     "row C0000018: h200-node-003 rail0 is cabled twice (also row C0000017)"),
    ("cabling.csv", _first("h200-node-003,gpu-nic1,", "h200-node-003,gpu-nic9,"),
     "row C0000018: h200-node-003 has no fabric port 'gpu-nic9' in the design"),
]


@pytest.mark.parametrize(("path", "edit", "message"), BROKEN_FILES)
def test_a_broken_rendered_file_is_a_finding_at_it(dev, path: str, edit: Callable[[str], str] | None,  # type: ignore[no-untyped-def]
                                                   message: str) -> None:
    files = render_tree(dev.spec, dev.topology)
    broken = {name: text for name, text in files.items() if name != path}
    if edit is not None:
        broken[path] = edit(files[path])
        assert broken[path] != files[path]
    planned = build_plan(dev.spec, dev.topology, broken, Slice())
    assert planned.plan is None
    assert {(finding.rule, str(finding.severity), finding.path) for finding in planned.findings} == {
        ("LAB-INPUT", "error", path)}
    assert any(message in finding.message for finding in planned.findings), planned.findings
    assert all("render" in finding.hint for finding in planned.findings)
    assert len(set(planned.findings)) == len(planned.findings)  # hosts sharing one script: each finding once


def test_every_broken_file_is_reported_at_once(dev) -> None:  # type: ignore[no-untyped-def]
    files = render_tree(dev.spec, dev.topology)
    broken = {path: text for path, text in files.items() if path != "hosts/h200/qos.sh"}
    broken["switches/spine-001/config_db.json"] = "{not json"
    planned = build_plan(dev.spec, dev.topology, broken, Slice(),
                         unreadable={"switches/leaf-001-r0/frr.conf": "not UTF-8 text"})
    assert planned.plan is None
    found = {finding.path: finding.message for finding in planned.findings}
    assert set(found) == {"hosts/h200/qos.sh", "switches/spine-001/config_db.json", "switches/leaf-001-r0/frr.conf"}
    assert found["hosts/h200/qos.sh"].startswith("missing")
    assert found["switches/spine-001/config_db.json"].startswith("not a SONiC config_db")
    assert "cannot be read (not UTF-8 text)" in found["switches/leaf-001-r0/frr.conf"]
    assert {finding.rule for finding in planned.findings} == {"LAB-INPUT"}


def test_a_port_linux_cannot_name_is_a_finding_at_its_device(dev, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    real = model.host_interfaces
    long_names = [f"rail-of-sixteen{rail}" for rail in range(len(real(dev.spec.pools[0], FABRIC)))]
    monkeypatch.setattr(model, "host_interfaces",
                        lambda pool, network: long_names if network == FABRIC else real(pool, network))
    planned = build_plan(dev.spec, dev.topology, render_tree(dev.spec, dev.topology), Slice())
    hosts = {host for hosts in dev.topology.hosts_by_pool.values() for host in hosts}
    assert planned.plan is None
    assert {finding.path for finding in planned.findings} == hosts
    assert all("no Linux interface name of at most 15 characters" in finding.message
               for finding in planned.findings)
    assert len(planned.findings) == len(hosts) * len(long_names)


def test_ecmp_widths_follow_the_cabling(dev) -> None:  # type: ignore[no-untyped-def]
    graph = dev.topology.graph
    switches = {name for name, _ in dev.topology.switches(FABRIC)}
    hosts = {host for hosts in dev.topology.hosts_by_pool.values() for host in hosts}
    expected = design(dev.spec, dev.topology, switches, hosts)
    uplinks = sum(data["links"] for _, peer, network, data in graph.edges("leaf-001-r0", keys=True, data=True)
                  if network == FABRIC and data["lower"] == "leaf-001-r0")
    routes = expected.routes("leaf-001-r0")
    other_leaf = [prefix for prefix, origin in expected.origins.items() if origin == "leaf-001-r1"]
    assert other_leaf and all(routes[prefix] == uplinks for prefix in other_leaf)
    # Without spine-001 the leaf keeps only its links to the other spines.
    to_spine_001 = graph.edges["leaf-001-r0", "spine-001", FABRIC]["links"]
    after = expected.routes("leaf-001-r0", frozenset({"spine-001"}))
    assert all(after[prefix] == uplinks - to_spine_001 for prefix in other_leaf)
    assert not any(origin == "spine-001" for origin in (expected.origins[p] for p in after))
    # A spine reaches a leaf's hosts over its parallel links to that leaf.
    spine = expected.routes("spine-001")
    assert all(spine[prefix] == to_spine_001 for prefix in expected.origins
               if expected.origins[prefix] == "leaf-001-r0" and not prefix.endswith("/32"))


def test_a_slice_keeps_its_leaf_groups_every_switch_above_and_their_hosts() -> None:
    result = validate("article-c")
    assert isinstance(result, Valid)
    every, hosts, _ = slice_devices(result.topology, Slice())
    one, one_hosts, text = slice_devices(result.topology, Slice.parse("groups=1"))
    spines = {name for name in every if result.topology.graph.nodes[name]["tier"] == "spine"}
    # the first group's 8 fabric leaves, and the storage and management leaves its hosts are cabled to
    # (the management spine is among the spines)
    assert spines <= one and len(one_hosts) == len(hosts) // 2
    assert sorted(one - spines) == [*(f"leaf-001-r{rail}" for rail in range(8)), "mgmt-leaf-001", "stor-leaf-001"]
    assert "leaf groups 1-1 of 2" in text
    for bad in ("groups=0", "pods=1", "groups=x"):
        with pytest.raises(ValueError, match="--slice"):
            Slice.parse(bad)


def test_a_lab_that_would_not_fit_in_memory_is_refused_with_the_numbers(monkeypatch, capsys, tmp_path) -> None:  # type: ignore[no-untyped-def]
    from cluster.commands import lab
    from cluster.lab import runtime

    monkeypatch.setattr(runtime, "missing_requirements", lambda: [])
    monkeypatch.setattr(lab, "_available_mb", lambda: 100.0)
    code = main(["lab", "up", "dev", "--slice", "all", "--state-dir", str(tmp_path / "state")])
    err = capsys.readouterr().err
    assert code == 2
    assert "needs about" in err and "MB" in err and "75 MB for a lab" in err and "--slice groups=N" in err
    assert not (tmp_path / "state" / "state.json").exists()


def test_lab_commands_without_a_lab_say_so(capsys, tmp_path) -> None:  # type: ignore[no-untyped-def]
    state = str(tmp_path / "none")
    assert main(["lab", "check", "dev", "--state-dir", state]) == 2
    assert "no lab is up" in capsys.readouterr().err
    assert main(["lab", "down", "dev", "--state-dir", state]) == 0
    assert main(["lab", "status", "dev", "--state-dir", state]) == 0
    assert "no lab is up" in capsys.readouterr().out


def test_cloud_and_infiniband_designs_have_no_lab(capsys, tmp_path) -> None:  # type: ignore[no-untyped-def]
    for stack, said in (("aws-p5e", "the lab runs on-prem Ethernet designs"),
                        ("superpod", "the lab boots Ethernet fabrics in FRR")):
        assert main(["lab", "up", stack, "--state-dir", str(tmp_path)]) == 2
        assert said in capsys.readouterr().err


def test_a_from_folder_that_is_no_folder_is_a_finding(tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    absent = tmp_path / "absent"
    assert main(["lab", "up", "dev", "--from", str(absent), "--state-dir", str(tmp_path / "s")]) == 2
    out = capsys.readouterr().out
    assert f"LAB-INPUT {absent}: --from: not a directory" in out and "nothing started" in out


def _broken_tree(dev, root: Path) -> set[str]:  # type: ignore[no-untyped-def]
    """The dev tree under `root` without its hosts' script and with a config_db that is not UTF-8:
    the two files, as the findings should name them."""
    for path, text in render_tree(dev.spec, dev.topology).items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(text)
    (root / "hosts/h200/qos.sh").unlink()
    (root / "switches/spine-001/config_db.json").write_bytes(b"\xff{}")
    return {"hosts/h200/qos.sh", "switches/spine-001/config_db.json"}


@pytest.mark.parametrize("output", ["text", "json"])
def test_up_from_a_broken_tree_reports_every_file_and_starts_nothing(  # type: ignore[no-untyped-def]
        dev, tmp_path, capsys, monkeypatch, output: str) -> None:
    from cluster.commands import lab
    from cluster.lab import runtime

    def must_not_start(*args, **kwargs):  # type: ignore[no-untyped-def]
        raise AssertionError("lab up started a lab from a broken tree")

    monkeypatch.setattr(lab, "_available_mb", lambda: 1e9)  # the slice fits: the tree decides
    monkeypatch.setattr(runtime, "up", must_not_start)
    broken = _broken_tree(dev, tmp_path / "tree")
    state = tmp_path / "state"
    code = main(["lab", "up", "dev", "--from", str(tmp_path / "tree"), "--state-dir", str(state),
                 "--format", output])
    captured = capsys.readouterr()
    assert code == 2 and not (state / "state.json").exists()
    assert "Traceback" not in captured.out + captured.err
    if output == "json":
        document = json.loads(captured.out)
        assert document["ok"] is False and {f["rule"] for f in document["findings"]} == {"LAB-INPUT"}
        found = {f["path"]: f["message"] for f in document["findings"]}
    else:
        assert "nothing started" in captured.out
        found = {line.split("LAB-INPUT ", 1)[1].split(": ", 1)[0]: line.split(": ", 1)[1]
                 for line in captured.out.splitlines() if "error LAB-INPUT " in line}
    assert set(found) == broken
    assert found["hosts/h200/qos.sh"].startswith("missing")
    assert "cannot be read" in found["switches/spine-001/config_db.json"]


def test_a_netplan_setting_the_lab_does_not_translate_is_refused_at_its_file(dev) -> None:  # type: ignore[no-untyped-def]
    files = dict(render_tree(dev.spec, dev.topology))
    path = "hosts/h200/netplan/h200-node-002.yaml"
    files[path] = files[path].replace("      dhcp4: false\n", "      dhcp4: false\n      nameservers: {}\n", 1)
    files["hosts/h200/netplan/h200-node-003.yaml"] = "network: [\n"
    planned = build_plan(dev.spec, dev.topology, files, Slice())
    assert planned.plan is None
    found = {(f.path, f.message.split(":")[0]) for f in planned.findings}
    assert found == {(path, "network.ethernets.mgmt0"),
                     ("hosts/h200/netplan/h200-node-003.yaml", "is not YAML (while parsing a flow node)")}
    assert "nameservers is a setting the lab does not translate" in str(planned.findings)
    assert all(f.rule == "LAB-INPUT" for f in planned.findings)


def test_each_host_bmc_is_a_device_cabled_as_cabling_csv_says_and_prod_runs_its_oob_dhcp_server() -> None:
    """prod sets management_plane.dhcp_server: each host's BMC is a namespace of its own on the oob
    switch its cabling.csv row names (a crossed row reaches the lab as written), and the server runs
    the rendered dhcp/kea-dhcp4-oob.conf on the root oob switch's bridge; the expectations come from
    the design alone."""
    from cluster.lab.expect import oob_leases

    prod = validate("prod")
    assert isinstance(prod, Valid)
    files = render_tree(prod.spec, prod.topology)
    plan = _built(build_plan(prod.spec, prod.topology, files, Slice()))
    assert [bmc.name for bmc in plan.bmcs] == [f"{host.name}-bmc" for host in plan.hosts]
    assert {bmc.interface for bmc in plan.bmcs} == {"bmc"}
    assert plan.oob_dhcp == model.OobDhcp("172.16.0.2/16", "oob-spine-001", files["dhcp/kea-dhcp4-oob.conf"])
    assert model.OOB_DHCP_NOTE in plan.notes and "their hosts' 64 BMCs on 3 out-of-band switches" in plan.slice
    assert LabPlan.from_dict(json.loads(json.dumps(plan.to_dict()))) == plan
    # containerlab exports no out-of-band network, so neither its note nor the server's
    from cluster.lab.containerlab import topology_files
    header = topology_files(plan).files["prod.clab.yml"]
    assert "out-of-band network is not exported" in header and "kea-dhcp4-oob" not in header
    cabled = {cable.a: (cable.b, cable.b_if) for cable in plan.oob_cables}
    assert cabled["h200-node-001-bmc"] == ("oob-leaf-001", "swp1") and cabled["h200-node-064-bmc"][0] == "oob-leaf-002"
    expected = oob_leases(prod.spec, prod.topology, {host.name for host in plan.hosts})
    assert (expected.server, expected.pool, expected.prefix, expected.router) == (
        "172.16.0.2", ("172.16.64.0", "172.16.127.255"), 16, "172.16.0.1")
    assert expected.ports["h200-node-001"] == ("oob-leaf-001", "swp1")
    # two BMC rows crossed at the oob leaf: wired as written, so LAB-BMC sees them
    rows = files["cabling.csv"].splitlines()
    first, second = (index for index, row in enumerate(rows) if re.search(r",h200-node-00[12],bmc,oob-leaf-001,", row))
    one, two = rows[first].split(","), rows[second].split(",")
    one[6], two[6], one[11], two[11] = two[6], one[6], two[11], one[11]
    rows[first], rows[second] = ",".join(one), ",".join(two)
    crossed = _built(build_plan(prod.spec, prod.topology, {**files, "cabling.csv": "\n".join(rows) + "\n"}, Slice()))
    wired = {cable.a: cable.b_if for cable in crossed.oob_cables}
    assert (wired["h200-node-001-bmc"], wired["h200-node-002-bmc"]) == ("swp2", "swp1")
    # without its configuration the server cannot run: refused, naming the file
    missing = {path: text for path, text in files.items() if path != "dhcp/kea-dhcp4-oob.conf"}
    refused = build_plan(prod.spec, prod.topology, missing, Slice())
    assert refused.plan is None and [(f.rule, f.path) for f in refused.findings] == [
        ("LAB-INPUT", "dhcp/kea-dhcp4-oob.conf")]
    for broken, why in (("{", "not a Kea configuration (Expecting"), ("[]", "no Dhcp4 object")):
        refused = build_plan(prod.spec, prod.topology, {**files, "dhcp/kea-dhcp4-oob.conf": broken}, Slice())
        assert refused.plan is None and [(f.path, why in f.message) for f in refused.findings] == [
            ("dhcp/kea-dhcp4-oob.conf", True)]


def test_a_slice_holds_the_bmcs_of_its_own_hosts_only() -> None:
    result = validate("article-c")
    assert isinstance(result, Valid)
    plan = _built(build_plan(result.spec, result.topology, render_tree(result.spec, result.topology),
                             Slice.parse("groups=1")))
    assert len(plan.hosts) == 32 and [bmc.host for bmc in plan.bmcs] == [host.name for host in plan.hosts]
    assert plan.oob_dhcp is None  # article-c sets no management_plane.dhcp_server
