"""What the devices report, as links between named ports: the input of an import.

The neighbor data is read by the parsers `verify` uses (every LLDP format of
cluster.verify.parsers, ibnetdiscover plain and `-p`, a node-name map), with the same bounds and
the same CABLE-INPUT findings for a file that cannot be read. Reported names are taken as the
devices give them, less a domain (`leaf-001-r0.dc1.example.com` is `leaf-001-r0`); a port is
taken by its name, not a MAC (Linux hosts send the MAC as port id and the name as description).
Each port gets one peer, the freshest report first (cluster.verify.match.resolve), so a port
that still lists its old neighbor after re-cabling is no second link.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from pathlib import Path

from cluster.findings import Finding, printable
from cluster.lldp import Neighbor, is_mac
from cluster.topology import gc_paused
from cluster.verify.check import IB_HINT, IB_MAP_HINT
from cluster.verify.expected import BMC_PORT, End
from cluster.verify.infiniband import IbLink, IbPort, parse_ib, parse_node_name_map
from cluster.verify.match import Claim, Link, resolve, uncontested
from cluster.verify.observe import BMC_SUFFIXES, parsed, read_lldp_dir

#: What a description is read for (a model name) fits in far less; a device may send anything.
DESCRIPTION_CHARACTERS = 256
SHOWN_CHARACTERS = 60


@dataclass
class Observed:
    """Every link the data shows, the system description each device is reported with, and
    every input that could not be read (then nothing is imported).

    `lldp` and `ib` keep the parsed input for the comparison with the imported design;
    `reporting` are the devices with a neighbor file, `discovered` is set when an InfiniBand
    discovery walked the fabric (every fabric device has reported then).
    """

    links: list[Link]
    descriptions: dict[str, str]
    problems: list[Finding]
    lldp: dict[str, list[Neighbor]] = field(default_factory=dict)
    ib: list[IbLink] = field(default_factory=list)
    guid_names: dict[int, str] = field(default_factory=dict)
    reporting: set[str] = field(default_factory=set)
    discovered: bool = False
    reported: Reported = field(default_factory=lambda: Reported())
    resolved_as_read: bool = False  # no two claims gave one port different peers: `links` is every claim

    @property
    def devices(self) -> set[str]:
        return {end.device for link in self.links for end in (link.a, link.b)}


def device_name(reported: str) -> str:
    """A reported system name as a device name: trimmed, lower-case, without its domain (kept
    once in memory: every neighbor of a device names it, and a port is found by its name)."""
    return sys.intern(reported.strip().split(".")[0].lower())


def port_name(candidates: tuple[str, ...]) -> str:
    """The port a neighbor is reported on: its name, not its MAC, where the data has one."""
    for candidate in candidates:
        if candidate and not is_mac(candidate):
            return candidate
    return next((candidate for candidate in candidates if candidate), "?")


def bmc_host(reported: str) -> str | None:
    """The host a BMC that names itself after it belongs to (`gpu-node-001-bmc`)."""
    name = device_name(reported)
    if not name.endswith(BMC_SUFFIXES):
        return None
    for suffix in BMC_SUFFIXES:
        if name.endswith(suffix) and len(name) > len(suffix):
            return name[: -len(suffix)]
    return None


class Reported:
    """Each name a device reports its neighbors by, read once (a host's name comes from every
    switch it is cabled to), and what the comparison with the imported design needs to know of
    how names were read (cluster.importer.same_names): each reported system name and what it was
    read as, each MAC-shaped port candidate passed over for a name, and whether every name was
    read as given otherwise (no space trimmed off a port, no candidate after the one taken)."""

    def __init__(self) -> None:
        self.devices: dict[str, tuple[str | None, str]] = {}  # reported -> (BMC's host or None, device)
        self.ports: dict[tuple[str, ...], tuple[str, tuple[str, ...], bool]] = {}  # candidates -> port_read
        self.passed_over: set[End] = set()  # (device reported, a MAC-shaped candidate not taken)
        self.as_given = True

    def device(self, reported: str) -> tuple[str | None, str]:
        known = self.devices.get(reported)
        if known is None:
            known = self.devices[reported] = (bmc_host(reported), device_name(reported))
        return known

    def port(self, candidates: tuple[str, ...]) -> tuple[str, tuple[str, ...], bool]:
        """`port_read` of a neighbor's port candidates."""
        known = self.ports.get(candidates)
        if known is None:
            known = self.ports[candidates] = port_read(candidates)
        return known


