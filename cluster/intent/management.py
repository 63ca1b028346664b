"""The management plane of every switch, vendor-neutral: its management address and VRF on the
oob segment and the services it uses and offers there. Each dialect writes it in its own forms
(docs/reference/dialects.md, *Management plane*).

- Address: from the upper half of `addressing.oob` by the switch's stable slot
  (cluster.addressing), with the segment's prefix length and `management_plane.gateway` as its
  default route. A switch cabled to an oob leaf takes it on its management port, in a management
  VRF, so management traffic never touches the fabric's routing; an oob switch, whose own
  management port is cabled to nothing, takes it on its interface in the oob VLAN, in the default
  VRF (it routes nothing else). Without an oob network the management port keeps the OS's DHCP.
- Services, the same on every switch: NTP, syslog, DNS, TACACS+ before the local users, SNMPv2c
  read-only, SSH, the OS's management API and gNMI, streaming telemetry pushed to collectors in the
  OS's protocol, a login banner.
- Secrets never enter a rendered file: local users' password (a crypt(3) hash), the TACACS+ key
  and the SNMP community are placeholders (cluster.credentials.placeholder) the deploy fills from
  `pulumi stack output device_credentials` or the environment.
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass

from cluster import dialects
from cluster.credentials import placeholder
from cluster.findings import Finding, Severity
from cluster.spec import ClusterSpec
from cluster.stackfile import oob_quarters
from cluster.topology import Topology

PROTOCOLS = ("gnmi_dialout", "grpc_tunnel", "otlp")  # the keys of management_plane.telemetry, by push protocol


@dataclass(frozen=True)
class User:
    """A local account: `admin` has every right, `operator` reads only."""

    name: str
    role: str  # admin | operator
    password_hash: str  # the placeholder of switch_password's crypt(3) SHA-512 hash


@dataclass(frozen=True)
class Collector:
    """A telemetry collector: where a switch pushes."""

    address: str
    port: int


@dataclass(frozen=True)
class Telemetry:
    """Streaming telemetry the switches push, by protocol (`management_plane.telemetry`); each
    dialect writes the collectors of the protocol its OS pushes."""

    interval_s: int
    gnmi_dialout: tuple[Collector, ...]  # SONiC
    grpc_tunnel: tuple[Collector, ...]  # EOS
    otlp: tuple[Collector, ...]  # Cumulus Linux


def _collectors(endpoints: list[str]) -> tuple[Collector, ...]:
    return tuple(Collector(address, int(port)) for address, _, port in (e.rpartition(":") for e in endpoints))


@dataclass(frozen=True)
class Services:
    """What every switch of the design uses and offers on its management address."""

    ntp: tuple[str, ...]
    syslog: tuple[str, ...]
    dns: tuple[str, ...]
    tacacs: tuple[str, ...]
    tacacs_key: str  # placeholder
    snmp: bool
    snmp_community: str  # placeholder
    snmp_location: str | None
    snmp_contact: str | None
    snmp_traps: tuple[str, ...]  # SNMPv2c trap receivers
    api: bool  # the OS's management API and gNMI server
    telemetry: Telemetry | None  # None: nothing pushed
    banner: str
    users: tuple[User, ...]


@dataclass(frozen=True)
class ManagementPlane:
    """One switch's management plane (module text)."""

    services: Services
    address: str | None  # a.b.c.d/len on the oob segment; None: the management port keeps DHCP
    gateway: str | None
    in_band: bool  # an oob switch: the address is on its oob VLAN interface, in the default VRF

    @property
    def vrf(self) -> bool:
        """The management traffic has a VRF of its own (every switch but an oob switch)."""
        return not self.in_band

    @property
    def host(self) -> str | None:
        """The management address without its prefix length."""
        return self.address.split("/")[0] if self.address is not None else None


def services(spec: ClusterSpec) -> Services:
    """The design's management services, from the stack file's `management_plane`."""
    plane = spec.management_plane
    snmp = plane.snmp
    return Services(
        ntp=tuple(plane.ntp_servers or ()),
        syslog=tuple(plane.syslog_servers),
        dns=tuple(plane.dns_servers),
        tacacs=tuple(plane.tacacs_servers),
        tacacs_key=placeholder("tacacs_key"),
        snmp=snmp is not None,
        snmp_community=placeholder("snmp_community"),
        snmp_location=snmp.location if snmp is not None else None,
        snmp_contact=snmp.contact if snmp is not None else None,
        snmp_traps=tuple(str(receiver) for receiver in snmp.trap_receivers) if snmp is not None else (),
        api=plane.api,
        telemetry=Telemetry(plane.telemetry.interval_s, _collectors(plane.telemetry.gnmi_dialout),
                            _collectors(plane.telemetry.grpc_tunnel), _collectors(plane.telemetry.otlp))
        if plane.telemetry is not None else None,
        banner=plane.banner,
        users=tuple(User(user.name, user.role, placeholder("switch_password_hash")) for user in plane.users),
    )


def management_plane(spec: ClusterSpec, design: Services, address: str | None, network: str) -> ManagementPlane:
    """The management plane of a switch of `network` with management `address` (None: no oob network)."""
    gateway = spec.management_plane.gateway if address is not None else None
    return ManagementPlane(services=design, address=address, gateway=gateway, in_band=network == "oob")


