"""Neighbor reports -> claims in design names; reading a directory of per-device LLDP files.

A device's LLDP file is `<device>.<anything>` (the design name before the first dot), in any
format `cluster.verify.parsers` knows. Names are mapped onto the design: system names may
be fully qualified (`leaf-001-r0.dc1.example.com`), ports may be reported by alias (SONiC
advertises `etp1` for `Ethernet0`) or, from Linux hosts, as a MAC with the name in the
port description.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeVar

from cluster.findings import Finding
from cluster.inputs import Unreadable, kernel_interface, read_text_bounded
from cluster.verify.expected import BMC_PORT, End
from cluster.verify.infiniband import IbLink, IbPort
from cluster.verify.match import Claim, cable_finding
from cluster.verify.parsers import Neighbor, NeighborFormatError, formats_known, is_mac, parse_lldp

T = TypeVar("T")
MAX_FILE_BYTES = 64 * 1024 * 1024
# A BMC that speaks LLDP names itself after its host, e.g. `gpu-node-001-bmc`.
BMC_SUFFIXES = ("-bmc", "-ipmi", "-idrac", "-ilo", "-xcc")


class InputError(Exception):
    """Neighbor data that cannot be read; the message names the file and the fix."""


def input_finding(path: Path | str, message: str, hint: str) -> Finding:
    """CABLE-INPUT at the file (or folder) that could not be read: verify compares nothing then."""
    return cable_finding("CABLE-INPUT", str(path), message, hint)


@dataclass(frozen=True)
class Names:
    """The design's device names and, per device, every known name of each port; each name a
    neighbor is reported by, once read (a host's name comes from every switch it is cabled to)."""

    devices: frozenset[str]
    ports: dict[str, dict[str, str]]
    remotes: dict[str, tuple[str | None, str]] = field(default_factory=dict, compare=False, repr=False)

    def device(self, reported: str) -> str:
        name = reported.strip()
        if name in self.devices:
            return name
        short = name.split(".")[0].lower()
        for candidate in (name.lower(), short):
            if candidate in self.devices:
                return candidate
        return name or "(no system name)"

    def bmc_host(self, reported: str) -> str | None:
        """The design host whose BMC calls itself `reported`, if any."""
        name = reported.strip().split(".")[0].lower()
        for suffix in BMC_SUFFIXES:
            if name.endswith(suffix) and name[: -len(suffix)] in self.devices:
                return name[: -len(suffix)]
        return None

    def remote(self, reported: str) -> tuple[str | None, str]:
        """A neighbor's reported name: (the host whose BMC it is, or None; the device it is)."""
        known = self.remotes.get(reported)
        if known is None:
            host = self.bmc_host(reported)
            known = self.remotes[reported] = (host, host or self.device(reported))
        return known

    def port(self, device: str, candidates: Iterable[str]) -> str:
        """The design name of the first candidate that names a port of `device`; else the first
        readable one (not a MAC), else the first, else `?`."""
        known = self.ports.get(device)
        if known is not None:
            for candidate in candidates:
                found = known.get(candidate.lower()) if candidate else None
                if found is not None:
                    return found
        options = [candidate for candidate in candidates if candidate]
        readable = [candidate for candidate in options if not is_mac(candidate)]
        return (readable or options or ["?"])[0]


def lldp_claims(device: str, neighbors: Iterable[Neighbor], names: Names) -> list[Claim]:
    """One device's LLDP neighbors as claims (a million at 131,072 GPUs: the device's own port
    names are looked up in its table first)."""
    claims: list[Claim] = []
    own = names.ports.get(device, {})
    for neighbor in neighbors:
        host, remote_device = names.remote(neighbor.remote_device)
        remote_port = BMC_PORT if host else names.port(remote_device, neighbor.remote_ports)
        local = neighbor.local_port
        local_port = (local and own.get(local.lower())) or names.port(device, (local,))
        claims.append(Claim(End(device, local_port), End(remote_device, remote_port), neighbor.age, neighbor.gbps))
    return claims


def ib_end(port: IbPort, guid_names: dict[int, str], names: Names) -> End:
    """An InfiniBand port in design names: a switch port by number, an HCA port as `mlx5_N/P`."""
    label = guid_names.get(port.guid, port.description).strip()
    if port.kind == "CA":
        host, _, hca = label.partition(" ")
        device = names.device(host)
        return End(device, names.port(device, [f"{hca.strip()}/{port.port}" if hca.strip() else str(port.port)]))
    device = names.device(label)
    return End(device, names.port(device, [str(port.port)]))


def ib_claims(links: Iterable[IbLink], guid_names: dict[int, str], names: Names) -> list[Claim]:
    """A discovery sees both ends of every link at once: one claim per link."""
    return [Claim(ib_end(link.a, guid_names, names), ib_end(link.b, guid_names, names), None, link.gbps)
            for link in links]


def read_text(path: Path, what: str) -> str:
    try:
        return read_text_bounded(path, MAX_FILE_BYTES, what)
    except Unreadable as error:
        raise InputError(str(error)) from None


def parsed(path: Path, what: str, parse: Callable[[str], T], hint: str, unreadable: list[Finding]) -> T | None:
    """`parse` of the text of `path`; None, with a CABLE-INPUT finding in `unreadable`, when the
    file cannot be read or parsed (the one place a parser's NeighborFormatError becomes a finding)."""
    try:
        return parse(read_text(path, what))
    except InputError as error:
        unreadable.append(input_finding(path, str(error).removeprefix(f"{path}: "), hint))
    except NeighborFormatError as error:
        unreadable.append(input_finding(path, str(error), hint))
    return None


def lldp_hint() -> str:
    return f"collect it again ({formats_known()}), or move it out of the directory"


def read_lldp_dir(directory: Path) -> tuple[dict[str, list[Neighbor]], list[Finding]]:
    """Every `<device>.*` file in `directory`, parsed, and a CABLE-INPUT finding for each one (or
    for the folder) that cannot be read: all of them at once, not the first."""
    kernel = kernel_interface(directory, "--lldp")
    if kernel is not None:
        return {}, [input_finding(directory, kernel, "--lldp takes a directory of <device>.json files")]
    if not directory.is_dir():
        return {}, [input_finding(directory, "not a directory", "--lldp takes a directory of <device>.json files")]
    result: dict[str, list[Neighbor]] = {}
    problems: list[Finding] = []
    first: dict[str, Path] = {}
    for path in sorted(directory.iterdir()):
        if path.name.startswith("."):
            continue
        device = path.name.split(".")[0]
        if device in first:  # two collections of one device, perhaps of different days: which is it?
            problems.append(input_finding(path, f"a second file for device {device} (the first: {first[device].name})",
                                          "keep one file per device: move the other out of the directory"))
            continue
        first[device] = path
        neighbors = parsed(path, "neighbor data", parse_lldp, lldp_hint(), problems)
        if neighbors is not None:
            result[device] = neighbors
    if not result and not problems:
        problems.append(input_finding(directory, "no neighbor files", "put one <device>.json per device in it"))
    return result, problems
