"""InfiniBand discoveries: `ibnetdiscover` (plain and `-p`) and node-name maps, as pure parsers.

Both outputs name every link with both ends (node GUID or port GUID, port number, node
description) and the link's active width and speed, so a whole fabric comes from one file.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from cluster.inputs import excerpt
from cluster.verify.parsers import NeighborFormatError

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


def _link(a: IbPort, b: IbPort, width: str, speed: str) -> IbLink:
    first, second = sorted((a, b))
    return IbLink(first, second, int(width), speed)


def parse_ibnetdiscover(text: str) -> list[IbLink]:
    """Plain `ibnetdiscover`: node blocks, one line per connected port; each link appears twice."""
    links: dict[tuple[tuple[int, int], tuple[int, int]], IbLink] = {}
    node: tuple[str, int, str] | None = None
    descriptions: dict[int, str] = {}
    pending: list[tuple[IbPort, str, int, int, str, str, str]] = []
    seen_header = False
    for number, line in enumerate(text.splitlines(), start=1):
        stripped = line.strip()
        header = HEADER.match(stripped)
        if header:
            seen_header = True
            kind, guid = KIND[header.group(1)], int(header.group(3), 16)
            node = (kind, guid, header.group(4) or "")
            descriptions[guid] = node[2]
            continue
        if not stripped.startswith("["):
            continue
        if node is None:
            raise NeighborFormatError(f"ibnetdiscover line {number}: a port line before any Switch/Ca header")
        match = (SWITCH_PORT if node[0] == "SW" else CA_PORT).match(stripped)
        if match is None:
            raise NeighborFormatError(f"ibnetdiscover line {number}: unreadable port line {excerpt(stripped)}")
        port, peer_kind, peer_guid, peer_port, peer_desc, width, speed = match.groups()
        pending.append((IbPort(node[0], node[1], int(port), node[2]), KIND[peer_kind], int(peer_guid, 16),
                        int(peer_port), peer_desc, width, speed))
    if not seen_header:
        raise NeighborFormatError("expected `ibnetdiscover` output: no Switch or Ca node found")
    for a, peer_kind, peer_guid, peer_port, peer_desc, width, speed in pending:
        b = IbPort(peer_kind, peer_guid, peer_port, descriptions.get(peer_guid, peer_desc))
        link = _link(a, b, width, speed)
        links.setdefault(((link.a.guid, link.a.port), (link.b.guid, link.b.port)), link)
    return [links[key] for key in sorted(links)]


PORTS_LINE = re.compile(
    r"^(SW|CA|RT)\s+\d+\s+(\d+)\s+0x([0-9a-fA-F]+)\s+(\d+)x\s+(\S+)\s+-\s+(SW|CA|RT)\s+\d+\s+(\d+)\s+"
    r"0x([0-9a-fA-F]+)\s+\(\s+'(.*)'\s+-\s+'(.*)'\s+\)\s*$")
UNLINKED_LINE = re.compile(r"^(SW|CA|RT)\s+\d+\s+\d+\s+0x[0-9a-fA-F]+\s+\d+x\s+\S+\s+'.*'\s*$")


def parse_ibnetdiscover_ports(text: str) -> list[IbLink]:
    """`ibnetdiscover -p`: one line per port, `CA 0 1 0xGUID 4x EDR - SW 0 1 0xGUID ( 'a' - 'b' )`."""
    links: dict[tuple[tuple[int, int], tuple[int, int]], IbLink] = {}
    lines = 0
    for number, line in enumerate(text.splitlines(), start=1):
        stripped = line.strip()
        if not stripped or stripped.startswith("#") or UNLINKED_LINE.match(stripped):
            lines += bool(stripped and not stripped.startswith("#"))
            continue
        match = PORTS_LINE.match(stripped)
        if match is None:
            raise NeighborFormatError(f"ibnetdiscover -p line {number}: unreadable {excerpt(stripped)}")
        lines += 1
        kind, port, guid, width, speed, peer_kind, peer_port, peer_guid, desc, peer_desc = match.groups()
        link = _link(IbPort(kind, int(guid, 16), int(port), desc),
                     IbPort(peer_kind, int(peer_guid, 16), int(peer_port), peer_desc), width, speed)
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
    for number, line in enumerate(text.splitlines(), start=1):
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            continue
        match = MAP_LINE.match(stripped)
        if match is None:
            raise NeighborFormatError(f'node-name map line {number}: expected `0xGUID "name"`, found {excerpt(stripped)}')
        names[int(match.group(1), 16)] = match.group(2)
    return names
