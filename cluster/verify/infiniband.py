"""InfiniBand discoveries: `ibnetdiscover` (plain and `-p`) and node-name maps, as pure parsers.

Both outputs name every link with both ends (node GUID or port GUID, port number, node
description) and the link's active width and speed, so a whole fabric comes from one file.

Hostile input is expected: every line is read in time linear in its length (no pattern here can
backtrack over a line more than a bounded number of times), a line longer than any real one is
refused before it is matched, numbers are bounded before they are converted, and an error quotes
a line only as a short excerpt (cluster.inputs.excerpt).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from cluster.inputs import excerpt
from cluster.lldp import NeighborFormatError

# Gb/s per lane (IBTA signalling rates as ibnetdiscover names them).
LANE_GBPS = {"SDR": 2.5, "DDR": 5.0, "QDR": 10.0, "FDR10": 10.0, "FDR": 14.0, "EDR": 25.0, "HDR": 50.0,
             "NDR": 100.0, "XDR": 200.0}


@dataclass(frozen=True, order=True)
class IbPort:
    """One port: node kind (SW, CA, RT), a GUID, the port number and the node description."""

    kind: str
    guid: int
    port: int
    description: str


@dataclass(frozen=True)
class IbLink:
    a: IbPort
    b: IbPort
    width: int
    speed: str

    @property
    def gbps(self) -> float | None:
        rate = LANE_GBPS.get(self.speed.upper())
        return None if rate is None else self.width * rate


HEADER = re.compile(r'^(Switch|Ca|Rt)\s+\d+\s+"([SHR])-([0-9a-fA-F]+)"\s*(?:#\s*"([^"]*)")?')
SWITCH_PORT = re.compile(
    r'^\[(\d+)\]\s+"([SHR])-([0-9a-fA-F]+)"\[(\d+)\](?:\([0-9a-fA-F]+\))?\s*#\s*"([^"]*)"\s+lid\s+\d+\s+(\d+)x(\w+)')
CA_PORT = re.compile(
    r'^\[(\d+)\](?:\([0-9a-fA-F]+\))?\s+"([SHR])-([0-9a-fA-F]+)"\[(\d+)\](?:\([0-9a-fA-F]+\))?\s*#'
    r'.*?"([^"]*)"\s+lid\s+\d+\s+(\d+)x(\w+)')
KIND = {"S": "SW", "H": "CA", "R": "RT", "Switch": "SW", "Ca": "CA", "Rt": "RT"}
#: A node description is at most 64 bytes (IBTA NodeDescription), so a real line of either form
#: stays well under this.
MAX_LINE = 1024
MAX_DIGITS = 9  # port numbers, widths, LIDs
MAX_GUID_DIGITS = 16  # 64 bits


def _lines(text: str, form: str) -> list[tuple[int, str]]:
    """(number, stripped line) of every line, refusing one longer than any `form` line can be."""
    numbered = []
    for number, line in enumerate(text.splitlines(), start=1):
        if len(line) > MAX_LINE:
            raise NeighborFormatError(f"{form} line {number} is longer than any {form} line ({MAX_LINE:,} "
                                      f"characters at most): {excerpt(line)}")
        numbered.append((number, line.strip()))
    return numbered


def _number(digits: str, what: str, where: str) -> int:
    if len(digits) > MAX_DIGITS:
        raise NeighborFormatError(f"{where}: a {what} of {len(digits):,} digits, which ibnetdiscover never prints")
    return int(digits)


def _guid(digits: str, where: str) -> int:
    if len(digits) > MAX_GUID_DIGITS:
        raise NeighborFormatError(f"{where}: a GUID of {len(digits):,} hex digits (a GUID has {MAX_GUID_DIGITS})")
    return int(digits, 16)


def _link(a: IbPort, b: IbPort, width: int, speed: str) -> IbLink:
    first, second = sorted((a, b))
    return IbLink(first, second, width, speed)


def parse_ibnetdiscover(text: str) -> list[IbLink]:
    """Plain `ibnetdiscover`: node blocks, one line per connected port; each link appears twice."""
    links: dict[tuple[tuple[int, int], tuple[int, int]], IbLink] = {}
    node: tuple[str, int, str] | None = None
    descriptions: dict[int, str] = {}
    pending: list[tuple[IbPort, str, int, int, str, int, str]] = []
    seen_header = False
    for number, stripped in _lines(text, "ibnetdiscover"):
        where = f"ibnetdiscover line {number}"
        header = HEADER.match(stripped)
        if header:
            seen_header = True
            kind, guid = KIND[header.group(1)], _guid(header.group(3), where)
            node = (kind, guid, header.group(4) or "")
            descriptions[guid] = node[2]
            continue
        if not stripped.startswith("["):
            continue
        if node is None:
            raise NeighborFormatError(f"{where}: a port line before any Switch/Ca header")
        match = (SWITCH_PORT if node[0] == "SW" else CA_PORT).match(stripped)
        if match is None:
            raise NeighborFormatError(f"{where}: unreadable port line {excerpt(stripped)}")
        port, peer_kind, peer_guid, peer_port, peer_desc, width, speed = match.groups()
        pending.append((IbPort(node[0], node[1], _number(port, "port number", where), node[2]), KIND[peer_kind],
                        _guid(peer_guid, where), _number(peer_port, "port number", where), peer_desc,
                        _number(width, "link width", where), speed))
    if not seen_header:
        raise NeighborFormatError("expected `ibnetdiscover` output: no Switch or Ca node found")
    for a, peer_kind, peer_guid, peer_port, peer_desc, width, speed in pending:
        b = IbPort(peer_kind, peer_guid, peer_port, descriptions.get(peer_guid, peer_desc))
        link = _link(a, b, width, speed)
        links.setdefault(((link.a.guid, link.a.port), (link.b.guid, link.b.port)), link)
    return [links[key] for key in sorted(links)]


# `-p` lines: both ends' fixed fields up to the opening quote of the descriptions, then
# `'a' - 'b' )`, taken apart by hand below: two free-text descriptions in one pattern (`'(.*)' - '(.*)'`)
# backtrack quadratically over a line of many quotes.
PORTS_HEAD = re.compile(
    r"(SW|CA|RT)\s+\d+\s+(\d+)\s+0x([0-9a-fA-F]+)\s+(\d+)x\s+(\S+)\s+-\s+(SW|CA|RT)\s+\d+\s+(\d+)\s+"
    r"0x([0-9a-fA-F]+)\s+\(\s+'")
DESCRIPTIONS_SEPARATOR = re.compile(r"'\s+-\s+'")
UNLINKED_HEAD = re.compile(r"(SW|CA|RT)\s+\d+\s+\d+\s+0x[0-9a-fA-F]+\s+\d+x\s+\S+\s+'")


def _descriptions(rest: str) -> tuple[str, str] | None:
    """`a' - 'b' )` -> (a, b); the last ` - ` between quotes separates them, as the greedy reading
    of the line would (a description may itself hold one)."""
    body = rest.rstrip()
    if not body.endswith(")"):
        return None
    body = body[:-1].rstrip()
    if not body.endswith("'"):
        return None
    body = body[:-1]
    separators = list(DESCRIPTIONS_SEPARATOR.finditer(body))
    if not separators:
        return None
    last = separators[-1]
    return body[: last.start()], body[last.end():]


def _unlinked(line: str) -> bool:
    """A port with no peer: `SW 0 126 0xGUID 4x SDR 'description'`."""
    head = UNLINKED_HEAD.match(line)
    return head is not None and line.rstrip().endswith("'") and len(line.rstrip()) > head.end()


def parse_ibnetdiscover_ports(text: str) -> list[IbLink]:
    """`ibnetdiscover -p`: one line per port, `CA 0 1 0xGUID 4x EDR - SW 0 1 0xGUID ( 'a' - 'b' )`."""
    links: dict[tuple[tuple[int, int], tuple[int, int]], IbLink] = {}
    lines = 0
    for number, stripped in _lines(text, "ibnetdiscover -p"):
        where = f"ibnetdiscover -p line {number}"
        if not stripped or stripped.startswith("#"):
            continue
        lines += 1
        head = PORTS_HEAD.match(stripped)
        if head is None and _unlinked(stripped):
            continue
        descriptions = _descriptions(stripped[head.end():]) if head is not None else None
        if head is None or descriptions is None:
            raise NeighborFormatError(f"{where}: unreadable {excerpt(stripped)}")
        kind, port, guid, width, speed, peer_kind, peer_port, peer_guid = head.groups()
        link = _link(IbPort(kind, _guid(guid, where), _number(port, "port number", where), descriptions[0]),
                     IbPort(peer_kind, _guid(peer_guid, where), _number(peer_port, "port number", where),
                            descriptions[1]), _number(width, "link width", where), speed)
        links.setdefault(((link.a.guid, link.a.port), (link.b.guid, link.b.port)), link)
    if not lines:
        raise NeighborFormatError("expected `ibnetdiscover -p` output: no port lines")
    return [links[key] for key in sorted(links)]


def parse_ib(text: str) -> list[IbLink]:
    """Either ibnetdiscover form, detected from its shape."""
    if HEADER.search(text) or re.search(r'^(Switch|Ca)\s+\d+\s+"', text, re.MULTILINE):
        return parse_ibnetdiscover(text)
    return parse_ibnetdiscover_ports(text)


MAP_LINE = re.compile(r'^(0x[0-9a-fA-F]+)\s+"([^"]*)"')


def parse_node_name_map(text: str) -> dict[int, str]:
    """An ibnetdiscover node-name map: `0xGUID "name"` per line, `#` comments."""
    names: dict[int, str] = {}
    lines: dict[int, int] = {}
    for number, stripped in _lines(text, "node-name map"):
        if not stripped or stripped.startswith("#"):
            continue
        match = MAP_LINE.match(stripped)
        if match is None:
            raise NeighborFormatError(f'node-name map line {number}: expected `0xGUID "name"`, found {excerpt(stripped)}')
        guid, name = _guid(match.group(1)[2:], f"node-name map line {number}"), match.group(2)
        if names.get(guid, name) != name:  # which of the two is the device? neither is taken
            raise NeighborFormatError(f"node-name map line {number}: GUID {match.group(1)} is named {excerpt(name)}, and "
                                      f"{excerpt(names[guid])} on line {lines[guid]}: give each GUID one name")
        names[guid], lines[guid] = name, number
    return names
