"""Neighbor data as devices report it: one small pure function per input format.

Each LLDP parser takes the text of one device's output and returns `Neighbor` records in the
device's own words (local interface, the remote's system name, the remote port's id and
description); mapping them onto design names happens in `cluster.verify.observe`. Every
parser raises `NeighborFormatError` with a message saying what was expected, never a bare
KeyError or TypeError, and quotes the input only as an excerpt (cluster.inputs.excerpt): a
file may be anything, a dotenv file with passwords or megabytes on one line included.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from cluster.inputs import excerpt


class NeighborFormatError(ValueError):
    """Input that is not the format it claims to be."""


@dataclass(frozen=True)
class Neighbor:
    """One neighbor seen on one local port.

    `remote_ports` lists what the remote port may be called, preferred first (port id, then
    description: Linux hosts send their MAC as port id and the name only as description).
    `age` is seconds since the entry appeared or last changed (smaller = fresher), `gbps` the
    link speed when the format reports it.
    """

    local_port: str
    remote_device: str
    remote_ports: tuple[str, ...]
    age: float | None = None
    gbps: float | None = None


MAC = re.compile(r"^[0-9a-f]{2}([:-]?[0-9a-f]{2}){5}$|^[0-9a-f]{4}\.[0-9a-f]{4}\.[0-9a-f]{4}$", re.IGNORECASE)
# Bounded digit runs: a value no device reports becomes "unknown", never a 5,000-digit int().
LLDPD_AGE = re.compile(r"^\s*(\d{1,9})\s+days?,\s*(\d{1,9}):(\d{1,9}):(\d{1,9})\s*$")
DIGITS = re.compile(r"\d{1,12}")
MAU_SPEED = re.compile(r"^(\d+)(G|M)(?:ig)?base", re.IGNORECASE)


def is_mac(text: str) -> bool:
    return bool(MAC.match(text.strip()))


def lldpd_age(text: object) -> float | None:
    """lldpd's "0 day, 00:01:05" -> 65.0 seconds."""
    if not isinstance(text, str):
        return None
    match = LLDPD_AGE.match(text)
    if match is None:
        return None
    days, hours, minutes, seconds = (int(group) for group in match.groups())
    return float(((days * 24 + hours) * 60 + minutes) * 60 + seconds)


def mau_gbps(text: object) -> float | None:
    """An 802.3 MAU type as lldpd prints it ("100GbaseCR4 - ...", "10GigBaseR") -> Gb/s."""
    if not isinstance(text, str):
        return None
    match = MAU_SPEED.match(text.strip())
    if match is None:
        return None
    value = float(match.group(1))
    return value if match.group(2).upper() == "G" else value / 1000


def _bounded_int(digits: str) -> int:
    # No device reports a number of hundreds of digits; Python refuses to convert one over 4,300.
    if len(digits.lstrip("-")) > 40:
        raise NeighborFormatError(f"a number of {len(digits):,} digits, which no device reports")
    return int(digits)


def _load_json(text: str, what: str) -> Any:
    try:
        return json.loads(text, parse_int=_bounded_int)
    except json.JSONDecodeError as error:
        raise NeighborFormatError(f"not JSON ({error.msg} at line {error.lineno}); expected {what}") from None
    except RecursionError:
        raise NeighborFormatError(f"JSON nested deeper than any device output; expected {what}") from None


def _ports(*candidates: object) -> tuple[str, ...]:
    """Distinct non-empty candidate port names, in order."""
    result: list[str] = []
    for value in candidates:
        if isinstance(value, str) and value.strip() and value.strip() not in result:
            result.append(value.strip())
    return tuple(result)


def _one_or_many(value: Any) -> list[Any]:
    """lldpctl -f json prints one item as an object and several as a list."""
    if value is None:
        return []
    return value if isinstance(value, list) else [value]


