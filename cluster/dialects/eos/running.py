"""What an Arista EOS switch runs, read from its rendered eos.cfg as EOS reads a startup config:
each line is taken in its section (indentation: three spaces a level) and either translated into
what the switch's routing runs (routed ports with their addresses and MTUs, the loopback, the BGP
underlay with its prefix lists, route limits, graceful restart and BFD timers) or knowingly left
out (QoS and the PFC watchdog, which need the ASIC; the management plane but its port's VRF,
address and default route: users, NTP, the APIs, the banner; descriptions and port speeds). Any
other line is refused, so an edit the translation does not understand never passes silently.

EOS defaults where the file leaves a setting out (EOS User Manual): an Ethernet port is a
switchport until `no switchport` (then a routed port, its MTU 1500 unless `mtu` sets one) and is up
unless `shutdown`; IPv4 unicast is active for every BGP neighbor; `maximum-paths N ecmp M` installs
up to N paths.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from cluster.dialects import Management, Relay, RenderedFiles, Running, RunningPort
from cluster.dialects.underlay import PrefixRule, Underlay, frr_conf, is_address, is_interface

DEFAULT_MTU = 1500  # a routed port's MTU when eos.cfg sets none (EOS User Manual, Ethernet Ports)
INDENT = 3
BFD_DEFAULTS = (3, 300, 300)  # multiplier, min-rx, interval when a neighbor's BFD sets none (EOS User Manual, BFD)
# top-level commands the lab leaves out: the management plane and the switch-wide QoS (its ASIC)
NOT_RUN = ("hostname", "service routing protocols model multi-agent", "vrf instance", "no ip routing vrf",
           "username", "ntp", "management", "qos map", "priority-flow-control", "spanning-tree",
           "vlan", "end", "aaa", "tacacs-server", "ip tacacs", "ip name-server", "logging", "snmp-server")
NOT_RUN_ON_PORTS = ("description", "speed", "qos", "priority-flow-control", "uc-tx-queue")


@dataclass
class _Port:
    address: str | None = None
    mtu: int | None = None
    routed: bool = False
    up: bool = True
    helper: str | None = None  # `ip helper-address`: the DHCP server it relays this port's requests to


@dataclass
class _Read:
    ports: dict[str, _Port] = field(default_factory=dict)
    underlay: Underlay = field(default_factory=Underlay)
    routing: bool = False
    bfd_on: set[str] = field(default_factory=set)  # neighbors with `neighbor X bfd`
    bfd_timers: dict[str, tuple[int, int, int]] = field(default_factory=dict)  # (multiplier, receive, transmit)
    management: dict[str, str] = field(default_factory=dict)  # the Management port: port, address, vrf
    vrf_routes: dict[str, str] = field(default_factory=dict)  # VRF -> its default route's next hop


def translate(name: str, tree: RenderedFiles) -> Running | None:
    """The switch `name` as EOS reads its rendered eos.cfg (None: it cannot say; reported)."""
    path = f"switches/{name}/eos.cfg"
    text = tree.text(path, "the switch's EOS startup config")
    if text is None:
        return None
    read = _Read()
    ok = True
    section: list[str] = []  # the enclosing commands of the current line, outermost first
    in_banner = False
    for number, line in enumerate(text.splitlines(), start=1):
        if in_banner:
            in_banner = line.strip() != "EOF"
            continue
        stripped = line.strip()
        if not stripped or stripped.startswith("!"):
            continue
        depth = (len(line) - len(line.lstrip(" "))) // INDENT
        section = section[:depth]
        if depth > len(section):
            depth = len(section)  # deeper than its parent: EOS reads it in the parent's section
        if not section and stripped == "banner login":
            in_banner = True
            continue
        if not _line(section, stripped, read):
            tree.problem(path, f"line {number}: {stripped!r} is a setting the lab does not translate",
                         f"remove it, or {tree.again} (docs/guides/lab.md lists what the lab runs of an EOS config)")
            ok = False
        section = [*section, stripped]
    if not ok:
        return None
    if not read.routing:
        tree.problem(path, "no `ip routing`: EOS would route nothing", tree.again)
        return None
    for peer in read.bfd_on:
        read.underlay.neighbor(peer).bfd = read.bfd_timers.get(peer, BFD_DEFAULTS)
    loopback = read.ports.pop("Loopback0", _Port()).address
    ports = {port: RunningPort(entry.address if entry.routed else None, entry.mtu or DEFAULT_MTU, entry.up)
             for port, entry in sorted(read.ports.items())}
    return Running(loopback, ports, frr_conf(name, read.underlay),
                   f"{path} (each line translated: ports, BGP, BFD, DHCP relay)", _relay(read), _management(read))


def _management(read: _Read) -> Management | None:
    """The Management port as the file sets it, with its VRF's default route (None: no address)."""
    settings = read.management
    if "address" not in settings:
        return None
    vrf = settings.get("vrf")
    return Management(settings["port"], settings["address"], read.vrf_routes.get(vrf or "default"), vrf)


def _relay(read: _Read) -> Relay | None:
    """EOS relays a port's requests to its helper address and reaches the server by routing: the
    relay's downstream ports are those with a helper (toward the first server, where ports name
    several), its upstream every other routed port."""
    helpers = {port: entry.helper for port, entry in read.ports.items() if entry.helper}
    if not helpers:
        return None
    server = min(helpers.values())
    upstream = tuple(sorted(port for port, entry in read.ports.items()
                            if entry.routed and entry.address and port not in helpers))
    return Relay(server, tuple(sorted(port for port, helper in helpers.items() if helper == server)), upstream)


