"""Stable identities: changing a stack never renames or renumbers what still exists.

What the product promises (DESIGN.md, principle 5 and the cabling semantics):
- A host is `<pool>-node-NNN` by its index in its pool; a switch is named by its network, tier,
  plane, leaf group and rail. So growing, shrinking, adding or removing pools, or adding a
  network, keeps the name (and role) of every host and switch that still exists, the rendered
  files named after them and the Pulumi resources (URNs) of the program; loopbacks and ASNs
  follow the switch name.
- Pools are laid out in file order: a host's leaf group is its position in the whole cluster
  (earlier pools first) // nodes_per_leaf. Growing or shrinking an earlier pool therefore moves
  every host of the later pools by that many positions, and so possibly to another leaf group:
  the names stay, the cabling of those hosts changes. Tested below as documented behaviour.

What does not hold is marked `xfail(strict=True)` with the finding as the reason: the test stays
as strict as the promise, and turns into a failure the day the behaviour is fixed, so that the
mark is removed then.
"""

from __future__ import annotations

import copy
import functools
from collections.abc import Callable
from typing import Any

import pytest

from cluster.addressing import allocate
from cluster.artifacts import render_tree
from cluster.pipeline import Result, Valid, validate_mapping
from cluster.spec import Nics, PoolSpec
from cluster.topology import Topology, host_name, leaf_name

# Small leaves (16 x 400G) so that a few dozen nodes already fill several leaf groups.
BASE: dict[str, Any] = {
    "name": "ident",
    "target": "onprem",
    "node_pools": [
        {"name": "a", "nodes": 16, "gpu": "H200"},
        {"name": "b", "nodes": 8, "gpu": "H200"},
    ],
    "fabric": {"leaf": {"ports": 16, "port_gbps": 400}, "spine": {"ports": 64, "port_gbps": 400}},
}
NO_STORAGE_NICS = {"count": 0, "gbps": 200}
C = {"name": "c", "nodes": 4, "gpu": "H200"}


def _pools(change: Callable[[list[dict[str, Any]]], None]) -> Callable[[dict[str, Any]], None]:
    return lambda data: change(data["node_pools"])


def _storage_nics(data: dict[str, Any]) -> None:
    for pool in data["node_pools"]:
        pool["storage_nics"] = {"count": 2, "gbps": 200}


# name -> (base variant, change); `grows` means nothing may disappear, `shrinks` nothing may appear.
VARIANTS: dict[str, tuple[str, Callable[[dict[str, Any]], None], str]] = {
    "grow a by one": ("base", _pools(lambda p: p[0].update(nodes=17)), "grows"),
    "grow a by a leaf group": ("base", _pools(lambda p: p[0].update(nodes=24)), "grows"),
    "shrink a": ("base", _pools(lambda p: p[0].update(nodes=9)), "shrinks"),
    "grow b": ("base", _pools(lambda p: p[1].update(nodes=20)), "grows"),
    "grow b by one": ("base", _pools(lambda p: p[1].update(nodes=9)), "grows"),
    "shrink b": ("base", _pools(lambda p: p[1].update(nodes=1)), "shrinks"),
    "add a pool at the end": ("base", _pools(lambda p: p.append(dict(C))), "grows"),
    "add a pool first": ("base", _pools(lambda p: p.insert(0, dict(C))), "grows"),
    "remove the first pool": ("base", _pools(lambda p: p.pop(0)), "shrinks"),
    "add a storage section": ("base", lambda d: d.update(storage={"leaf": {"ports": 32, "port_gbps": 200}}), "any"),
    "add a management section": ("base", lambda d: d.update(management={"leaf": {"switch": "MGMT-48x25"}}), "any"),
    "add a storage network": ("no-storage", _storage_nics, "grows"),
    "add a fourth pool at the end": ("three-pools", _pools(lambda p: p.append(dict(C))), "grows"),
}


def _base(name: str) -> dict[str, Any]:
    data = copy.deepcopy(BASE)
    if name == "three-pools":
        data["node_pools"].append({"name": "d", "nodes": 4, "gpu": "H200"})
    if name == "no-storage":
        for pool in data["node_pools"]:
            pool["storage_nics"] = dict(NO_STORAGE_NICS)
    return data


@functools.cache
def built(variant: str | None, base: str = "base") -> Valid:
    data = _base(base)
    if variant is not None:
        base_name, change, _ = VARIANTS[variant]
        data = _base(base_name)
        change(data)
    result = validate_mapping("ident", data)
    assert isinstance(result, Valid) and result.exit_code == 0, [f.message for f in result.findings]
    return result