def parse_lldpctl_json(text: str) -> list[Neighbor]:
    """`lldpctl -f json`: {"lldp": {"interface": [{"swp1": {...}}] or {"swp1": {...}}}}."""
    data = _load_json(text, "`lldpctl -f json` output")
    if not isinstance(data, dict) or not isinstance(data.get("lldp"), dict):
        raise NeighborFormatError('expected `lldpctl -f json` output: an object with an "lldp" object')
    neighbors: list[Neighbor] = []
    for item in _one_or_many(data["lldp"].get("interface")):
        if not isinstance(item, dict):
            raise NeighborFormatError('expected "interface" entries to be objects keyed by interface name')
        for local, entry in item.items():
            if not isinstance(entry, dict):
                raise NeighborFormatError(f"interface {excerpt(local)}: expected an object")
            chassis = entry.get("chassis") or {}
            names = [name for name, value in chassis.items() if isinstance(value, dict)] if isinstance(chassis, dict) else []
            # Without a system name lldpd keys the chassis by "id"; keep it as the device.
            device = names[0] if names and names[0] != "id" else ""
            port = entry.get("port") or {}
            if not isinstance(port, dict):
                raise NeighborFormatError(f'interface {excerpt(local)}: expected "port" to be an object')
            port_id = port.get("id", {})
            port_id_value = port_id.get("value") if isinstance(port_id, dict) else None
            negotiation = port.get("auto-negotiation")
            neighbors.append(Neighbor(
                local_port=local,
                remote_device=device,
                remote_ports=_ports(port_id_value, port.get("descr")),
                age=lldpd_age(entry.get("age")),
                gbps=mau_gbps(negotiation.get("current")) if isinstance(negotiation, dict) else None,
            ))
    return neighbors


