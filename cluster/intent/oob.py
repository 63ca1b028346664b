"""The out-of-band network as one bridged layer-2 segment: what every oob switch forwards.

Every BMC and switch management port is an untagged member of one VLAN; the links to each other
oob switch are bundled into one LACP port-channel (bond), itself an untagged member of the
VLAN, so parallel uplinks are one logical link, never a loop. Where leaves reach several oob
spines, the spines and leaves form loops of bundles; spanning tree (each dialect's own: see its
renderer) blocks all but a tree, rooted at the spines (lower bridge priority).
Layer 2 because BMCs take an address from one subnet (DHCP) and the oob network carries little
traffic; routing it would need a subnet and gateway per leaf.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from cluster.dialects import platform
from cluster.intent.switch import Switch

OOB_VLAN = 100
SPINE_BRIDGE_PRIORITY = 4096  # spines win the root election; leaves keep the default
DEFAULT_BRIDGE_PRIORITY = 32768  # IEEE 802.1D default (Cumulus, EOS and SONiC's YANG agree)


@dataclass(frozen=True)
class Bundle:
    """The links to one other oob switch, as one LACP port-channel."""

    number: int
    name: str
    peer: str
    members: tuple[str, ...]


@dataclass(frozen=True)
class OobL2:
    """One oob switch's layer-2 settings."""

    vlan: int
    access: tuple[str, ...]  # ports to BMCs and management ports: untagged in the VLAN
    bundles: tuple[Bundle, ...]
    bridge_priority: int
    member_of: dict[str, Bundle] = field(default_factory=dict)  # port name -> its bundle


def oob_l2(switch: Switch) -> OobL2 | None:
    """The layer-2 view of an oob switch (None for every other switch)."""
    if switch.network != "oob":
        return None
    by_peer: dict[str, list[str]] = {}
    access: list[str] = []
    for port in switch.ports:
        if port.role in ("up", "down"):
            by_peer.setdefault(port.peer, []).append(port.name)
        else:
            access.append(port.name)
    name = platform(switch.os).lag_name
    if name is None:
        raise ValueError(f"{switch.name}: {switch.os} bundles no links; an oob switch needs a dialect that does")
    bundles = tuple(Bundle(number, name.format(number), peer, tuple(members))
                    for number, (peer, members) in enumerate(sorted(by_peer.items()), start=1))
    priority = bridge_priority(switch)
    member_of = {member: bundle for bundle in bundles for member in bundle.members}
    return OobL2(OOB_VLAN, tuple(access), bundles, priority, member_of)


def bridge_priority(switch: Switch) -> int:
    """oob-spine-001 is the root (4096), the next spines its backups (8192, ... up to 28672); leaves
    keep the default, so the tree is rooted at a known spine whatever the bridge MACs are."""
    if switch.tier != "spine":
        return DEFAULT_BRIDGE_PRIORITY
    number = int(switch.name.rsplit("-", 1)[1])  # spines are named <prefix>-spine-<001..>
    return min(SPINE_BRIDGE_PRIORITY * number, DEFAULT_BRIDGE_PRIORITY - SPINE_BRIDGE_PRIORITY)
