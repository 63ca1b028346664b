"""`lab export`: the containerlab topology of a lab plan (cluster/lab/containerlab.py).

No package on PyPI or npm ships containerlab's JSON schema (`containerlab`, `clab-schema` on PyPI;
`containerlab`, `clab-schema`, `@srl-labs/containerlab` on npm: none exists), so `clab_problems`
checks a topology against rules read from `schemas/clab.schema.json` of github.com/srl-labs/containerlab
at commit 39ff2b7ccce20f3c4610fcbd1fc030582f4499c1 (v0.79.0-2-g39ff2b7cc), written out below as a
draft-07 schema for the parts this export uses, and against the rules containerlab's code adds:

- top level: `name` and `topology` required, no other keys than the schema's six; `name` matches
  `^[a-zA-Z0-9][a-zA-Z0-9-._]*$`;
- `topology`: `nodes` required; node names match `^[a-zA-Z0-9][a-zA-Z0-9-._|]*$`; a node has
  only the node-config keys; `binds` and `exec` are non-empty string lists, `sysctls` maps to
  strings or numbers; kind `linux` (the schema's enum holds it; this export uses no other);
- `links`: at least one; the short form has only `endpoints`, `mtu`, `ipv4`, `ipv6`, `vars`;
  `endpoints` two strings matching `^\\S+:\\S+$` (the schema writes them as `prefixItems`, which
  draft-07 ignores; links/link_brief.go requires exactly two); `mtu` a number in 1..65535;
- containerlab's code: each endpoint's node is a node of the topology and not a word the short
  form reads as a link type (`host`, `mgmt-net`, `macvlan`: links/link_brief.go); an interface name
  has at most 15 characters and no space or `/` (links/link.go IsValidInterfaceName; longer names
  would only become altnames, not the names the configs use); a linux node takes no `eth0`
  (nodes/linux/linux.go CheckInterfaceName); no endpoint twice (nodes/default_node.go
  CheckInterfaceOverlap);
- this export's own: every bind's source is one of the exported files.
"""

from __future__ import annotations

import copy
import re
import shlex
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
import yaml
from jsonschema import Draft7Validator, ValidationError

from cluster.artifacts import render_tree
from cluster.cli import main
from cluster.lab.containerlab import FRR_IMAGE, HOST_IMAGE, HOST_SCRIPT, node_names, topology_files
from cluster.lab.model import OOB_NOTE, Interface, LabCable, LabHost, LabPlan, LabSwitch, Slice, build_plan
from cluster.pipeline import Valid, validate

ROOT = Path(__file__).resolve().parent.parent

NODE_KEYS = (
    "image", "image-pull-policy", "restart-policy", "kind", "license", "type", "group", "startup-config",
    "startup-delay", "enforce-startup-config", "suppress-startup-config", "auto-remove", "exec", "binds", "volumes",
    "ports", "env", "credentials", "env-files", "user", "hostname", "entrypoint", "cmd", "labels", "runtime",
    "mgmt-ipv4", "mgmt-ipv6", "network-mode", "link-apply-mode", "cpu", "memory", "cpu-set", "extras", "config",
    "stages", "dns", "certificate", "healthcheck", "components", "aliases", "shm-size", "cap-add", "privileged",
    "cgroupns-mode", "cgroup-parent", "pid-mode", "tmpfs", "security-opts", "sysctls", "devices",
)
STRINGS = {"type": "array", "minItems": 1, "items": {"type": "string"}}
NODE = {
    "type": "object", "additionalProperties": False,
    "properties": {**{key: {} for key in NODE_KEYS},
                   "kind": {"enum": ["linux"]}, "image": {"type": "string"},
                   "exec": STRINGS, "binds": {**STRINGS, "uniqueItems": True},
                   "sysctls": {"type": "object",
                               "patternProperties": {".+": {"anyOf": [{"type": "string"}, {"type": "number"}]}}}},
}
SHORT_LINK = {
    "type": "object", "required": ["endpoints"], "additionalProperties": False,
    "properties": {"endpoints": {"type": "array", "minItems": 2, "maxItems": 2, "uniqueItems": True,
                                 "items": {"type": "string", "pattern": r"^\S+:\S+$"}},
                   "mtu": {"type": "number", "minimum": 1, "maximum": 65535},
                   "ipv4": {}, "ipv6": {}, "vars": {"type": "object"}},
}
CLAB_SCHEMA = {
    "type": "object", "required": ["name", "topology"], "additionalProperties": False,
    "properties": {
        "name": {"type": "string", "pattern": r"^[a-zA-Z0-9][a-zA-Z0-9-._]*$"},
        "prefix": {}, "mgmt": {}, "settings": {}, "debug": {},
        "topology": {
            "type": "object", "required": ["nodes"], "additionalProperties": False,
            "properties": {
                "nodes": {"type": "object", "additionalProperties": False,
                          "patternProperties": {r"^[a-zA-Z0-9][a-zA-Z0-9-._|]*$": {"oneOf": [{"type": "null"}, NODE]}}},
                "groups": {}, "kinds": {}, "defaults": {},
                "links": {"type": "array", "minItems": 1, "items": SHORT_LINK},
            },
        },
    },
}
LINK_TYPE_WORDS = {"host", "mgmt-net", "macvlan"}


