"""LLDP neighbor files, any format `verify` reads: lldpd's own (`lldpctl -f json` and `-f json0`,
which hosts and several switch OSes run), and every format a dialect's folder declares
(cluster/dialects/<os>/lldp.py, `LLDP_FORMATS`). Each parser takes the text of one device's
output and returns `Neighbor` records in the device's own words; mapping them onto design names
happens in `cluster.verify.observe`.
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
from collections.abc import Mapping
from functools import cache
from types import MappingProxyType
from typing import Any

from cluster.dialects import platforms
from cluster.inputs import excerpt
from cluster.lldp import (
    LldpFormat,
    Neighbor,
    NeighborFormatError,
    candidate_ports,
    first_of,
    first_value,
    is_mac,
    lldpd_age,
    load_json,
    mau_gbps,
    one_or_many,
    text_of,
)

__all__ = ["Neighbor", "NeighborFormatError", "detect_lldp_format", "is_mac", "lldp_formats", "parse_lldp"]


def parse_lldpctl_json(text: str) -> list[Neighbor]:
    """`lldpctl -f json`: {"lldp": {"interface": [{"swp1": {...}}] or {"swp1": {...}}}}."""
    return read_lldpctl_json(load_json(text, "`lldpctl -f json` output"))


def read_lldpctl_json(data: Any) -> list[Neighbor]:
    """`lldpctl -f json`, loaded."""
    if not isinstance(data, dict) or not isinstance(data.get("lldp"), dict):
        raise NeighborFormatError('expected `lldpctl -f json` output: an object with an "lldp" object')
    neighbors: list[Neighbor] = []
    append = neighbors.append  # a million neighbors at 131,072 GPUs: each step here is paid as often
    for item in one_or_many(data["lldp"].get("interface")):
        if not isinstance(item, dict):
            raise NeighborFormatError('expected "interface" entries to be objects keyed by interface name')
        for local, entry in item.items():
            if not isinstance(entry, dict):
                raise NeighborFormatError(f"interface {excerpt(local)}: expected an object")
            chassis = entry.get("chassis") or {}
            # The chassis is keyed by the system name; without one lldpd keys it by "id": keep that as the device.
            name, described = _system(chassis) if isinstance(chassis, dict) else ("", None)
            port = entry.get("port") or {}
            if not isinstance(port, dict):
                raise NeighborFormatError(f'interface {excerpt(local)}: expected "port" to be an object')
            port_id = port.get("id", {})
            port_id_value = port_id.get("value") if isinstance(port_id, dict) else None
            negotiation = port.get("auto-negotiation")
            append(Neighbor(sys.intern(local), name, candidate_ports(port_id_value, port.get("descr")),
                            lldpd_age(entry.get("age")),
                            mau_gbps(negotiation.get("current")) if isinstance(negotiation, dict) else None,
                            text_of(described)))
    return neighbors


def _system(chassis: dict[str, Any]) -> tuple[str, Any]:
    """A chassis object's system name ("" when it is keyed by "id") and description."""
    for name, value in chassis.items():
        if isinstance(value, dict):
            return ("" if name == "id" else sys.intern(name)), value.get("descr")
    return "", None


def parse_lldpctl_json0(text: str) -> list[Neighbor]:
    """`lldpctl -f json0`: the same data with every level a list (stable shape)."""
    return read_lldpctl_json0(load_json(text, "`lldpctl -f json0` output"))


def read_lldpctl_json0(data: Any) -> list[Neighbor]:
    """`lldpctl -f json0`, loaded."""
    if not isinstance(data, dict) or not isinstance(data.get("lldp"), list):
        raise NeighborFormatError('expected `lldpctl -f json0` output: an object with an "lldp" list')
    neighbors: list[Neighbor] = []
    for block in data["lldp"]:
        interfaces = block.get("interface", []) if isinstance(block, dict) else None
        if not isinstance(interfaces, list):
            raise NeighborFormatError('expected "lldp" entries to be objects with an "interface" list')
        for entry in interfaces:
            if not isinstance(entry, dict) or not isinstance(entry.get("name"), str):
                raise NeighborFormatError('expected every "interface" entry to have a "name"')
            chassis, port = first_of(entry.get("chassis")), first_of(entry.get("port"))
            negotiation = first_of(port.get("auto-negotiation"))
            neighbors.append(Neighbor(
                local_port=entry["name"],
                remote_device=text_of(first_value(chassis.get("name"))),
                remote_ports=candidate_ports(first_of(port.get("id")).get("value"), first_value(port.get("descr"))),
                age=lldpd_age(entry.get("age")),
                gbps=mau_gbps(first_value(negotiation.get("current"))),
                remote_description=text_of(first_value(chassis.get("descr"))),
            ))
    return neighbors


def _is_lldpctl(data: Any) -> bool:
    return isinstance(data, dict) and isinstance(data.get("lldp"), dict)


def _is_lldpctl0(data: Any) -> bool:
    return isinstance(data, dict) and isinstance(data.get("lldp"), list)


LLDPD_FORMATS = (
    LldpFormat("lldpctl-json", "`lldpctl -f json`", True, _is_lldpctl, parse_lldpctl_json, read_lldpctl_json),
    LldpFormat("lldpctl-json0", "`lldpctl -f json0`", True, _is_lldpctl0, parse_lldpctl_json0, read_lldpctl_json0),
)


@cache
def lldp_formats() -> Mapping[str, LldpFormat]:
    """Every format, lldpd's first, then each dialect's in name order."""
    found = list(LLDPD_FORMATS)
    for name in platforms():
        module = f"cluster.dialects.{name}.lldp"
        if importlib.util.find_spec(module) is not None:
            found.extend(importlib.import_module(module).LLDP_FORMATS)
    return MappingProxyType({form.name: form for form in found})


def formats_known() -> str:
    """The formats in words, for messages: "`lldpctl -f json`, ... or EOS `show lldp ...`"."""
    names = [form.collected for form in lldp_formats().values()]
    return ", ".join(names[:-1]) + " or " + names[-1]


def detect_lldp_format(text: str) -> str:
    """Which of `lldp_formats()` a file is, from its shape."""
    return _detected(text)[0].name


def _detected(text: str) -> tuple[LldpFormat, Any]:
    """The format of a file, and what it is recognised on: its loaded JSON, or its text."""
    stripped = text.lstrip()
    is_json = stripped.startswith(("{", "["))
    data = load_json(text, "LLDP neighbor JSON") if is_json else text
    for form in lldp_formats().values():
        if form.json == is_json and form.recognise(data):
            return form, data
    raise NeighborFormatError(f"unrecognised {'JSON' if is_json else 'neighbor file'}: expected {formats_known()}")


def parse_lldp(text: str) -> list[Neighbor]:
    """Any supported LLDP format, detected from its shape.

    The parsers check every level they read (fuzzed in tests/test_verify_fuzz.py); should a
    shape still slip through, it is reported as a format error, never as a traceback.
    """
    form, data = _detected(text)
    try:
        return form.read(data) if form.read is not None else form.parse(text)
    except NeighborFormatError:
        raise
    except (KeyError, IndexError, TypeError, AttributeError, ValueError) as error:
        raise NeighborFormatError(f"unexpected {form.name} structure ({type(error).__name__}: {excerpt(str(error))})") from None
