"""A switch's BGP underlay as a dialect's translation reads it from the rendered files, and the
FRR integrated configuration that runs it in the lab: one shape for every OS, so each dialect's
translator only reads its own syntax."""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass, field


@dataclass
class Neighbor:
    remote_as: str = "external"  # a number, `external` or `internal`
    bfd: tuple[int, int, int] | None = None  # (multiplier, receive ms, transmit ms) when BFD runs
    prefix_in: str | None = None
    prefix_out: str | None = None
    maximum_prefix: int | None = None


@dataclass(frozen=True)
class PrefixRule:
    action: str  # permit | deny
    prefix: str  # a.b.c.d/len
    ge: int | None = None
    le: int | None = None


@dataclass
class Underlay:
    asn: int | None = None
    router_id: str | None = None
    multipath_relax: bool = False
    maximum_paths: int | None = None
    networks: list[str] = field(default_factory=list)
    neighbors: dict[str, Neighbor] = field(default_factory=dict)
    restart_time: int | None = None
    graceful_restart: bool = False
    select_defer_time: int | None = None
    prefix_lists: dict[str, dict[int, PrefixRule]] = field(default_factory=dict)

    def neighbor(self, address: str) -> Neighbor:
        return self.neighbors.setdefault(address, Neighbor())


def frr_conf(name: str, underlay: Underlay) -> str:
    """The underlay as FRR's integrated configuration (datacenter defaults: 3 s keepalive, 9 s hold)."""
    lines = ["frr defaults datacenter", f"hostname {name}", "service integrated-vtysh-config", "!"]
    for list_name, rules in sorted(underlay.prefix_lists.items()):
        for sequence, rule in sorted(rules.items()):
            bounds = "".join(f" {word} {value}" for word, value in (("ge", rule.ge), ("le", rule.le)) if value is not None)
            lines.append(f"ip prefix-list {list_name} seq {sequence} {rule.action} {rule.prefix or 'any'}{bounds}")
    profiles = {timers: f"BFD{index}" for index, timers in enumerate(
        sorted({neighbor.bfd for neighbor in underlay.neighbors.values() if neighbor.bfd is not None}), start=1)}
    if profiles:
        lines.append("bfd")
        for (multiplier, receive, transmit), profile in profiles.items():
            lines += [f" profile {profile}", f"  detect-multiplier {multiplier}", f"  receive-interval {receive}",
                      f"  transmit-interval {transmit}", " exit"]
        lines += ["exit", "!"]
    if underlay.asn is None:
        return "\n".join([*lines, ""])
    lines.append(f"router bgp {underlay.asn}")
    lines += [f" bgp router-id {underlay.router_id}"] if underlay.router_id else []
    if underlay.graceful_restart:
        lines += [f" bgp graceful-restart restart-time {underlay.restart_time}"] if underlay.restart_time else []
        lines.append(" bgp graceful-restart")
        lines += ([f" bgp graceful-restart select-defer-time {underlay.select_defer_time}"]
                  if underlay.select_defer_time else [])
    lines += [" bgp bestpath as-path multipath-relax"] if underlay.multipath_relax else []
    family = []
    for peer, neighbor in sorted(underlay.neighbors.items(), key=lambda item: ipaddress.ip_address(item[0])):
        lines.append(f" neighbor {peer} remote-as {neighbor.remote_as}")
        if neighbor.bfd is not None:
            lines.append(f" neighbor {peer} bfd profile {profiles[neighbor.bfd]}")
        family += [f"  neighbor {peer} prefix-list {name} {way}"
                   for name, way in ((neighbor.prefix_in, "in"), (neighbor.prefix_out, "out")) if name]
        family += [f"  neighbor {peer} maximum-prefix {neighbor.maximum_prefix}"] if neighbor.maximum_prefix else []
    lines += [" address-family ipv4 unicast", *(f"  network {network}" for network in underlay.networks), *family]
    lines += [f"  maximum-paths {underlay.maximum_paths}"] if underlay.maximum_paths else []
    lines += [" exit-address-family", "exit", "!", ""]
    return "\n".join(lines)


def is_address(text: str) -> bool:
    """An IPv4 address without a length."""
    try:
        ipaddress.IPv4Address(text)
    except ValueError:
        return False
    return True


def is_interface(text: str) -> bool:
    """An IPv4 address with its length (a.b.c.d/len)."""
    try:
        ipaddress.IPv4Interface(text)
    except ValueError:
        return False
    return "/" in text