def _object(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _first(items: Any) -> dict[str, Any]:
    """json0 wraps every level in a list: the first object, or {}."""
    return items[0] if isinstance(items, list) and items and isinstance(items[0], dict) else {}


def _first_value(items: Any) -> Any:
    """json0 wraps every value: [{"value": "x"}] -> "x"."""
    return _first(items).get("value")


def _text(value: Any) -> str:
    return value.strip() if isinstance(value, str) else ""


def _number(value: Any) -> float | None:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def parse_lldpctl_json0(text: str) -> list[Neighbor]:
    """`lldpctl -f json0`: the same data with every level a list (stable shape)."""
    data = _load_json(text, "`lldpctl -f json0` output")
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
            chassis, port = _first(entry.get("chassis")), _first(entry.get("port"))
            negotiation = _first(port.get("auto-negotiation"))
            neighbors.append(Neighbor(
                local_port=entry["name"],
                remote_device=_text(_first_value(chassis.get("name"))),
                remote_ports=_ports(_first(port.get("id")).get("value"), _first_value(port.get("descr"))),
                age=lldpd_age(entry.get("age")),
                gbps=mau_gbps(_first_value(negotiation.get("current"))),
            ))
    return neighbors


def _sonic_rows(data: Any) -> dict[str, dict[str, Any]]:
    """A SONiC APPL_DB dump: {"KEY": {field: value}} or sonic-db-dump's {"KEY": {"value": {...}}}."""
    if not isinstance(data, dict):
        raise NeighborFormatError("expected a SONiC APPL_DB dump: an object keyed by table:key")
    rows: dict[str, dict[str, Any]] = {}
    for key, value in data.items():
        if isinstance(value, dict) and isinstance(value.get("value"), dict) and "type" in value:
            value = value["value"]
        if not isinstance(value, dict):
            raise NeighborFormatError(f"{excerpt(str(key))}: expected an object of fields")
        rows[str(key)] = value
    return rows


def parse_sonic_appl_db(text: str) -> list[Neighbor]:
    """SONiC APPL_DB `LLDP_ENTRY_TABLE:<port>` rows (from `sonic-db-dump -n APPL_DB`).

    Rows of `PORT_TABLE:<port>` in the same dump add each local port's speed (Mb/s).
    `lldp_rem_time_mark` is lldp_syncd's copy of lldpd's age in seconds.
    """
    rows = _sonic_rows(_load_json(text, "a SONiC APPL_DB dump (sonic-db-dump -n APPL_DB -k 'LLDP_ENTRY_TABLE:*' -y)"))
    speeds: dict[str, float] = {}
    for key, row in rows.items():
        table, _, port = key.partition(":")
        if table == "PORT_TABLE" and DIGITS.fullmatch(str(row.get("speed", ""))):
            speeds[port] = int(row["speed"]) / 1000
    neighbors: list[Neighbor] = []
    for key, row in sorted(rows.items()):
        table, _, port = key.partition(":")
        if table != "LLDP_ENTRY_TABLE":
            continue
        mark = str(row.get("lldp_rem_time_mark", ""))
        neighbors.append(Neighbor(
            local_port=port,
            remote_device=_text(row.get("lldp_rem_sys_name")),
            remote_ports=_ports(row.get("lldp_rem_port_id"), row.get("lldp_rem_port_desc")),
            age=float(mark) if DIGITS.fullmatch(mark) else None,
            gbps=speeds.get(port),
        ))
    if not neighbors and not any(key.startswith("PORT_TABLE:") for key in rows):
        raise NeighborFormatError("no LLDP_ENTRY_TABLE rows: expected a SONiC APPL_DB dump")
    return neighbors


SONIC_TABLE_COLUMNS = ("LocalPort", "RemoteDevice", "RemotePortID", "Capability", "RemotePortDescr")


def parse_sonic_show_lldp_table(text: str) -> list[Neighbor]:
    """SONiC `show lldp table`: fixed-width columns under a header line, cut at header offsets.

    Every column is at least as wide as its longest cell, so a row has blank space before each
    column's offset; a line that runs across one is not a row of the table."""
    lines = text.splitlines()
    header = next((index for index, line in enumerate(lines) if line.split()[:3] == list(SONIC_TABLE_COLUMNS[:3])), None)
    if header is None:
        raise NeighborFormatError("expected `show lldp table` output with a LocalPort RemoteDevice RemotePortID header")
    starts = [lines[header].index(column) for column in SONIC_TABLE_COLUMNS]
    neighbors: list[Neighbor] = []
    for number, line in enumerate(lines[header + 1:], start=header + 2):
        if not line.strip() or set(line.strip()) <= {"-", " "} or line.startswith("Total entries"):
            continue
        if any(start <= len(line) and not line[start - 1].isspace() for start in starts[1:]):
            raise NeighborFormatError(f"`show lldp table` line {number}: not a row under the header's columns: "
                                      f"{excerpt(line.strip())}")
        cells = [line[start:end].strip() for start, end in zip(starts, [*starts[1:], len(line)], strict=True)]
        if not cells[0] or not cells[1]:
            raise NeighborFormatError(f"`show lldp table` line {number}: a row without a local port or device: "
                                      f"{excerpt(line.strip())}")
        neighbors.append(Neighbor(local_port=cells[0], remote_device=cells[1], remote_ports=_ports(cells[2], cells[4])))
    return neighbors


def parse_nvue_lldp_json(text: str) -> list[Neighbor]:
    """Cumulus NVUE interfaces with their LLDP neighbors (REST `GET /nvue_v1/interface?view=lldp-detail`,
    CLI `nv show interface lldp-detail -o json`):
    {ifname: {"lldp": {"neighbor": {system-name: {"age", "chassis", "port": {"name", "description", "type"}}}}}}.
    """
    data = _load_json(text, "NVUE interface JSON (nv show interface lldp-detail -o json)")
    if not isinstance(data, dict):
        raise NeighborFormatError("expected NVUE interface JSON: an object keyed by interface name")
    neighbors: list[Neighbor] = []
    for local, body in sorted(data.items()):
        if not isinstance(body, dict):
            raise NeighborFormatError(f"interface {excerpt(local)}: expected an object")
        lldp = body.get("lldp")
        per_neighbor = lldp.get("neighbor") if isinstance(lldp, dict) else None
        if per_neighbor is None:
            continue
        if not isinstance(per_neighbor, dict):
            raise NeighborFormatError(f'interface {excerpt(local)}: expected "lldp.neighbor" to be an object')
        for name, entry in per_neighbor.items():
            if not isinstance(entry, dict):
                raise NeighborFormatError(f"interface {excerpt(local)} neighbor {excerpt(name)}: expected an object")
            chassis = _object(entry.get("chassis"))
            port = _object(entry.get("port"))
            age = entry.get("age")
            neighbors.append(Neighbor(
                local_port=local,
                remote_device=_text(chassis.get("system-name")) or str(name),
                remote_ports=_ports(port.get("name"), port.get("description")),
                age=_number(age) if _number(age) is not None else lldpd_age(age),
            ))
    return neighbors


def parse_eos_lldp_json(text: str) -> list[Neighbor]:
    """Arista EOS `show lldp neighbors detail | json`.

    Newer EOS gives `interfaceId_v2` (plain) beside `interfaceId`; older EOS only `interfaceId`,
    quoted ('"Ethernet1"'). Ages come from `lastChangeTime` relative to the newest
    `lastContactTime` in the file (the moment of collection).
    """
    data = _load_json(text, "`show lldp neighbors detail | json` output")
    if not isinstance(data, dict) or not isinstance(data.get("lldpNeighbors"), dict):
        raise NeighborFormatError('expected EOS `show lldp neighbors detail | json`: an object with "lldpNeighbors"')
    entries: list[tuple[str, dict[str, Any]]] = []
    for local, body in data["lldpNeighbors"].items():
        if not isinstance(body, dict) or not isinstance(body.get("lldpNeighborInfo", []), list):
            raise NeighborFormatError(f'interface {excerpt(local)}: expected "lldpNeighborInfo" to be a list')
        entries.extend((local, info) for info in body.get("lldpNeighborInfo", []) if isinstance(info, dict))
    now = max((_number(info.get("lastContactTime")) or 0.0 for _, info in entries), default=0.0)
    neighbors: list[Neighbor] = []
    for local, info in entries:
        interface = _object(info.get("neighborInterfaceInfo"))
        port_id = _text(interface.get("interfaceId_v2")) or _text(interface.get("interfaceId")).strip('"')
        changed = _number(info.get("lastChangeTime"))
        neighbors.append(Neighbor(
            local_port=local,
            remote_device=_text(info.get("systemName")),
            remote_ports=_ports(port_id, interface.get("interfaceDescription")),
            age=max(0.0, now - changed) if changed is not None and now else None,
        ))
    return neighbors


LLDP_PARSERS = {
    "lldpctl-json": parse_lldpctl_json,
    "lldpctl-json0": parse_lldpctl_json0,
    "sonic-appl-db": parse_sonic_appl_db,
    "sonic-show-lldp-table": parse_sonic_show_lldp_table,
    "nvue": parse_nvue_lldp_json,
    "eos": parse_eos_lldp_json,
}


def detect_lldp_format(text: str) -> str:
    """Which of LLDP_PARSERS a file is, from its shape."""
    stripped = text.lstrip()
    if not stripped.startswith(("{", "[")):
        if "LocalPort" in text and "RemoteDevice" in text:
            return "sonic-show-lldp-table"
        raise NeighborFormatError(
            "unrecognised neighbor file: expected lldpctl -f json/json0, a SONiC APPL_DB dump or "
            "`show lldp table`, NVUE or EOS LLDP JSON")
    data = _load_json(text, "LLDP neighbor JSON")
    if isinstance(data, dict):
        if isinstance(data.get("lldp"), dict):
            return "lldpctl-json"
        if isinstance(data.get("lldp"), list):
            return "lldpctl-json0"
        if "lldpNeighbors" in data:
            return "eos"
        if any(str(key).startswith(("LLDP_ENTRY_TABLE:", "PORT_TABLE:")) for key in data):
            return "sonic-appl-db"
        if all(isinstance(value, dict) for value in data.values()) and any(
                isinstance(value.get("lldp"), dict) for value in data.values()):
            return "nvue"
        if not data:
            return "nvue"
    raise NeighborFormatError(
        "unrecognised JSON: expected lldpctl -f json/json0 (\"lldp\"), EOS (\"lldpNeighbors\"), a SONiC "
        "APPL_DB dump (\"LLDP_ENTRY_TABLE:<port>\" keys) or NVUE interfaces with \"lldp\"")


def parse_lldp(text: str) -> list[Neighbor]:
    """Any supported LLDP format, detected from its shape.

    The parsers check every level they read (fuzzed in tests/test_verify_fuzz.py); should a
    shape still slip through, it is reported as a format error, never as a traceback.
    """
    form = detect_lldp_format(text)
    try:
        return LLDP_PARSERS[form](text)
    except NeighborFormatError:
        raise
    except (KeyError, IndexError, TypeError, AttributeError, ValueError) as error:
        raise NeighborFormatError(f"unexpected {form} structure ({type(error).__name__}: {excerpt(str(error))})") from None
