"""Stable allocation: growing one pool renumbers nothing that already existed."""

from __future__ import annotations

from typing import Any

import pytest

from cluster.addressing import Addresses, allocate, pow2, switch_slot
from cluster.pipeline import validate_mapping


def design(a_nodes: int, b_nodes: int) -> Addresses:
    data: dict[str, Any] = {
        "name": "grow", "target": "onprem",
        "node_pools": [{"name": "a", "nodes": a_nodes, "gpu": "H200"}, {"name": "b", "nodes": b_nodes, "gpu": "H200"}],
        "policy": {"suppress": ["FAB-N1"]},
    }
    result = validate_mapping("grow", data)
    assert result.ok, [f.message for f in result.findings if str(f.severity) == "error"]
    assert result.spec is not None and result.topology is not None
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


@pytest.mark.parametrize(("name", "data", "expected"), [
    ("leaf-003-r2", {"network": "fabric"}, ("fabric-leaf", (2 * 8 + 2) * 1)),
    ("p1-leaf-001-r0", {"network": "fabric"}, ("fabric-leaf", 1)),
    ("p1-spine-004", {"network": "fabric"}, ("fabric-spine", 3 * 2 + 1)),
    ("stor-spine-002", {"network": "storage"}, ("storage", 3)),
    ("oob-leaf-001", {"network": "oob"}, None),
])
def test_slots_come_from_names(name: str, data: dict[str, Any], expected: tuple[str, int] | None) -> None:
    planes = 2 if name.startswith("p") else 1
    assert switch_slot(name, data, rails=8, planes=planes) == expected


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
    assert result.spec is not None and result.topology is not None
    assert result.spec.addressing.fabric_links == "10.64.0.0/11"
    assert result.spec.addressing.loopbacks == "10.0.0.0/16" and result.spec.addressing.hosts == "10.128.0.0/10"
    assert summary(result.spec, result.topology)["widened_pools"] == {"fabric_links": ["10.64.0.0/11", "10.64.0.0/12"]}


def test_a_pool_the_user_gives_is_never_widened() -> None:
    from benchmarks.designs import stack as benchmark_stack

    data = benchmark_stack(131_072)
    data["addressing"] = {"fabric_links": "10.64.0.0/12"}
    result = validate_mapping("big", data)
    problems = [f for f in result.findings if f.rule == "ADDR-POOL"]
    assert problems and all(f.path == "addressing.fabric_links" and "use a /11 or larger fabric_links pool" in f.hint
                            for f in problems)
    assert result.spec is not None and result.spec.derived_pools == ()
