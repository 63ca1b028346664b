"""Hostile neighbor files: any JSON in any of the recognised shapes, and random text, either parses
or raises NeighborFormatError (which the CLI prints as exit 2). Never another exception."""

from __future__ import annotations

import contextlib
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cluster.verify.infiniband import parse_ib, parse_node_name_map
from cluster.verify.parsers import NeighborFormatError, detect_lldp_format, lldp_formats, parse_lldp

SCALARS = st.none() | st.booleans() | st.integers(-5, 10**6) | st.floats(allow_nan=False) | st.text(max_size=12)
JSON = st.recursive(SCALARS, lambda inner: st.lists(inner, max_size=4) | st.dictionaries(
    st.sampled_from(["lldp", "interface", "swp1", "chassis", "port", "id", "value", "descr", "name", "age",
                     "auto-negotiation", "current", "neighbor", "system-name", "lldpNeighborInfo",
                     "neighborInterfaceInfo", "interfaceId", "interfaceId_v2", "systemName", "lastChangeTime",
                     "lastContactTime", "type"]) | st.text(max_size=8), inner, max_size=4), max_leaves=20)
ROOTS = st.one_of(
    st.builds(lambda v: {"lldp": v}, JSON),
    st.builds(lambda v: {"lldpNeighbors": v}, JSON),
    st.builds(lambda k, v: {f"LLDP_ENTRY_TABLE:{k}": v, "PORT_TABLE:Ethernet0": {"speed": "x"}}, st.text(max_size=6), JSON),
    st.builds(lambda v: {"swp1": {"lldp": v}}, JSON),
    JSON,
)


def parses_or_refuses(text: str) -> None:
    with contextlib.suppress(NeighborFormatError):
        parse_lldp(text)


@pytest.mark.slow
@settings(max_examples=400, deadline=None)
@given(ROOTS)
def test_any_json_shape_parses_or_is_refused(data: Any) -> None:
    parses_or_refuses(json.dumps(data))


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=200))
def test_any_text_parses_or_is_refused(text: str) -> None:
    parses_or_refuses(text)
    parses_or_refuses("LocalPort    RemoteDevice    RemotePortID    Capability  RemotePortDescr\n" + text)


IB_LINES = st.lists(st.sampled_from([
    'Switch\t8 "S-0000000000200000"\t\t# "leaf1" base port 0 lid 0 lmc 0',
    '[1]\t"H-0000000000100000"[1](100001) \t\t# "h1 mlx5_0" lid 0 4xHDR',
    'Ca\t1 "H-0000000000100000"\t\t# "h1 mlx5_0"',
    '[1](100001) \t"S-0000000000200000"[1]\t\t# lid 0 lmc 0 "leaf1" lid 0 4xHDR',
    "CA     0  1 0x0000000000100001 4x HDR - SW     0  1 0x0000000000200000 ( 'h1 mlx5_0' - 'leaf1' )",
    "SW     0  8 0x0000000000200000 4x SDR                                    'leaf1'",
    "[2] garbage", "# comment", "",
]) | st.text(max_size=30), max_size=12)


@settings(max_examples=300, deadline=None)
@given(IB_LINES)
def test_any_ibnetdiscover_text_parses_or_is_refused(lines: list[str]) -> None:
    for parser in (parse_ib, parse_node_name_map):
        with contextlib.suppress(NeighborFormatError):
            parser("\n".join(lines))


FIXTURES = sorted(
    path for path in (Path(__file__).parent / "data" / "verify").rglob("*.json") if path.parent.name != "ib")
REPLACEMENTS = st.none() | st.booleans() | st.integers(-3, 3) | st.text(max_size=5) | st.just([]) | st.just({}) | \
    st.just([5]) | st.just({"value": 1}) | st.just([{"value": []}])


def paths(node: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    found = [prefix]
    if isinstance(node, dict):
        for key, value in node.items():
            found += paths(value, (*prefix, key))
    elif isinstance(node, list):
        for index, value in enumerate(node):
            found += paths(value, (*prefix, index))
    return found


def replaced(node: Any, path: tuple[Any, ...], value: Any) -> Any:
    if not path:
        return value
    copy = dict(node) if isinstance(node, dict) else list(node)
    copy[path[0]] = replaced(node[path[0]], path[1:], value)
    return copy


@settings(max_examples=600, deadline=None)
@given(st.sampled_from(FIXTURES), st.data())
def test_mutated_real_fixtures_parse_or_are_refused_by_their_own_parser(fixture: Path, data: st.DataObject) -> None:
    document = json.loads(fixture.read_text())
    form = detect_lldp_format(fixture.read_text())
    for _ in range(data.draw(st.integers(1, 3))):
        path = data.draw(st.sampled_from(paths(document)))
        document = replaced(document, path, data.draw(REPLACEMENTS))
    with contextlib.suppress(NeighborFormatError):
        lldp_formats()[form].parse(json.dumps(document))  # the parser itself, without parse_lldp's safety net
