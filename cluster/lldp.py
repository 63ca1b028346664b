"""Neighbor data as devices report it, in the device's own words: the `Neighbor` record every LLDP
parser returns, the error it raises, the helpers the parsers share, and `LldpFormat`, how a format
is recognised and read. The generic lldpd formats are in cluster.verify.parsers; a switch OS's own
formats are in its dialect's folder (cluster/dialects/<os>/lldp.py).

Every parser raises `NeighborFormatError` with a message saying what was expected, never a bare
KeyError or TypeError, and quotes the input only as an excerpt (cluster.inputs.excerpt): a file may
be anything, a dotenv file with passwords or megabytes on one line included.
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, NamedTuple


class NeighborFormatError(ValueError):
    """Input that is not the format it claims to be."""


class Neighbor(NamedTuple):  # one per cabled port reported, a million at 131,072 GPUs: a tuple builds fastest
    """One neighbor seen on one local port.

    `remote_ports` lists what the remote port may be called, preferred first (port id, then
    description: Linux hosts send their MAC as port id and the name only as description).
    `age` is seconds since the entry appeared or last changed (smaller = fresher), `gbps` the
    link speed when the format reports it, `remote_description` the neighbor's system
    description where the format carries it (a switch names its model there).
    """

    local_port: str
    remote_device: str
    remote_ports: tuple[str, ...]
    age: float | None = None
    gbps: float | None = None
    remote_description: str = ""


@dataclass(frozen=True)
class LldpFormat:
    """One LLDP output format: how it is collected (for messages), how it is recognised (on the
    parsed JSON when `json`, else on the text) and read."""

    name: str
    collected: str  # how a person collects it: "`lldpctl -f json`"
    json: bool
    recognise: Callable[[Any], bool]
    parse: Callable[[str], list[Neighbor]]
    #: A JSON format's parse of the document already loaded (to recognise it): a file is loaded once.
    read: Callable[[Any], list[Neighbor]] | None = None


MAC = re.compile(r"^[0-9a-f]{2}([:-]?[0-9a-f]{2}){5}$|^[0-9a-f]{4}\.[0-9a-f]{4}\.[0-9a-f]{4}$", re.IGNORECASE)
# Bounded digit runs: a value no device reports becomes "unknown", never a 5,000-digit int().
LLDPD_AGE = re.compile(r"^\s*(\d{1,9})\s+days?,\s*(\d{1,9}):(\d{1,9}):(\d{1,9})\s*$")
DIGITS = re.compile(r"\d{1,12}")
# lldpd names 10G and faster `10GbaseT`, `400GbaseCR8`, and slower ones in Mb/s with no unit:
# `1000BaseTFD`, `100BaseTXFD`.
MAU_SPEED = re.compile(r"^(\d{1,5})(G|M)?(?:ig)?base", re.IGNORECASE)


def is_mac(text: str) -> bool:
    stripped = text.strip()
    return 12 <= len(stripped) <= 17 and bool(MAC.match(stripped))  # (the lengths MAC matches: most names are not)


def lldpd_age(text: object) -> float | None:
    """lldpd's "0 day, 00:01:05" -> 65.0 seconds."""
    if not isinstance(text, str):
        return None
    return _lldpd_age(text) if len(text) <= REMEMBERED_CHARACTERS else _lldpd_age.__wrapped__(text)


#: A file repeats a handful of ages and speeds on every port: each is read once (what no device
#: sends, a longer value, is read every time rather than kept).
REMEMBERED_CHARACTERS = 64


@lru_cache(maxsize=4096)
def _lldpd_age(text: str) -> float | None:
    match = LLDPD_AGE.match(text)
    if match is None:
        return None
    days, hours, minutes, seconds = (int(group) for group in match.groups())
    return float(((days * 24 + hours) * 60 + minutes) * 60 + seconds)


def mau_gbps(text: object) -> float | None:
    """An 802.3 MAU type as lldpd prints it ("100GbaseCR4 - ...", "10GigBaseR", "1000BaseTFD") -> Gb/s."""
    if not isinstance(text, str):
        return None
    return _mau_gbps(text) if len(text) <= REMEMBERED_CHARACTERS else _mau_gbps.__wrapped__(text)


@lru_cache(maxsize=4096)
def _mau_gbps(text: str) -> float | None:
    match = MAU_SPEED.match(text.strip())
    if match is None:
        return None
    value = float(match.group(1))
    return value if (match.group(2) or "").upper() == "G" else value / 1000


def bounded_int(digits: str) -> int:
    # No device reports a number of hundreds of digits; Python refuses to convert one over 4,300.
    if len(digits.lstrip("-")) > 40:
        raise NeighborFormatError(f"a number of {len(digits):,} digits, which no device reports")
    return int(digits)


def load_json(text: str, what: str) -> Any:
    try:
        return json.loads(text, parse_int=bounded_int)
    except json.JSONDecodeError as error:
        raise NeighborFormatError(f"not JSON ({error.msg} at line {error.lineno}); expected {what}") from None
    except RecursionError:
        raise NeighborFormatError(f"JSON nested deeper than any device output; expected {what}") from None


def candidate_ports(port_id: object, description: object) -> tuple[str, ...]:
    """The distinct non-empty names a remote port may be called, its port id first (each name,
    and each pair of names, kept once in memory: the same ports are reported across a fabric)."""
    if isinstance(port_id, str) and isinstance(description, str) and len(port_id) + len(description) <= REMEMBERED_CHARACTERS:
        return _candidate_ports(port_id, description)
    return _candidate_ports.__wrapped__(port_id, description)


@lru_cache(maxsize=4096)
def _candidate_ports(*candidates: object) -> tuple[str, ...]:
    result: list[str] = []
    for value in candidates:
        if isinstance(value, str):
            name = value.strip()
            if name and name not in result:
                result.append(sys.intern(name))
    return tuple(result)


def one_or_many(value: Any) -> list[Any]:
    """lldpctl -f json prints one item as an object and several as a list."""
    if value is None:
        return []
    return value if isinstance(value, list) else [value]


def object_of(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def first_of(items: Any) -> dict[str, Any]:
    """json0 wraps every level in a list: the first object, or {}."""
    return items[0] if isinstance(items, list) and items and isinstance(items[0], dict) else {}


def first_value(items: Any) -> Any:
    """json0 wraps every value: [{"value": "x"}] -> "x"."""
    return first_of(items).get("value")


def text_of(value: Any) -> str:
    """A reported text, stripped; kept once in memory (a system name or description is reported
    by each of the device's neighbors)."""
    return sys.intern(value.strip()) if isinstance(value, str) else ""


def number_of(value: Any) -> float | None:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