def pair(variant: str) -> tuple[Topology, Topology]:
    before = built(None, VARIANTS[variant][0])
    after = built(variant)
    assert isinstance(before, Valid) and isinstance(after, Valid)
    return before.topology, after.topology


def switch_roles(topology: Topology) -> dict[str, tuple[Any, ...]]:
    return {name: (d["network"], d["tier"], d["plane"], d["group"], d["rail"], d["model"])
            for name, d in topology.switches()}


def test_the_base_spans_several_leaf_groups() -> None:
    plan = built(None).topology.fabric_plan
    assert plan is not None and plan.groups >= 3 and plan.spines >= 2
    assert built(None, "no-storage").topology.network_plans["storage"].leaves == 0


# --------------------------------------------------------------------------- names


@pytest.mark.parametrize("variant", sorted(VARIANTS))
def test_hosts_keep_their_names(variant: str) -> None:
    before, after = pair(variant)
    common = set(before.hosts_by_pool) & set(after.hosts_by_pool)
    assert common
    for pool in common:
        old, new = before.hosts_by_pool[pool], after.hosts_by_pool[pool]
        kept = min(len(old), len(new))
        assert old[:kept] == new[:kept], pool
        for host in old[:kept]:
            assert (before.graph.nodes[host]["pool"], before.graph.nodes[host]["index"]) == (
                after.graph.nodes[host]["pool"], after.graph.nodes[host]["index"])


@pytest.mark.parametrize("variant", sorted(VARIANTS))
def test_switches_keep_their_names_and_roles(variant: str) -> None:
    before, after = pair(variant)
    old, new = switch_roles(before), switch_roles(after)
    direction = VARIANTS[variant][2]
    if direction == "grows":
        assert set(old) <= set(new), sorted(set(old) - set(new))
    elif direction == "shrinks":
        assert set(new) <= set(old), sorted(set(new) - set(old))
    changed = {name: (old[name], new[name]) for name in set(old) & set(new)
               if old[name][:5] != new[name][:5]}  # the model may change when a section is added
    assert not changed
    if variant == "add a storage network":
        assert any(name.startswith("stor-leaf-") for name in new) and not any(n.startswith("stor-") for n in old)


@pytest.mark.parametrize("variant", sorted(VARIANTS))
def test_loopbacks_and_asns_follow_switch_names(variant: str) -> None:
    before, after = built(None, VARIANTS[variant][0]), built(variant)
    old = allocate(before.spec, before.topology)
    new = allocate(after.spec, after.topology)
    common = set(old.loopbacks) & set(new.loopbacks)
    assert common
    assert {s: old.loopbacks[s] for s in common} == {s: new.loopbacks[s] for s in common}
    common_asns = set(old.asns) & set(new.asns)
    assert {s: old.asns[s] for s in common_asns} == {s: new.asns[s] for s in common_asns}


@pytest.mark.parametrize("variant", sorted(VARIANTS))
def test_rendered_files_keep_their_names(variant: str) -> None:
    before, after = built(None, VARIANTS[variant][0]), built(variant)
    old = set(render_tree(before.spec, before.topology))
    new = set(render_tree(after.spec, after.topology))
    direction = VARIANTS[variant][2]
    if direction == "grows":
        assert old <= new, sorted(old - new)
    elif direction == "shrinks":
        assert new <= old, sorted(new - old)


# --------------------------------------------------------------------------- host addresses


def host_addresses(result: Result) -> dict[tuple[str, str, int, int], int]:
    """(host, network, nic, port) -> host-side address, whichever leaf the port is cabled to."""
    assert isinstance(result, Valid)
    links = allocate(result.spec, result.topology).links
    graph = result.topology.graph
    found = {}
    for host, upper, network, edge in graph.edges(keys=True, data=True):
        if graph.nodes[host]["kind"] != "host":
            host, upper = upper, host
        if graph.nodes[host]["kind"] != "host":
            continue
        for index, (nic, port) in enumerate(edge["ports"]):
            if (host, upper, network, index) in links:
                found[(host, network, nic, port)] = links[(host, upper, network, index)]
    return found


STABLE_ADDRESSES = ["grow a by one", "grow a by a leaf group", "shrink a", "grow b", "grow b by one", "shrink b",
                    "add a storage section", "add a management section", "add a storage network",
                    "add a fourth pool at the end"]  # 3 -> 4 pools: no power of two crossed