def port_read(candidates: tuple[str, ...]) -> tuple[str, tuple[str, ...], bool]:
    """`port_name` of the candidates, the MAC-shaped ones before it, and whether it is the last
    one given (no candidate after it that a design could know the port by)."""
    port = port_name(candidates)
    if port not in candidates:
        return port, (), True  # none given: `?`, as `verify` names it
    index = candidates.index(port)
    passed = tuple(candidate for candidate in candidates[:index] if candidate)  # MACs, by port_name
    return port, passed, not any(candidates[index + 1:])


def lldp_claims(device: str, neighbors: list[Neighbor], descriptions: dict[str, str],
                reported: Reported | None = None) -> list[Claim]:
    """One device's LLDP neighbors as claims in reported names (its neighbors' descriptions kept).
    A million neighbors at 131,072 GPUs: each reported name is looked up in `reported` first."""
    names = reported or Reported()
    devices, ports = names.devices, names.ports
    claims = []
    as_given = True
    for local_port, remote_name, candidates, age, gbps, description in neighbors:
        host, remote_device = devices.get(remote_name) or names.device(remote_name)
        if host:
            remote = End(host, BMC_PORT)
        else:
            port, passed, port_as_given = ports.get(candidates) or names.port(candidates)
            if passed:
                names.passed_over.update(End(remote_device, mac) for mac in passed)
            as_given = as_given and port_as_given
            remote = End(remote_device, port)
            if description and remote_device not in descriptions:
                descriptions[remote_device] = description[:DESCRIPTION_CHARACTERS]
        local = End(device, local_port.strip())
        as_given = as_given and local.port == local_port and local != remote  # (a self-claim is no link)
        claims.append(Claim(local, remote, age, gbps))
    names.as_given = names.as_given and as_given
    return claims


def ib_end(port: IbPort, guid_names: dict[int, str], descriptions: dict[str, str]) -> End:
    """An InfiniBand port: a switch port by number, an HCA port as `<hca>/<port>` of its host, as
    `verify` reads them. A switch's node description is kept for its model: a node-name map names
    a switch that still has its default one (`MF0;<host>:MQM9700/U1`)."""
    label = guid_names.get(port.guid, port.description).strip()
    if port.kind == "CA":
        host, _, hca = label.partition(" ")
        return End(device_name(host), f"{hca.strip()}/{port.port}" if hca.strip() else str(port.port))
    name = device_name(label)
    descriptions.setdefault(name, port.description[:DESCRIPTION_CHARACTERS])
    return End(name, str(port.port))


def observe(lldp: Path | None, ib: Path | None, ib_map: Path | None) -> Observed:
    """Read every input; with any unreadable, no links (the problems say which and how to fix)."""
    with gc_paused():  # a neighbor record, a claim and a link per port: millions of objects, no cycles
        return _observe(lldp, ib, ib_map)


def _observe(lldp: Path | None, ib: Path | None, ib_map: Path | None) -> Observed:
    observed = Observed(links=[], descriptions={}, problems=[])
    claims: list[Claim] = []
    if lldp is not None:
        devices, observed.problems = read_lldp_dir(lldp)
        reported = observed.reported
        for file_device, neighbors in sorted(devices.items()):
            device = device_name(file_device)
            reported.as_given = reported.as_given and device not in observed.lldp  # two files of one device
            observed.lldp[device] = neighbors
            observed.reporting.add(device)
            claims.extend(lldp_claims(device, neighbors, observed.descriptions, reported))
    if ib is not None:
        names = parsed(ib_map, "node-name map", parse_node_name_map, IB_MAP_HINT, observed.problems) if ib_map else {}
        links = parsed(ib, "ibnetdiscover output", parse_ib, IB_HINT, observed.problems)
        if links is not None and names is not None:
            observed.ib, observed.guid_names, observed.discovered = links, names, True
            for link in links:
                claims.append(Claim(ib_end(link.a, names, observed.descriptions),
                                    ib_end(link.b, names, observed.descriptions), None, link.gbps))
    if observed.problems:
        return observed
    as_read = uncontested(claims)
    observed.resolved_as_read = as_read is not None
    observed.links = as_read if as_read is not None else resolve(claims, {})
    return observed


def shown_description(description: str) -> str:
    """A reported description as a comment or a message quotes it: printable, at most 60 characters."""
    text = printable(" ".join(description.split()))
    return text if len(text) <= SHOWN_CHARACTERS else text[: SHOWN_CHARACTERS - 3] + "..."
