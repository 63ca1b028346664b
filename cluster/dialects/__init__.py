"""Switch dialects: one folder per switch OS, `cluster/dialects/<name>/`, found by this registry.

A dialect's folder holds what is true of that OS, and nothing outside it names the OS:
- `__init__.py`: its `PLATFORM`, the facts naming, verify and the lab look up (how it names
  front-panel ports, its management port and LACP bundles, its BGP ECMP ceiling, the files a
  switch of it gets, the extra names LLDP may report for a port);
- `render.py`: the renderer (`render_switch`, or a fabric-wide `render_fabric`) and the QoS
  read-back of what it wrote (`read_qos`), with its templates in `templates/<name>/`;
- `lldp.py`: the neighbor formats its switches report (`LLDP_FORMATS`), where it has its own;
- where it can: `PLATFORM.translate`, what a switch of it runs read from its rendered files
  (ports, addresses, the FRR configuration), which the lab runs.
The host's scripts live beside them in `host/`, which has no PLATFORM: a host is no switch.
Adding a dialect is one folder, found here by its `PLATFORM`, and a row in the tests that run
every dialect.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import cache
from typing import Literal, Protocol

from cluster.folders import registered


def _no_aliases(number: int) -> tuple[str, ...]:
    return ()


def _runs_any(model: str, gbps: int, described: str) -> tuple[str, str] | None:
    return None


def _any_plan(model: str, gbps: int, lossless: tuple[int, ...]) -> tuple[str, str] | None:
    return None


def _pushes_none(model: str) -> str | None:
    return None


def _no_column(model: str) -> str:
    return ""


@dataclass(frozen=True)
class RunningPort:
    """A port as the switch runs it."""

    address: str | None  # a.b.c.d/len
    mtu: int
    up: bool


@dataclass(frozen=True)
class Relay:
    """A switch's DHCP relay: the server it relays to, the ports whose requests it relays
    (downstream) and those it reaches the server by (upstream), by the OS's port names."""

    server: str
    downstream: tuple[str, ...]
    upstream: tuple[str, ...]


@dataclass(frozen=True)
class Management:
    """A switch's management port as its files configure it: the port (the OS's name), its address
    (a.b.c.d/len; None: none set), default gateway and the VRF it is in (None: the default table)."""

    port: str
    address: str | None
    gateway: str | None
    vrf: str | None


@dataclass(frozen=True)
class Running:
    """What a switch runs, translated from its rendered files: what the lab starts in its place."""

    loopback: str | None  # a.b.c.d/32
    ports: Mapping[str, RunningPort]  # by the OS's port name; a port its files do not create is absent
    frr_conf: str  # its routing, as FRR's integrated configuration
    source: str  # which files, and how they were read
    relay: Relay | None = None  # its DHCP relay, where its files configure one
    management: Management | None = None  # its management port, where its files configure one


class RenderedFiles(Protocol):
    """A rendered tree as a translation reads it: a file's text (None when it is missing or
    unreadable, which the tree reports), and every problem reported with the fix."""

    again: str  # how to get a good tree again

    def text(self, path: str, what: str) -> str | None: ...

    def problem(self, path: str, message: str, hint: str) -> None: ...


@dataclass(frozen=True)
class Platform:
    """What the rest of the house may know of one switch OS."""

    name: str  # the `os` of a switch (stack file, catalog)
    title: str  # as a person calls it: `SONiC (FRR)`
    port_name: Callable[[int, str, int], str]  # (0-based front-panel index, model, port Gbps) -> the OS's name
    management_port: Callable[[str], str]  # model -> its management port as the OS names it
    config_file: str | None  # the main file of switches/<name>/ (None: a fabric-wide configuration)
    routing_file: str | None  # the file holding its BGP configuration (None: no IP underlay)
    lag_name: str | None = None  # an LACP bundle's name, `{}` its number
    max_paths: int | None = None  # most equal-cost BGP paths the OS installs (None: no BGP)
    transport: Literal["ethernet", "infiniband"] = "ethernet"  # the fabrics it serves
    stack_os: bool = True  # a stack file may name it as a switch's `os`
    generic: bool = False  # the dialect a generic {ports, port_gbps} box renders in: names from the number alone
    port_aliases: Callable[[int], tuple[str, ...]] = _no_aliases  # other names LLDP may report for port N (from 1)
    # (model, port Gbps, "SN5600 at 400G") -> (message, hint) when the OS cannot run the model at that speed
    model_problem: Callable[[str, int, str], tuple[str, str] | None] = _runs_any
    # (model, port Gbps, lossless priorities) -> (message, hint) when its QoS cannot hold the plan there
    qos_problem: Callable[[str, int, tuple[int, ...]], tuple[str, str] | None] = _any_plan
    # a column of the catalog reference's switch table: (heading, what it says, model -> cell), when the OS has one
    reference_column: tuple[str, str, Callable[[str], str]] | None = None
    # (switch name, its rendered tree) -> what it runs (None: the tree cannot say; problems reported there);
    # None: the OS does not run here, and the lab runs the FRR equivalent of its routing plan
    translate: Callable[[str, RenderedFiles], Running | None] | None = None
    # its DHCP relay runs on a routed front-panel port (a host's /31), not only on a VLAN interface
    relays_on_routed_ports: bool = True
    # its configuration can name SNMP trap receivers
    snmp_traps: bool = True
    # model -> the protocol it pushes streaming telemetry in, a key of management_plane.telemetry
    # (gnmi_dialout, grpc_tunnel, otlp); None: the model pushes none
    telemetry_push: Callable[[str], str | None] = _pushes_none
    # its telemetry push and its gNMI server do not run together: where it pushes, the server is left off
    push_stops_gnmi: bool = False


@cache
def platforms() -> Mapping[str, Platform]:
    """Every dialect folder's PLATFORM, by name."""
    return registered(__name__, __path__, "PLATFORM", Platform)


def platform(name: str) -> Platform:
    """The dialect `name`; a name no folder has is a defect of the caller (the resolver checks `os`)."""
    try:
        return platforms()[name]
    except KeyError:
        raise ValueError(f"no switch dialect {name!r}: cluster/dialects/ has {', '.join(platforms())}") from None


def stack_os_names() -> tuple[str, ...]:
    """The dialects a stack file may name as a switch's `os`."""
    return tuple(name for name, entry in platforms().items() if entry.stack_os)


def generic() -> Platform:
    """The dialect a generic box (given by ports and speed, with no platform data) renders in."""
    return next(entry for entry in platforms().values() if entry.generic)


def for_transport(transport: str) -> Platform | None:
    """The one dialect of a transport that has a dialect of its own (InfiniBand's subnet manager)."""
    matches = [entry for entry in platforms().values() if entry.transport == transport and transport != "ethernet"]
    return matches[0] if len(matches) == 1 else None