FINDING_POOL_INDEX = (
    "FINDING: host address blocks follow the pool's position in the file (cluster/addressing.py): "
    "appending a pool moves nothing, but inserting or removing an earlier pool renumbers the hosts "
    "of the pools after it; DESIGN.md principle 5 promises allocation by stable name"
)


@pytest.mark.parametrize(
    "variant",
    [*STABLE_ADDRESSES, "add a pool at the end",
     *(pytest.param(v, marks=pytest.mark.xfail(strict=True, raises=AssertionError, reason=FINDING_POOL_INDEX))
       for v in ("add a pool first", "remove the first pool"))],
)
def test_host_addresses_of_existing_hosts_do_not_change(variant: str) -> None:
    old = host_addresses(built(None, VARIANTS[variant][0]))
    new = host_addresses(built(variant))
    common = set(old) & set(new)
    assert common
    assert {k: old[k] for k in common if old[k] != new[k]} == {}


@pytest.mark.parametrize(("change", "new_pool"), [
    (lambda pools: pools.insert(0, {**C, "address_block": 2}), "c"),
    (lambda pools: pools.pop(0), None),
    (lambda pools: pools.insert(1, {**C, "address_block": 5}), "c"),
])
def test_with_an_address_block_on_every_pool_inserting_or_removing_one_renumbers_nothing(
        change: Callable[[list[dict[str, Any]]], None], new_pool: str | None) -> None:
    """The remedy for FINDING_POOL_INDEX: blocks by address_block, not by position in the file."""
    data = _base("base")
    for block, pool in enumerate(data["node_pools"]):
        pool["address_block"] = block
    before = validate_mapping("ident", data)
    changed = copy.deepcopy(data)
    change(changed["node_pools"])
    after = validate_mapping("ident", changed)
    assert before.exit_code == 0 and after.exit_code == 0, [f.message for f in after.findings]
    old, new = host_addresses(before), host_addresses(after)
    common = old.keys() & new.keys()
    assert common and {key: (old[key], new[key]) for key in common if old[key] != new[key]} == {}
    if new_pool is not None:  # and the new pool's hosts are clear of everyone else's
        added = {value for key, value in new.items() if key[0].startswith(f"{new_pool}-")}
        assert added and not added & {value for key, value in new.items() if not key[0].startswith(f"{new_pool}-")}


@pytest.mark.parametrize(("blocks", "path"), [
    ((1, None), "node_pools[1].address_block"),  # b takes block 1 by its position
    ((0, 0), "node_pools[1].address_block"),
])
def test_two_pools_on_one_address_block_are_a_schema_error(blocks: tuple[int | None, int | None], path: str) -> None:
    data = _base("base")
    for block, pool in zip(blocks, data["node_pools"], strict=True):
        if block is not None:
            pool["address_block"] = block
    result = validate_mapping("ident", data)
    assert result.exit_code == 2
    [finding] = [f for f in result.findings if f.rule == "SCHEMA"]
    assert finding.path == path and "already has" in finding.message and "address_block" in finding.hint


# --------------------------------------------------------------------------- leaf-group membership


def leaf_groups(topology: Topology) -> dict[str, set[int]]:
    graph = topology.graph
    return {host: {graph.nodes[leaf]["group"] for _, leaf, key in graph.edges(host, keys=True) if key == "fabric"}
            for hosts in topology.hosts_by_pool.values() for host in hosts}