def _line(section: list[str], line: str, read: _Read) -> bool:
    """Take one line in its section; False: not one the translation knows."""
    words = line.split()
    if not section:
        match words:
            case ["ip", "routing"]:
                read.routing = True
            case ["interface", port]:
                if port.startswith(("Ethernet", "Loopback")):
                    read.ports.setdefault(port, _Port(routed=port.startswith("Loopback")))
            case ["ip", "route", "vrf", vrf, "0.0.0.0/0", gateway] if is_address(gateway):
                read.vrf_routes[vrf] = gateway
            case ["ip", "route", "vrf", *_]:
                return False
            case ["ip", "prefix-list", name]:
                read.underlay.prefix_lists.setdefault(name, {})
            case ["router", "bgp", asn] if asn.isdigit():
                read.underlay.asn = int(asn)
            case _:
                return any(line == command or line.startswith(f"{command} ") for command in NOT_RUN)
        return True
    top = section[0].split()
    if top[0] == "interface" and top[1].startswith("Management") and len(section) == 1:
        return _management_line(top[1], words, read)
    if top[0] == "interface":
        return _port(section, words, read.ports.get(top[1]))
    if top[:2] == ["ip", "prefix-list"]:
        return _prefix_rule(read.underlay.prefix_lists[top[2]], words)
    if top[:2] == ["router", "bgp"]:
        return _router(section, words, read)
    return top[0] in ("management", "vlan", "aaa") or section[0].startswith("spanning-tree")  # their subcommands


def _management_line(port: str, words: list[str], read: _Read) -> bool:
    """A line of the Management port's section: its VRF and address are read, the rest left out."""
    match words:
        case ["vrf", vrf]:
            read.management["vrf"] = vrf
        case ["ip", "address", address] if is_interface(address):
            read.management.update(port=port, address=address)
        case ["ip", "address", *_]:
            return words == ["ip", "address", "dhcp"]  # the OS's DHCP: no address the files set
    return True


def _port(section: list[str], words: list[str], port: _Port | None) -> bool:
    if port is None:  # Management1, Vlan interfaces: the management plane
        return True
    if len(section) > 1:
        return section[1].split()[0] in NOT_RUN_ON_PORTS  # a queue's own settings
    match words:
        case ["ip", "address", address] if is_interface(address):
            port.address = address
        case ["mtu", mtu] if mtu.isdigit():
            port.mtu = int(mtu)
        case ["ip", "helper-address", server] if is_address(server) and port.helper in (None, server):
            port.helper = server
        case ["no", "switchport"]:
            port.routed = True
        case ["shutdown"]:
            port.up = False
        case ["no", "shutdown"]:
            port.up = True
        case _:
            return words[0] in NOT_RUN_ON_PORTS
    return True


def _prefix_rule(rules: dict[int, PrefixRule], words: list[str]) -> bool:
    match words:
        case ["seq", sequence, ("permit" | "deny") as action, prefix, *bounds] if sequence.isdigit() \
                and is_interface(prefix):
            length = {key: int(value) for key, value in zip(bounds[::2], bounds[1::2], strict=False) if value.isdigit()}
            if set(length) - {"eq", "ge", "le"} or len(bounds) % 2:
                return False
            exact = length.get("eq")
            rules[int(sequence)] = PrefixRule(action, prefix, exact or length.get("ge"), exact or length.get("le"))
        case _:
            return False
    return True


def _router(section: list[str], words: list[str], read: _Read) -> bool:
    bgp = read.underlay
    if len(section) > 1:
        if section[1] != "address-family ipv4":
            return False
        match words:
            case ["neighbor", peer, "prefix-list", name, ("in" | "out") as way] if is_address(peer):
                if way == "in":
                    bgp.neighbor(peer).prefix_in = name
                else:
                    bgp.neighbor(peer).prefix_out = name
            case ["neighbor", peer, "activate"] if is_address(peer):
                pass
            case _:
                return False
        return True
    match words:
        case ["router-id", address] if is_address(address):
            bgp.router_id = address
        case ["graceful-restart"]:
            bgp.graceful_restart = True
        case ["graceful-restart", "restart-time", seconds] if seconds.isdigit():
            bgp.restart_time = int(seconds)
        case ["maximum-paths", paths, *_] if paths.isdigit():
            bgp.maximum_paths = int(paths)
        case ["bgp", "bestpath", "as-path", "multipath-relax"]:
            bgp.multipath_relax = True
        case ["network", prefix] if is_interface(prefix):
            bgp.networks.append(prefix)
        case ["neighbor", peer, "remote-as", asn] if is_address(peer) and asn.isdigit():
            bgp.neighbor(peer).remote_as = asn
        case ["neighbor", peer, "description", *_] if is_address(peer):
            pass
        case ["neighbor", peer, "maximum-routes", limit] if is_address(peer) and limit.isdigit():
            bgp.neighbor(peer).maximum_prefix = int(limit)
        case ["neighbor", peer, "bfd"] if is_address(peer):
            read.bfd_on.add(peer)
        case ["neighbor", peer, "bfd", "interval", transmit, "min-rx", receive, "multiplier", multiplier] \
                if is_address(peer) and transmit.isdigit() and receive.isdigit() and multiplier.isdigit():
            read.bfd_timers[peer] = (int(multiplier), int(receive), int(transmit))
        case ["address-family", "ipv4"]:
            pass
        case _:
            return False
    return True