def clab_problems(document: Any, files: dict[str, str]) -> list[str]:
    """What containerlab would refuse in `document` (a parsed topology), one line each."""
    problems = [line for error in Draft7Validator(CLAB_SCHEMA).iter_errors(document) for line in _schema_lines(error)]
    if problems:
        return problems
    nodes = document["topology"]["nodes"]
    seen: set[str] = set()
    for index, link in enumerate(document["topology"].get("links", [])):
        for endpoint in link["endpoints"]:
            node, _, interface = endpoint.partition(":")
            where = f"links.{index}: {endpoint}"
            if node.strip().lower() in LINK_TYPE_WORDS:
                problems.append(f"{where}: {node!r} is read as a link type, not a node")
            elif node not in nodes:
                problems.append(f"{where}: no node {node!r}")
            if len(interface) > 15 or re.search(r"[ /]", interface):
                problems.append(f"{where}: interface name longer than 15 characters or with a space or /")
            if interface == "eth0":
                problems.append(f"{where}: eth0 is the management interface of a linux node")
            if endpoint in seen:
                problems.append(f"{where}: endpoint used twice")
            seen.add(endpoint)
    for name, node in nodes.items():
        for bind in (node or {}).get("binds", []):
            if bind.split(":")[0] not in files:
                problems.append(f"nodes.{name}: bind {bind!r}: source not exported")
    return problems


def _schema_lines(error: ValidationError) -> list[str]:
    """The error, or for a `oneOf` the errors of its branches (which say what is wrong)."""
    if error.context:
        return [line for inner in error.context for line in _schema_lines(inner)]
    return [f"{'.'.join(str(part) for part in error.absolute_path) or '(top)'}: {error.message}"]


def _plan(stack: str, chosen: str = "all") -> LabPlan:
    result = validate(str(ROOT / "stacks" / f"Pulumi.{stack}.yaml"))
    assert isinstance(result, Valid)
    planned = build_plan(result.spec, result.topology, render_tree(result.spec, result.topology), Slice.parse(chosen))
    assert planned.plan is not None, planned.findings
    return planned.plan


@pytest.fixture(scope="module")
def plans() -> dict[str, LabPlan]:
    # dev: SONiC, one leaf group; article-b: NVUE (FRR equivalent), two leaf groups
    return {"dev": _plan("dev"), "article-b": _plan("article-b"), "article-b groups=1": _plan("article-b", "groups=1")}


def _exported(plan: LabPlan) -> tuple[dict[str, str], dict[str, Any]]:
    exported = topology_files(plan)
    assert exported.findings == ()
    files = exported.files
    return files, yaml.safe_load(files[f"{plan.stack}.clab.yml"])


def _tiny_plan(**changes: Any) -> LabPlan:
    """One leaf, one host, one cable: small enough to read."""
    leaf = LabSwitch("leaf-1", "leaf", "sonic", "10.0.0.1/32",
                     (Interface("Ethernet0", "Ethernet0", "10.1.0.1/31", 9216),), "frr defaults datacenter\n", "test")
    host = LabHost("node-1", "h200", (Interface("rail0", "rail0", "10.1.0.0/31", 9000),), "set -euo pipefail\n")
    fields: dict[str, Any] = {"stack": "tiny", "slice": "one leaf", "switches": (leaf,), "hosts": (host,),
                              "cables": (LabCable("node-1", "rail0", "leaf-1", "Ethernet0"),), **changes}
    return LabPlan(**fields)


@pytest.mark.parametrize("key", ["dev", "article-b", "article-b groups=1"])
def test_topology_passes_containerlab_rules(plans: dict[str, LabPlan], key: str) -> None:
    files, document = _exported(plans[key])
    assert clab_problems(document, files) == []


def _break_endpoint(document: dict[str, Any]) -> None:
    document["topology"]["links"][0]["endpoints"][0] = "leaf-1Ethernet0"


def _unknown_node(document: dict[str, Any]) -> None:
    document["topology"]["links"][0]["endpoints"][0] = "leaf-9:Ethernet0"