@pytest.mark.parametrize("variant", [None, *sorted(VARIANTS)])
def test_leaf_group_is_the_hosts_position_in_file_order(variant: str | None) -> None:
    result = built(variant)
    assert isinstance(result, Valid)
    topology = result.topology
    assert topology.fabric_plan is not None
    plan = topology.fabric_plan
    position = 0
    groups = leaf_groups(topology)
    for hosts in topology.hosts_by_pool.values():  # pools in file order
        for host in hosts:
            assert topology.graph.nodes[host]["cluster_index"] == position
            assert groups[host] == {min(position // plan.nodes_per_leaf, plan.groups - 1)}, host
            position += 1


def test_growing_an_earlier_pool_shifts_the_later_pools() -> None:
    before, after = pair("grow a by a leaf group")
    grown = len(after.hosts_by_pool["a"]) - len(before.hosts_by_pool["a"])
    for host in before.hosts_by_pool["b"]:
        assert after.graph.nodes[host]["cluster_index"] == before.graph.nodes[host]["cluster_index"] + grown


FINDING_SPREAD = (
    "FINDING: nodes_per_leaf = ceil(nodes / groups) spreads hosts evenly over the leaf groups, so adding "
    "even one node anywhere (or a pool at the end) can change nodes_per_leaf and re-cable existing hosts "
    "of every pool to other leaves (names stay; switch port maps and host cabling change)"
)


SPREAD_MOVES = ["add a pool at the end", "grow b by one", "add a fourth pool at the end"]


@pytest.mark.xfail(strict=True, raises=AssertionError, reason=FINDING_SPREAD)
@pytest.mark.parametrize("variant", SPREAD_MOVES)
def test_appending_nodes_keeps_existing_hosts_on_their_leaves(variant: str) -> None:
    before, after = pair(variant)
    old, new = leaf_groups(before), leaf_groups(after)
    assert {host: (old[host], new[host]) for host in old if host in new and old[host] != new[host]} == {}


def packed(variant: str | None, base: str = "base") -> Valid:
    """`built`, with fabric.fill: packed (each leaf group filled to capacity, in order)."""
    data = _base(VARIANTS[variant][0] if variant else base)
    if variant is not None:
        VARIANTS[variant][1](data)
    data["fabric"]["fill"] = "packed"
    result = validate_mapping("ident", data)
    assert isinstance(result, Valid) and result.exit_code == 0, [f.message for f in result.findings]
    return result


@pytest.mark.parametrize("variant", [*SPREAD_MOVES, "grow b"])
def test_packed_fill_keeps_existing_hosts_on_their_leaves_when_nodes_are_appended(variant: str) -> None:
    """The remedy for FINDING_SPREAD: with fill: packed, appending nodes (a pool at the end, or
    growing the last pool) never moves a cabled host, and no host address changes either."""
    before, after = packed(None, VARIANTS[variant][0]), packed(variant)
    assert isinstance(before, Valid) and isinstance(after, Valid)
    old, new = leaf_groups(before.topology), leaf_groups(after.topology)
    assert old.keys() <= new.keys()
    assert {host: (old[host], new[host]) for host in old if old[host] != new[host]} == {}
    old_addresses, new_addresses = host_addresses(before), host_addresses(after)
    assert {key: value for key, value in old_addresses.items() if new_addresses.get(key) != value} == {}
    if variant in SPREAD_MOVES:  # where the default spread does move hosts (FINDING_SPREAD)
        spread_old, spread_new = (leaf_groups(topology) for topology in pair(variant))
        assert any(spread_old[host] != spread_new[host] for host in spread_old)


# --------------------------------------------------------------------------- name widths

# Numbers are at least three digits and grow past 999 without renaming the others.


def _pool(nodes: int) -> PoolSpec:
    nics = Nics(count=8, gbps=400)
    return PoolSpec(name="a", index=0, nodes=nodes, gpu="H200", gpus_per_node=8, nvlink_domain=8, server=None,
                    instance_type=None, fabric_nics=nics, fabric_kind="roce", storage_nics=nics,
                    management_nics=nics)


def test_host_names_survive_the_thousandth_node() -> None:
    assert host_name(_pool(999), 0) == host_name(_pool(1000), 0) == "a-node-001"
    assert host_name(_pool(1000), 999) == "a-node-1000"


def test_leaf_names_survive_the_thousandth_group() -> None:
    assert leaf_name(1, 0, 0, 0, True) == "leaf-001-r0"
    assert leaf_name(1, 0, 999, 3, True) == "leaf-1000-r3"


def test_names_below_the_width_boundary_are_stable() -> None:
    assert host_name(_pool(10), 0) == host_name(_pool(999), 0) == "a-node-001"


# --------------------------------------------------------------------------- Pulumi resources


def urns(stack: str, data: dict[str, Any]) -> set[str]:
    from components.offline import run  # the program under the SDK's mocks, as `plan` runs it

    outcome = run(stack, data)
    assert outcome.failure is None, outcome.failure
    return {resource.urn for resource in outcome.resources}


@pytest.mark.parametrize("variant", ["grow a by one", "shrink b", "add a pool at the end", "add a pool first",
                                     "remove the first pool", "add a storage network"])
def test_pulumi_resources_keep_their_urns(variant: str) -> None:
    base_name, change, direction = VARIANTS[variant]
    data = _base(base_name)
    change(data)
    old, new = urns("ident", _base(base_name)), urns("ident", data)
    if direction == "grows":
        assert old <= new, sorted(old - new)[:5]
    else:
        assert new <= old, sorted(new - old)[:5]


def test_cloud_resources_keep_their_urns_when_pools_grow_or_are_added() -> None:
    from tests.hostile_bases import CLOUD

    grown = copy.deepcopy(CLOUD)
    grown["node_pools"][0]["nodes"] *= 4
    # (a pool of another type takes no part in the cluster's Capacity Block: one type per reservation)
    grown["node_pools"].append({"name": "p5", "nodes": 2, "instance_type": "p5.48xlarge",
                                "cloud": {"market": "on-demand", "reservation": "none"}})
    old, new = urns("cloud", CLOUD), urns("cloud", grown)
    assert old < new, sorted(old - new)[:5]


# --------------------------------------------------------------------------- what `diff` proposes for them
# The strict xfails above hold the defaults to the promise. `diff` says when a change moves existing
# hosts, and which stack-file keys would keep them: each proposal is applied here by the test itself
# (not by the code that proposes it) and the hosts' leaves and addresses are compared again.


def _apply(data: dict[str, Any], edits: tuple[Any, ...]) -> dict[str, Any]:
    data = copy.deepcopy(data)
    for edit in edits:
        if edit.path == "node_pools":
            order = edit.value.removeprefix("in the order ").split(", ")
            data["node_pools"] = sorted(data["node_pools"], key=lambda pool: order.index(pool["name"]))
        elif edit.path == "fabric.fill":
            data["fabric"]["fill"] = edit.value
        else:
            index = int(edit.path.removeprefix("node_pools[").split("]")[0])
            assert edit.path.endswith("].address_block")
            data["node_pools"][index]["address_block"] = int(edit.value)
    return data


def _kept(variant: str) -> tuple[Any, Valid, Valid]:
    from cluster.change.compare import compare
    from cluster.change.keep import keeping

    base_name = VARIANTS[variant][0]
    old, new = built(None, base_name), built(variant)
    return keeping(old, new, compare(old, new)), old, new


def _moved(old: Valid, new: Valid) -> tuple[dict[str, Any], dict[Any, Any]]:
    groups, addresses = (leaf_groups(old.topology), leaf_groups(new.topology)), (host_addresses(old),
                                                                                  host_addresses(new))
    return ({host: groups[1][host] for host in groups[0].keys() & groups[1].keys() if groups[0][host] != groups[1][host]},
            {key: addresses[1][key] for key in addresses[0].keys() & addresses[1].keys()
             if addresses[0][key] != addresses[1][key]})


@pytest.mark.parametrize(("variant", "keys", "all_kept"), [
    ("add a pool first", {"node_pools", "fabric.fill"}, True),
    ("add a pool at the end", {"fabric.fill"}, True),
    ("grow b by one", {"fabric.fill"}, True),
    ("remove the first pool", {"node_pools[0].address_block"}, False),
])
def test_diff_proposes_the_keys_that_keep_existing_hosts_and_they_do(variant: str, keys: set[str],
                                                                     all_kept: bool) -> None:
    kept, old, new = _kept(variant)
    assert kept is not None and not kept.disturbed.none
    assert {edit.path for edit in kept.edits} == keys
    data = _base(VARIANTS[variant][0])
    VARIANTS[variant][1](data)
    edited = validate_mapping("ident", _apply(data, kept.edits))
    assert isinstance(edited, Valid) and edited.ok
    leaves, addresses = _moved(old, edited)
    assert addresses == {}  # every proposal keeps every existing host's addresses
    assert (leaves == {}) is all_kept and kept.left.none is all_kept
    assert len(_moved(old, new)[1]) > 0 or len(_moved(old, new)[0]) > len(leaves)


def test_diff_says_why_when_no_key_keeps_the_hosts() -> None:
    kept, _old, _new = _kept("add a fourth pool at the end")
    assert kept is not None and kept.edits == () and not kept.left.none
    assert [reason.split(" (")[0] for reason in kept.reasons] == ["the old design spreads its nodes evenly over the "
                                                                  "leaf groups"]
    removed, _old, _new = _kept("remove the first pool")
    assert removed is not None and removed.reasons[0].startswith("pool a (removed) is cabled before pool b,")


@pytest.mark.parametrize("variant", ["grow b", "add a storage network"])
def test_diff_proposes_nothing_when_no_existing_host_moves(variant: str) -> None:
    kept, old, new = _kept(variant)
    assert kept is None and _moved(old, new) == ({}, {})
