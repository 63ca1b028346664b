"""The out-of-band network forwards: read from the rendered oob switch configs of every dialect,
every BMC and management-port cable is an untagged member of the one oob VLAN, the links to each
other oob switch are all in one LACP bundle that is itself in the VLAN (parallel uplinks are one
logical link), the bundles agree end to end, and where bundles still form loops (leaves on two
spines) spanning tree runs everywhere with one spine as the unique root."""

from __future__ import annotations

import copy
import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import networkx as nx
import pytest
import yaml

from cluster.configs import render_configs
from cluster.pipeline import Valid, validate, validate_mapping
from cluster.topology import Topology
from tests.conftest import ROOT

PROD = yaml.safe_load((ROOT / "stacks" / "Pulumi.prod.yaml").read_text())["config"]["gpu-cluster:cluster"]


@dataclass
class L2:
    """One oob switch as its config states it."""

    peer_of: dict[str, str] = field(default_factory=dict)  # physical port -> peer device
    vlans: dict[str, set[int]] = field(default_factory=dict)  # port or bundle -> untagged VLANs
    bundles: dict[str, set[str]] = field(default_factory=dict)  # bundle -> member ports
    lacp: set[str] = field(default_factory=set)  # bundles running LACP
    stp_priority: int | None = None


def read_sonic(text: str) -> L2:
    db = json.loads(text)
    state = L2(peer_of={port: entry["description"].split()[0] for port, entry in db["PORT"].items()})
    for key, entry in db.get("VLAN_MEMBER", {}).items():
        vlan, port = key.split("|")
        if entry["tagging_mode"] == "untagged":
            state.vlans.setdefault(port, set()).add(int(db["VLAN"][vlan]["vlanid"]))
    for key in db.get("PORTCHANNEL_MEMBER", {}):
        bundle, port = key.split("|")
        state.bundles.setdefault(bundle, set()).add(port)
    state.lacp = set(db.get("PORTCHANNEL", {}))  # SONiC port-channels are LACP (teamd) unless static
    if "GLOBAL" in db.get("STP", {}):
        (entry,) = db["STP_VLAN"].values()
        state.stp_priority = int(entry["priority"]) if entry["enabled"] == "true" else None
    return state


def read_nvue(text: str) -> L2:
    state = L2(peer_of=dict(re.findall(r"^nv set interface (swp\S+) description '(\S+)", text, re.M)))
    for port, vlan in re.findall(r"^nv set interface (\S+) bridge domain br_default access (\d+)$", text, re.M):
        state.vlans.setdefault(port, set()).add(int(vlan))
    for bundle, members in re.findall(r"^nv set interface (bond\d+) bond member (\S+)$", text, re.M):
        state.bundles.setdefault(bundle, set()).update(members.split(","))
    state.lacp = set(re.findall(r"^nv set interface (bond\d+) bond mode lacp$", text, re.M))
    priority = re.findall(r"^nv set bridge domain br_default stp priority (\d+)$", text, re.M)
    running = re.search(r"^nv set bridge domain br_default stp state up$", text, re.M)
    state.stp_priority = int(priority[0]) if priority and running else None
    return state


def read_eos(text: str) -> L2:
    state = L2()
    for block in re.split(r"^interface ", text, flags=re.M)[1:]:
        name = block.split("\n", 1)[0].strip()
        description = re.search(r"^   description (\S+)", block, re.M)
        if name.startswith("Ethernet") and description:
            state.peer_of[name] = description.group(1)
        vlan = re.search(r"^   switchport access vlan (\d+)$", block, re.M)
        if vlan and re.search(r"^   switchport mode access$", block, re.M):
            state.vlans.setdefault(name, set()).add(int(vlan.group(1)))
        group = re.search(r"^   channel-group (\d+) mode (\w+)$", block, re.M)
        if group:
            state.bundles.setdefault(f"Port-Channel{group.group(1)}", set()).add(name)
            if group.group(2) == "active":
                state.lacp.add(f"Port-Channel{group.group(1)}")
    if re.search(r"^spanning-tree mode mstp$", text, re.M):
        priority = re.findall(r"^spanning-tree mst 0 priority (\d+)$", text, re.M)
        state.stp_priority = int(priority[0]) if priority else 32768
    return state


READERS = {"config_db.json": read_sonic, "nvue.sh": read_nvue, "eos.cfg": read_eos}


def oob_states(files: dict[str, str]) -> dict[str, L2]:
    inventory = json.loads(files["inventory.json"])["switches"]
    states = {}
    for path, text in files.items():
        parts = Path(path).parts
        if parts[0] == "switches" and parts[2] in READERS and inventory[parts[1]]["network"] == "oob":
            states[parts[1]] = READERS[parts[2]](text)
    return states