def _link_type_node(document: dict[str, Any]) -> None:
    document["topology"]["nodes"]["host"] = document["topology"]["nodes"].pop("leaf-1")
    document["topology"]["links"][0]["endpoints"][1] = "host:Ethernet0"


def _zero_mtu(document: dict[str, Any]) -> None:
    document["topology"]["links"][0]["mtu"] = 0


def _bad_node_name(document: dict[str, Any]) -> None:
    document["topology"]["nodes"]["-leaf"] = document["topology"]["nodes"].pop("leaf-1")


def _unknown_node_key(document: dict[str, Any]) -> None:
    document["topology"]["nodes"]["leaf-1"]["images"] = "x"


def _management_interface(document: dict[str, Any]) -> None:
    document["topology"]["links"][0]["endpoints"][1] = "leaf-1:eth0"


def _long_interface(document: dict[str, Any]) -> None:
    document["topology"]["links"][0]["endpoints"][1] = "leaf-1:Ethernet0123456789"


def _twice(document: dict[str, Any]) -> None:
    document["topology"]["links"].append(copy.deepcopy(document["topology"]["links"][0]))
    document["topology"]["links"][1]["endpoints"][0] = "node-1:rail1"


def _missing_bind(document: dict[str, Any]) -> None:
    document["topology"]["nodes"]["leaf-1"]["binds"].append("configs/leaf-1/zebra.conf:/etc/frr/zebra.conf")


@pytest.mark.parametrize(("change", "expected"), [
    (_break_endpoint, "links.0.endpoints.0: 'leaf-1Ethernet0' does not match"),
    (_unknown_node, "no node 'leaf-9'"),
    (_link_type_node, "'host' is read as a link type"),
    (_zero_mtu, "links.0.mtu: 0 is less than the minimum of 1"),
    (_bad_node_name, "topology.nodes: '-leaf' does not match any of the regexes"),
    (_unknown_node_key, "topology.nodes.leaf-1: Additional properties are not allowed ('images' was unexpected)"),
    (_management_interface, "eth0 is the management interface"),
    (_long_interface, "longer than 15 characters"),
    (_twice, "leaf-1:Ethernet0: endpoint used twice"),
    (_missing_bind, "source not exported"),
])
def test_rules_reject(change: Any, expected: str) -> None:
    files, document = _exported(_tiny_plan())
    assert clab_problems(document, files) == []
    change(document)
    problems = clab_problems(document, files)
    assert any(expected in problem for problem in problems), problems


@pytest.mark.parametrize("key", ["dev", "article-b"])
def test_every_cable_is_one_link(plans: dict[str, LabPlan], key: str) -> None:
    plan = plans[key]
    _, document = _exported(plan)
    names = node_names(plan)
    links = Counter(frozenset(link["endpoints"]) for link in document["topology"]["links"])
    cables = Counter(frozenset({f"{names[cable.a]}:{cable.a_if}", f"{names[cable.b]}:{cable.b_if}"})
                     for cable in plan.cables)
    assert links == cables
    assert max(links.values()) == 1


@pytest.mark.parametrize("key", ["dev", "article-b"])
def test_nodes_run_the_plan(plans: dict[str, LabPlan], key: str) -> None:
    plan = plans[key]
    files, document = _exported(plan)
    nodes = document["topology"]["nodes"]
    names = node_names(plan)
    for switch in plan.switches:
        node = nodes[names[switch.name]]
        assert (node["kind"], node["image"]) == ("linux", FRR_IMAGE)
        assert files[f"configs/{names[switch.name]}/frr.conf"] == switch.frr_conf
        assert f"configs/{names[switch.name]}/frr.conf:/etc/frr/frr.conf" in node["binds"]
        assert f"ip addr add {switch.loopback} dev lo" in node["exec"]
        for interface in switch.interfaces:
            assert f"ip link set {interface.name} mtu {interface.mtu}" in node["exec"]
            if interface.address:
                assert f"ip addr add {interface.address} dev {interface.name}" in node["exec"]
    for host in plan.hosts:
        node = nodes[names[host.name]]
        script = f"configs/{names[host.name]}/routing.sh"
        assert (node["kind"], node["image"]) == ("linux", HOST_IMAGE)
        assert files[script] == host.routing
        assert node["binds"] == [f"{script}:{HOST_SCRIPT}:ro"]
        # after the MTUs the script sets the rails' addresses, then the netplan file's commands the other ports'
        ran = node["exec"].index(f"bash {HOST_SCRIPT}")
        assert node["exec"][ran + 1:] == [f"ip {line}" for line in host.network.splitlines()]
        for interface in host.interfaces:
            assert f"ip link set {interface.name} mtu {interface.mtu}" in node["exec"][:ran]
            assert interface.address in (host.routing if interface.network == "fabric" else host.network)


