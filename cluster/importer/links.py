"""The observed links sorted by what they join in the design: a host's port on a leaf, a
switch's uplink, a switch's management port on the out-of-band network. Links between devices
without a role, or that join no two tiers the design ever joins, are left to the comparison with
the imported design, which reports them where they are."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from typing import NamedTuple

from cluster.importer.roles import HostRole, Role, SwitchRole
from cluster.naming import BMC_PORT
from cluster.topology import FABRIC
from cluster.verify.expected import End
from cluster.verify.match import Link

#: On a fabric leaf (a converged design), a host port of one of these names carries storage or
#: management traffic, as the product names those ports (`stor0`, `mgmt0`).
SHARED_PREFIXES = {"stor": "storage", "mgmt": "management"}
TIER_ABOVE = {"leaf": "spine", "spine": "core"}


class HostLink(NamedTuple):
    """A host port cabled to a leaf: the host's network for that port, both ends, the speed. (A
    tuple, as `Link` is: one per host port.)"""

    host: str
    host_port: str
    network: str
    leaf: str
    leaf_port: str
    gbps: float | None


class Uplink(NamedTuple):
    """A switch cabled to a switch of the tier above in its network."""

    lower: str
    lower_port: str
    upper: str
    upper_port: str
    gbps: float | None


@dataclass
class Sorted:
    """The links by kind, and every port name seen on each switch (lower-case), with the speed
    of the link on it where one was reported."""

    host_links: dict[str, list[HostLink]] = field(default_factory=lambda: defaultdict(list))
    uplinks: list[Uplink] = field(default_factory=list)
    bmc: dict[str, str] = field(default_factory=dict)  # host -> the oob leaf its BMC is on
    management: dict[str, str] = field(default_factory=dict)  # switch -> its management port as reported
    switch_ports: dict[str, set[str]] = field(default_factory=lambda: defaultdict(set))
    switch_speeds: dict[str, dict[str, float]] = field(default_factory=lambda: defaultdict(dict))


def _shared(port: str) -> str:
    return next((network for prefix, network in SHARED_PREFIXES.items() if port.lower().startswith(prefix)), FABRIC)


def sort_links(links: list[Link], roles: dict[str, Role]) -> Sorted:
    """Every link whose two ends have roles, by what it joins."""
    result = Sorted()
    for link in links:
        low, high = link.a, link.b
        low_role, high_role = roles.get(low.device), roles.get(high.device)
        if low_role is None or high_role is None:
            continue
        if isinstance(low_role, SwitchRole) and not isinstance(high_role, SwitchRole):  # a host first
            low, low_role, high, high_role = high, high_role, low, low_role
        if not isinstance(high_role, SwitchRole):
            continue
        if isinstance(low_role, HostRole):
            _host_link(result, low, high, high_role, link.gbps)
        elif isinstance(low_role, SwitchRole):
            _switch_link(result, low, low_role, high, high_role, link.gbps)
    return result


def _host_link(result: Sorted, host: End, switch: End, role: SwitchRole, gbps: float | None) -> None:
    if role.tier != "leaf":
        return
    if role.network == "oob":
        if host.port == BMC_PORT:
            result.bmc[host.device] = switch.device
            result.switch_ports[switch.device].add(switch.port.lower())
        return
    network = _shared(host.port) if role.network == FABRIC else role.network
    result.host_links[host.device].append(HostLink(host.device, host.port, network, switch.device, switch.port, gbps))
    _seen(result, switch, gbps)


def _switch_link(result: Sorted, a: End, a_role: SwitchRole, b: End, b_role: SwitchRole, gbps: float | None) -> None:
    if a_role.network != "oob" and b_role.network == "oob" and b_role.tier == "leaf":
        a, a_role, b, b_role = b, b_role, a, a_role
    if a_role.network == "oob" and a_role.tier == "leaf" and b_role.network != "oob":
        result.management[b.device] = b.port  # a switch's management port on an out-of-band leaf
        result.switch_ports[a.device].add(a.port.lower())
        return
    if a_role.network != b_role.network:
        return
    if TIER_ABOVE.get(b_role.tier) == a_role.tier:
        a, a_role, b, b_role = b, b_role, a, a_role
    if TIER_ABOVE.get(a_role.tier) != b_role.tier or a_role.plane != b_role.plane:
        return
    result.uplinks.append(Uplink(a.device, a.port, b.device, b.port, gbps))
    _seen(result, a, gbps)
    _seen(result, b, gbps)


def _seen(result: Sorted, end: End, gbps: float | None) -> None:
    """A switch port in use, and the speed of its link where reported."""
    port = end.port.lower()
    result.switch_ports[end.device].add(port)
    if gbps is not None:
        result.switch_speeds[end.device][port] = gbps
