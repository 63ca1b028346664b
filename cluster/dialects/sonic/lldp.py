"""SONiC's own LLDP outputs: the APPL_DB rows lldp_syncd writes, and `show lldp table`."""

from __future__ import annotations

from typing import Any

from cluster.inputs import excerpt
from cluster.lldp import DIGITS, LldpFormat, Neighbor, NeighborFormatError, candidate_ports, load_json, text_of


def _rows(data: Any) -> dict[str, dict[str, Any]]:
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
    return read_sonic_appl_db(load_json(text, "a SONiC APPL_DB dump (sonic-db-dump -n APPL_DB -k 'LLDP_ENTRY_TABLE:*' -y)"))


def read_sonic_appl_db(data: Any) -> list[Neighbor]:
    """SONiC APPL_DB `LLDP_ENTRY_TABLE:<port>` rows, loaded."""
    rows = _rows(data)
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
            remote_device=text_of(row.get("lldp_rem_sys_name")),
            remote_ports=candidate_ports(row.get("lldp_rem_port_id"), row.get("lldp_rem_port_desc")),
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
        neighbors.append(Neighbor(local_port=cells[0], remote_device=cells[1], remote_ports=candidate_ports(cells[2], cells[4])))
    return neighbors


def _is_appl_db(data: Any) -> bool:
    return isinstance(data, dict) and any(str(key).startswith(("LLDP_ENTRY_TABLE:", "PORT_TABLE:")) for key in data)


def _is_table(text: Any) -> bool:
    return isinstance(text, str) and "LocalPort" in text and "RemoteDevice" in text


LLDP_FORMATS = (
    LldpFormat("sonic-appl-db", "SONiC `sonic-db-dump -n APPL_DB`", True, _is_appl_db, parse_sonic_appl_db,
               read_sonic_appl_db),
    LldpFormat("sonic-show-lldp-table", "SONiC `show lldp table`", False, _is_table, parse_sonic_show_lldp_table),
)