def check_oob(files: dict[str, str], topology: Topology) -> tuple[list[str], nx.MultiGraph]:
    """Problems with the oob configs, and the graph of bundles between oob switches."""
    graph = topology.graph
    states = oob_states(files)
    problems: list[str] = []
    bundles = nx.MultiGraph()
    vlans: set[int] = set()
    for switch, state in sorted(states.items()):
        bundles.add_node(switch)
        in_bundle = {port: bundle for bundle, members in state.bundles.items() for port in members}
        for port, peer in sorted(state.peer_of.items()):
            to_oob_switch = graph.nodes[peer].get("network") == "oob" and graph.nodes[peer]["kind"] == "switch"
            if to_oob_switch:
                if port not in in_bundle:
                    problems.append(f"{switch} {port} to {peer} is in no bundle")
                elif state.vlans.get(port):
                    problems.append(f"{switch} {port} is in a bundle and in the VLAN itself")
            elif len(state.vlans.get(port, set())) != 1:
                problems.append(f"{switch} {port} ({peer}) is not an untagged member of one VLAN")
            vlans |= state.vlans.get(port, set())
        for bundle, members in sorted(state.bundles.items()):
            peers = {state.peer_of[port] for port in members}
            if len(peers) != 1:
                problems.append(f"{switch} {bundle} spans {sorted(peers)}")
                continue
            peer = peers.pop()
            cabled = sum(data["links"] for data in graph.get_edge_data(switch, peer).values() if data["network"] == "oob")
            if len(members) != cabled:
                problems.append(f"{switch} {bundle}: {len(members)} members, {cabled} cables to {peer}")
            if bundle not in state.lacp:
                problems.append(f"{switch} {bundle} does not run LACP")
            if len(state.vlans.get(bundle, set())) != 1:
                problems.append(f"{switch} {bundle} is not an untagged member of one VLAN")
            vlans |= state.vlans.get(bundle, set())
            if switch < peer:
                bundles.add_edge(switch, peer, members=len(members))
    if len(vlans) > 1:
        problems.append(f"oob switches use VLANs {sorted(vlans)}; one segment expected")
    for switch, state in states.items():  # every bundle is matched by one at the other end
        for peer in {state.peer_of[port] for members in state.bundles.values() for port in members}:
            theirs = [b for b, members in states[peer].bundles.items()
                      if {states[peer].peer_of[p] for p in members} == {switch}]
            if len(theirs) != 1:
                problems.append(f"{switch}'s bundle to {peer} has {len(theirs)} counterparts")
    if states and not nx.is_connected(nx.Graph(bundles)):
        problems.append("the oob switches are not all connected")
    looped = bundles.number_of_edges() != nx.Graph(bundles).number_of_edges() or not nx.is_forest(nx.Graph(bundles))
    if states and looped:
        priorities = {switch: state.stp_priority for switch, state in states.items()}
        if None in priorities.values():
            off = sorted(s for s, p in priorities.items() if p is None)
            problems.append(f"bundles form a loop, but spanning tree is off on {off}")
        else:
            lowest = min(p for p in priorities.values() if p is not None)
            roots = sorted(s for s, p in priorities.items() if p == lowest)
            if len(roots) != 1 or graph.nodes[roots[0]]["tier"] != "spine":
                problems.append(f"bundles form a loop; spanning tree roots {roots} (one spine expected)")
    return problems, bundles


def _oob_designs() -> list[tuple[str, dict[str, Any]]]:
    designs = []
    for os in ("sonic", "nvue", "eos"):
        data = copy.deepcopy(PROD)
        if os == "sonic":  # SONiC needs a SKU port map: an SN5600 at 100G (C256S1) stands in for an oob box
            box: dict[str, Any] = {"switch": "SN5600", "port_gbps": 100, "os": os}
            data["oob"] = {"leaf": dict(box), "spine": dict(box), "leaves": 2, "spines": 1, "leaf_uplinks": 2}
        else:
            data["oob"] = {"leaf": {"switch": "OOB-48x1", "os": os}, "spine": {"ports": 48, "port_gbps": 10, "os": os}}
        designs.append((f"prod-{os}", data))
        two = copy.deepcopy(data)
        two["oob"].update({"spines": 2, "leaf_uplinks": 2})
        designs.append((f"two-spines-{os}", two))
    return designs


@pytest.mark.parametrize("name", [path.stem.removeprefix("Pulumi.") for path in sorted((ROOT / "stacks").glob("Pulumi.*.yaml"))])
def test_every_example_oob_forwards_without_loops(name: str) -> None:
    result = validate(name)
    if not result.ok or not isinstance(result, Valid) or result.spec.oob is None:
        pytest.skip(f"{name}: no oob network rendered")
    problems, _ = check_oob(render_configs(result.spec, result.topology), result.topology)
    assert problems == []


@pytest.mark.parametrize(("name", "data"), _oob_designs(), ids=[name for name, _ in _oob_designs()])
def test_oob_in_every_dialect(name: str, data: dict[str, Any]) -> None:
    result = validate_mapping("t", data)
    assert isinstance(result, Valid)
    errors = [(f.rule, f.message) for f in result.findings if str(f.severity) == "error" and not f.suppressed]
    assert errors == []
    files = render_configs(result.spec, result.topology)
    problems, bundles = check_oob(files, result.topology)
    assert problems == []
    spines = [n for n, d in result.topology.switches("oob") if d["tier"] == "spine"]
    assert len(spines) == (2 if name.startswith("two") else 1)
    leaves = [n for n, d in result.topology.switches("oob") if d["tier"] == "leaf"]
    assert bundles.number_of_edges() == len(leaves) * len(spines)  # a bundle per leaf and spine
    if name.startswith("two"):
        assert not nx.is_forest(nx.Graph(bundles))  # the case spanning tree is there for
    else:
        assert {data["members"] for _, _, data in bundles.edges(data=True)} == {2}  # both uplinks in one bundle


def test_the_check_finds_parallel_uplinks_without_a_bundle() -> None:
    """Today's fault: the two uplinks of an oob leaf as two plain VLAN members (a loop)."""
    data = _oob_designs()[0][1]
    result = validate_mapping("t", data)
    assert isinstance(result, Valid)
    files = render_configs(result.spec, result.topology)
    db = json.loads(files["switches/oob-leaf-001/config_db.json"])
    for key in list(db["PORTCHANNEL_MEMBER"]):
        port = key.split("|")[1]
        db["VLAN_MEMBER"][f"Vlan100|{port}"] = {"tagging_mode": "untagged"}
    del db["PORTCHANNEL_MEMBER"]
    files["switches/oob-leaf-001/config_db.json"] = json.dumps(db)
    problems, _ = check_oob(files, result.topology)
    assert any("is in no bundle" in problem for problem in problems), problems