def test_link_mtu_carries_the_larger_end(plans: dict[str, LabPlan]) -> None:
    _, document = _exported(plans["dev"])
    host_links = [link for link in document["topology"]["links"] if any("rail" in end for end in link["endpoints"])]
    assert host_links and {link["mtu"] for link in host_links} == {9216}  # hosts 9000, leaves 9216


def test_frr_files_start_the_lab_daemons() -> None:
    files, document = _exported(_tiny_plan())
    daemons = files["configs/leaf-1/daemons"].splitlines()
    assert {"zebra=yes", "bgpd=yes", "bfdd=yes", 'frr_profile="datacenter"'} <= set(daemons)
    assert files["configs/leaf-1/vtysh.conf"] == "service integrated-vtysh-config\n"
    node = document["topology"]["nodes"]["leaf-1"]
    assert node["binds"] == ["configs/leaf-1/frr.conf:/etc/frr/frr.conf", "configs/leaf-1/daemons:/etc/frr/daemons",
                             "configs/leaf-1/vtysh.conf:/etc/frr/vtysh.conf"]
    assert node["sysctls"]["net.ipv4.ip_forward"] == "1"
    # containerlab splits exec commands like a shell; the zebra setting reaches vtysh whole
    first = shlex.split(node["exec"][0])
    assert first[:2] == ["bash", "-c"] and '-c "no zebra nexthop kernel enable"' in first[2]


def test_down_port_stays_down() -> None:
    plan = _tiny_plan()
    leaf = plan.switches[0]
    down = LabSwitch(leaf.name, leaf.tier, leaf.os, leaf.loopback, (Interface("Ethernet0", "Ethernet0", None, 1500, False),),
                     leaf.frr_conf, leaf.source)
    _, document = _exported(_tiny_plan(switches=(down,)))
    commands = document["topology"]["nodes"]["leaf-1"]["exec"]
    assert "ip link set Ethernet0 down" in commands
    assert not any(command.endswith("dev Ethernet0") for command in commands)


def test_output_is_deterministic(plans: dict[str, LabPlan]) -> None:
    assert topology_files(plans["article-b"]) == topology_files(plans["article-b"])
    assert list(topology_files(plans["dev"]).files) == sorted(topology_files(plans["dev"]).files)


def test_slice_exports_only_its_devices(plans: dict[str, LabPlan]) -> None:
    whole, sliced = plans["article-b"], plans["article-b groups=1"]
    devices = {switch.name for switch in sliced.switches} | {host.name for host in sliced.hosts}
    assert len(devices) < len(whole.switches) + len(whole.hosts)
    files, document = _exported(sliced)
    nodes = set(document["topology"]["nodes"])
    assert nodes == {node_names(sliced)[device] for device in devices}
    assert {path.split("/")[1] for path in files if path.startswith("configs/")} == nodes
    assert {end.partition(":")[0] for link in document["topology"]["links"] for end in link["endpoints"]} <= nodes
    assert len(document["topology"]["links"]) == len(sliced.cables)


def test_notes_reach_the_topology_header(plans: dict[str, LabPlan]) -> None:
    plan = plans["article-b"]
    text = topology_files(plan).files[f"{plan.stack}.clab.yml"]
    assert plan.notes and all(note in text for note in plan.notes if note != OOB_NOTE)
    assert text.startswith(f"# containerlab topology of {plan.stack}: {plan.slice}.")
    # the out-of-band network stays out, and the header says why
    assert plan.bridges and OOB_NOTE not in text
    assert "# The out-of-band network is not exported: containerlab's linux nodes keep eth0" in text


@pytest.mark.parametrize(("device", "expected"), [
    ("leaf-001-r0", "leaf-001-r0"),
    ("Leaf_A", "leaf-a"),
    ("host", "node-host"),  # the short link form would read `host:...` as a host link
])
def test_node_names(device: str, expected: str) -> None:
    plan = _tiny_plan(hosts=(), cables=(), switches=(LabSwitch(device, "leaf", "sonic", None, (), "", "test"),))
    assert node_names(plan) == {device: expected}
    files, document = _exported(plan)
    assert clab_problems(document, files) == []


def _leaves(*names: str) -> dict[str, Any]:
    return {"hosts": (), "cables": (), "switches": tuple(LabSwitch(name, "leaf", "sonic", None, (), "", "test")
                                                         for name in names)}