@dataclass(frozen=True)
class OobDhcpPlan:
    """The oob segment's DHCP server (`management_plane.dhcp_server`): one subnet, the segment,
    with a pool in the second quarter of it, for what boots on the segment without an address of
    its own: BMCs (DHCP by default) and switches booting for ZTP (each takes its planned management
    address from its rendered config once it has one)."""

    stack: str
    server: str
    subnet: str
    first: str  # the pool's first and last address
    last: str
    router: str
    dns: tuple[str, ...]
    ntp: tuple[str, ...]


def oob_dhcp_plan(spec: ClusterSpec) -> OobDhcpPlan | None:
    """The plan of the oob DHCP server (None without an oob network or `management_plane.dhcp_server`)."""
    plane = spec.management_plane
    if spec.oob is None or plane.dhcp_server is None or plane.gateway is None:
        return None
    segment = ipaddress.IPv4Network(spec.addressing.oob)
    _, pool = oob_quarters(segment)
    return OobDhcpPlan(spec.name, str(plane.dhcp_server), str(segment), str(pool.network_address),
                       str(pool.broadcast_address), str(plane.gateway), tuple(str(server) for server in plane.dns_servers),
                       tuple(str(server) for server in plane.ntp_servers or ()))


def _ignored(path: str, message: str, hint: str, severity: Severity = Severity.WARNING) -> Finding:
    return Finding("SPEC-IGNORED", severity, path, message, hint)


def _built_tiers(topology: Topology) -> dict[str, tuple[str, str]]:
    """Config path -> (os, model) of every switch tier the design built, in graph order."""
    tiers: dict[str, tuple[str, str]] = {}
    for _, switch in topology.switches():
        tiers.setdefault(switch["path"], (switch["os"], switch["model"]))
    return tiers


def trap_findings(spec: ClusterSpec, topology: Topology) -> list[Finding]:
    """SNMP trap receivers reach the built tiers whose OS sends traps (Platform.snmp_traps); SONiC's
    config_db has no trap receiver table (sonic-snmp.yang holds the agent, communities, location and
    contact only), so its tiers are named."""
    snmp = spec.management_plane.snmp
    if snmp is None or not snmp.trap_receivers:
        return []
    silent = [f"{path} ({dialects.platform(os).title})" for path, (os, _model) in _built_tiers(topology).items()
              if not dialects.platform(os).snmp_traps]
    if not silent:
        return []
    return [_ignored("management_plane.snmp.trap_receivers",
                     f"{', '.join(silent)} send no SNMP traps: their configuration has no trap receiver "
                     "(docs/reference/dialects.md, Management plane); the other switches send them",
                     "poll those switches (SNMP or gNMI), or run those tiers on an OS that sends traps")]


def telemetry_findings(spec: ClusterSpec, topology: Topology) -> list[Finding]:
    """What the built switches make of `management_plane.telemetry`: each tier pushes in its OS's
    protocol on its model (Platform.telemetry_push). Reported: tiers that push nothing, tiers whose
    protocol has no collector, collectors no tier pushes to, and tiers whose OS leaves its gNMI
    server off while it pushes (Platform.push_stops_gnmi)."""
    telemetry = spec.management_plane.telemetry
    if telemetry is None:
        return []
    tiers = _built_tiers(topology)
    if not tiers:
        return []  # no switch of the design's (a cloud target: management_plane is reported ignored)
    pushing = [(path, dialects.platform(os), model, dialects.platform(os).telemetry_push(model))
               for path, (os, model) in tiers.items()]
    findings = []
    silent = [f"{path} ({platform.title}, {model})" for path, platform, model, protocol in pushing if protocol is None]
    if silent:
        findings.append(_ignored(
            "management_plane.telemetry",
            f"{', '.join(silent)} push no streaming telemetry: their OS has no push on that model "
            "(docs/reference/dialects.md, Management plane); the other switches push",
            "poll those switches (SNMP or gNMI), or run those tiers on a switch and OS that push"))
    for protocol in PROTOCOLS:
        collectors = getattr(telemetry, protocol)
        users = [(path, platform) for path, platform, _, used in pushing if used == protocol]
        named = ", ".join(f"{path} ({platform.title})" for path, platform in users)
        if users and not collectors:
            findings.append(_ignored(
                f"management_plane.telemetry.{protocol}",
                f"{named} push telemetry only as {protocol} and no {protocol} collector is given: they push nothing",
                f"add a collector that receives it to management_plane.telemetry.{protocol}"))
        if collectors and not users:
            findings.append(_ignored(
                f"management_plane.telemetry.{protocol}",
                f"no switch of the design pushes {protocol}: these collectors receive nothing",
                f"remove management_plane.telemetry.{protocol}, or run a tier on an OS that pushes it"))
        stopped = [f"{path} ({platform.title})" for path, platform in users if platform.push_stops_gnmi]
        if collectors and stopped and spec.management_plane.api:
            findings.append(_ignored(
                "management_plane.api",
                f"{', '.join(stopped)} run no gNMI server while they push {protocol}: their OS does not run both "
                "(docs/reference/dialects.md, Management plane); their management API stays",
                f"poll them through the {protocol} collector, or remove management_plane.telemetry.{protocol} to "
                "keep their gNMI server", Severity.INFO))
    return findings
