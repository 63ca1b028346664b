"""Stable allocation: growing one pool renumbers nothing that already existed."""

from __future__ import annotations

from typing import Any

import pytest

from cluster.addressing import Addresses, allocate, pow2, switch_slot
from cluster.pipeline import Valid, validate_mapping
from tests.conftest import run, stack


def design(a_nodes: int, b_nodes: int) -> Addresses:
    data: dict[str, Any] = {
        "name": "grow", "target": "onprem",
        "node_pools": [{"name": "a", "nodes": a_nodes, "gpu": "H200"}, {"name": "b", "nodes": b_nodes, "gpu": "H200"}],
        "policy": {"suppress": ["FAB-N1"]},
    }
    result = validate_mapping("grow", data)
    assert result.ok, [f.message for f in result.findings if str(f.severity) == "error"]
    assert isinstance(result, Valid)
    addresses = allocate(result.spec, result.topology)
    assert addresses.findings == []
    return addresses


def test_growing_a_pool_keeps_every_existing_loopback_asn_and_host_address() -> None:
    small, grown = design(8, 8), design(8, 40)
    assert set(small.loopbacks) < set(grown.loopbacks)  # more leaf groups after growing
    for switch, loopback in small.loopbacks.items():
        assert grown.loopbacks[switch] == loopback, switch
        assert grown.asns[switch] == small.asns[switch], switch
    hosts_a = {key: value for key, value in small.links.items() if key[0].startswith("a-node-")}
    assert hosts_a and all(grown.links[key] == value for key, value in hosts_a.items())
    hosts_b = {key: value for key, value in small.links.items() if key[0].startswith("b-node-")}
    assert all(grown.links.get(key) == value for key, value in hosts_b.items())


def test_every_address_is_unique() -> None:
    addresses = design(8, 40)
    ends = [value for value in addresses.links.values()]
    assert len(ends) == len(set(ends))
    assert len(set(addresses.loopbacks.values())) == len(addresses.loopbacks)


@pytest.mark.parametrize(("data", "planes", "expected"), [
    ({"network": "fabric", "tier": "leaf", "index": 2, "plane": 0, "group": 2, "rail": 2}, 1,
     ("fabric-leaf", (2 * 8 + 2) * 1)),
    ({"network": "fabric", "tier": "leaf", "index": 0, "plane": 1, "group": 0, "rail": 0}, 2, ("fabric-leaf", 1)),
    ({"network": "fabric", "tier": "leaf", "index": 1, "plane": 0, "group": 1, "rail": None}, 1, ("fabric-leaf", 8)),
    ({"network": "fabric", "tier": "spine", "index": 3, "plane": 1, "group": None, "rail": None}, 2,
     ("fabric-spine", 3 * 2 + 1)),
    ({"network": "storage", "tier": "spine", "index": 1, "plane": 0, "group": None, "rail": None}, 1, ("storage", 3)),
    ({"network": "oob", "tier": "leaf", "index": 0, "plane": 0, "group": None, "rail": None}, 1, None),
])
def test_slots_come_from_the_switch_fields(data: dict[str, Any], planes: int,
                                           expected: tuple[str, int] | None) -> None:
    assert switch_slot(data, rails=8, planes=planes) == expected


@pytest.mark.parametrize("fabric", [
    {"planes": 2},
    {"design": "rack-tor"},
    {"leaf": {"ports": 32, "port_gbps": 400}, "spine": {"ports": 32, "port_gbps": 400}},  # three tiers
])
def test_every_switch_name_is_made_of_its_fields(fabric: dict[str, Any]) -> None:
    """Addresses come from the fields, never from parsing names back: the two must agree."""
    result = run(stack(fabric=fabric, node_pools=[{"name": "h200", "nodes": 128, "gpu": "H200"}]))
    assert isinstance(result, Valid), [str(f) for f in result.findings]
    planes = result.spec.fabric.planes if result.spec.fabric else 1
    prefixes = {"fabric": "", "storage": "stor-", "management": "mgmt-", "oob": "oob-"}
    tiers = set()
    for name, data in result.topology.switches():
        tiers.add(data["tier"])
        plane = f"p{data['plane']}-" if data["network"] == "fabric" and planes > 1 else ""
        rail = f"-r{data['rail']}" if data["rail"] is not None else ""
        assert name == f"{plane}{prefixes[data['network']]}{data['tier']}-{data['index'] + 1:03d}{rail}", (name, data)
        if data["tier"] == "leaf" and data["network"] == "fabric":
            assert data["group"] == data["index"]
    assert "spine" in tiers


def test_pow2() -> None:
    assert [pow2(n) for n in (0, 1, 2, 3, 8, 9)] == [1, 1, 2, 4, 8, 16]


def test_default_pools_address_the_largest_auto_sized_design() -> None:
    """131,072 GPUs on 128-port switches, no addressing given: the defaults widen where they must
    (fabric_links to a /11), the summary says so, and ADDR-POOL passes."""
    from benchmarks.designs import stack as benchmark_stack
    from cluster.report import summary

    data = benchmark_stack(131_072)
    del data["addressing"]
    result = validate_mapping("big", data)
    assert result.ok, [f.message for f in result.findings if str(f.severity) == "error"]
    assert isinstance(result, Valid)
    assert result.spec.addressing.fabric_links == "10.64.0.0/11"
    assert result.spec.addressing.loopbacks == "10.0.0.0/16" and result.spec.addressing.hosts == "10.128.0.0/10"
    assert summary(result.spec, result.topology)["widened_pools"] == {"fabric_links": ["10.64.0.0/11", "10.64.0.0/12"]}


@pytest.mark.slow
def test_a_pool_the_user_gives_is_never_widened() -> None:
    from benchmarks.designs import stack as benchmark_stack

    data = benchmark_stack(131_072)
    data["addressing"] = {"fabric_links": "10.64.0.0/12"}
    result = validate_mapping("big", data)
    problems = [f for f in result.findings if f.rule == "ADDR-POOL"]
    assert problems and all(f.path == "addressing.fabric_links" and "use a /11 or larger fabric_links pool" in f.hint
                            for f in problems)
    assert isinstance(result, Valid) and result.spec.derived_pools == ()


@pytest.mark.parametrize("network", ["storage_nics", "management_nics"])
def test_dual_port_storage_and_management_nics_give_every_port_its_own_address(network: str) -> None:
    """Port p of NIC n is one place of the node's block (n x ports_per_nic + p): with (p, 0) pairs for
    every port, a dual-port NIC's ports ran past the node's block into the next node's addresses."""
    pool = {"name": "a", "nodes": 4, "gpu": "H200", network: {"count": 2, "gbps": 100, "ports_per_nic": 2}}
    result = validate_mapping("dual", {"name": "dual", "target": "onprem", "node_pools": [pool]})
    assert isinstance(result, Valid)
    addresses = allocate(result.spec, result.topology)
    kind = network.removesuffix("_nics")
    hosts = [value for (lower, _, key, _), value in addresses.links.items() if key == kind and lower.startswith("a-")]
    assert len(hosts) == 4 * 4 and len(set(hosts)) == len(hosts)
    labels = {edge["ports"] for _, key, edge in result.topology.cables("a-node-001") if key == kind}
    assert labels == {((0, 0), (0, 1), (1, 0), (1, 1))}
