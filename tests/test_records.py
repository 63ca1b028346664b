"""The graph's records (cluster/records.py) are what the builder writes: every node and edge of
every design carries exactly its record's keys, with values of the record's types."""

from __future__ import annotations

import types
import typing
from typing import Any, get_args, get_origin

import pytest

from cluster.records import CableData, HostNode, ProviderNode, SwitchNode
from tests.test_load import DESIGNS, graph_of

RECORDS: dict[str, Any] = {"host": HostNode, "switch": SwitchNode, "provider": ProviderNode}


def _fits(value: object, kind: Any) -> bool:
    """`value` is of the annotated type (ReadOnly, Literal, unions, tuples, int and str)."""
    origin = get_origin(kind)
    if origin is not None and getattr(origin, "_name", "") == "ReadOnly":
        return _fits(value, get_args(kind)[0])
    if origin is typing.Literal:
        return value in get_args(kind)
    if origin in (typing.Union, types.UnionType):
        return any(_fits(value, option) for option in get_args(kind))
    if origin is tuple:
        args = get_args(kind)
        if len(args) == 2 and args[1] is Ellipsis:
            return isinstance(value, tuple) and all(_fits(item, args[0]) for item in value)
        return isinstance(value, tuple) and len(value) == len(args) and all(map(_fits, value, args))
    if kind is type(None):
        return value is None
    if kind is int:
        return isinstance(value, int) and not isinstance(value, bool)
    return isinstance(value, kind)


@pytest.mark.parametrize("name", DESIGNS)
def test_every_node_and_edge_is_its_record(name: str) -> None:
    graph = graph_of(DESIGNS[name])
    for node, data in graph.nodes(data=True):
        hints = typing.get_type_hints(RECORDS[data["kind"]], include_extras=True)
        assert set(data) == set(hints), node
        for key, kind in hints.items():
            assert _fits(data[key], kind), (node, key, data[key])
    cable_hints = typing.get_type_hints(CableData, include_extras=True)
    for lower, upper, data in graph.edges(data=True):
        assert set(data) == set(cable_hints), (lower, upper)
        for key, kind in cable_hints.items():
            assert _fits(data[key], kind), (lower, upper, key, data[key])


def test_the_fit_check_can_fail() -> None:
    hints = typing.get_type_hints(SwitchNode, include_extras=True)
    assert not _fits("leaf-x", hints["tier"]) and _fits("leaf", hints["tier"])
    assert not _fits(None, hints["index"]) and _fits(None, hints["rail"]) and not _fits(True, hints["ports"])
    ports = typing.get_type_hints(CableData, include_extras=True)["ports"]
    assert _fits(((0, 1), (1, 0)), ports) and not _fits([(0, 1)], ports) and not _fits(((0, "1"),), ports)