def _on_eth0() -> dict[str, Any]:
    plan = _tiny_plan()
    host = plan.hosts[0]
    rail = Interface("eth0", "eth0", host.interfaces[0].address, host.interfaces[0].mtu)
    cable = plan.cables[0]
    return {"hosts": (LabHost(host.name, host.pool, (rail,), host.routing),),
            "cables": (LabCable(cable.a, "eth0", cable.b, cable.b_if),)}


def _dangling_cable() -> dict[str, Any]:
    cable = _tiny_plan().cables[0]
    return {"cables": (LabCable(cable.a, "rail7", cable.b, cable.b_if),)}


@pytest.mark.parametrize(("changes", "path", "message"), [
    (_leaves("leaf_a", "leaf-a"), "leaf_a", "'leaf-a' and 'leaf_a' both become containerlab node 'leaf-a'"),
    (_leaves("__"), "__", "no containerlab node name can be made of it"),
    (_on_eth0(), "node-1", "port eth0 is containerlab's management interface"),
    (_dangling_cable(), "node-1", "cable end node-1:rail7 is no interface of node-1"),
    ({"stack": "__"}, "name", "stack '__': no containerlab topology name"),
])
def test_what_containerlab_cannot_take_is_a_finding(changes: dict[str, Any], path: str, message: str) -> None:
    exported = topology_files(_tiny_plan(**changes))
    assert exported.files == {}
    [finding] = exported.findings
    assert (finding.rule, str(finding.severity), finding.path) == ("LAB-INPUT", "error", path)
    assert message in finding.message and finding.hint


def test_every_problem_of_a_plan_is_reported_at_once() -> None:
    plan = _tiny_plan(**_on_eth0())
    broken = LabPlan(plan.stack, plan.slice, (*plan.switches, *_leaves("leaf_a", "leaf-a", "__")["switches"]),
                     plan.hosts, plan.cables)
    exported = topology_files(broken)
    assert exported.files == {}
    assert {finding.rule for finding in exported.findings} == {"LAB-INPUT"}
    assert sorted(finding.path for finding in exported.findings) == sorted(["__", "leaf_a", "node-1"])


ETH0_STACK = """\
config:
  gpu-cluster:cluster:
    name: eth0-rails
    target: onprem
    node_pools:
      - name: h200
        nodes: 4
        gpu: H200
        fabric_nics: {count: 8, gbps: 400, interfaces: [eth0, eth1, eth2, eth3, eth4, eth5, eth6, eth7]}
    fabric:
      leaf: {switch: SN5600, ports: 32, port_gbps: 400, os: sonic}
      spine: {switch: SN5600, ports: 32, port_gbps: 400, os: sonic}
"""


def test_export_of_a_lab_containerlab_cannot_take_writes_nothing_and_exits_2(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    stack = tmp_path / "Pulumi.eth0-rails.yaml"
    stack.write_text(ETH0_STACK)
    result = validate(str(stack))
    assert isinstance(result, Valid) and not result.schema_failed
    hosts = {host for hosts in result.topology.hosts_by_pool.values() for host in hosts}
    out = tmp_path / "clab"
    code = main(["lab", "export", str(stack), "--out", str(out)])
    captured = capsys.readouterr()
    assert code == 2 and not out.exists()
    assert "nothing written" in captured.out and "Traceback" not in captured.out + captured.err
    reported = {line.split("LAB-INPUT ", 1)[1].split(": ", 1)[0] for line in captured.out.splitlines()
                if "error LAB-INPUT " in line and "containerlab's management interface" in line}
    assert reported == hosts  # every host's rail eth0, at once


def test_export_of_a_broken_rendered_tree_reports_every_file_and_writes_nothing(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    import cluster.artifacts

    rendered = cluster.artifacts.render_tree
    broken = {"hosts/h200/qos.sh", "switches/spine-001/frr.conf"}

    def render_without(spec: Any, topology: Any) -> dict[str, str]:
        return {path: text for path, text in rendered(spec, topology).items() if path not in broken}

    monkeypatch.setattr(cluster.artifacts, "render_tree", render_without)  # as a renderer that lost two files
    out = tmp_path / "clab"
    code = main(["lab", "export", "dev", "--out", str(out)])
    captured = capsys.readouterr()
    assert code == 2 and not out.exists()
    reported = {line.split("LAB-INPUT ", 1)[1].split(": ", 1)[0] for line in captured.out.splitlines()
                if "error LAB-INPUT " in line and ": missing; the lab needs" in line}
    assert reported == broken and "nothing written" in captured.out
    # rendered in this run, not read from a folder: the hint names a renderer fault, never --from
    assert "fault of gpu-cluster's renderer" in captured.out and "--from" not in captured.out
