"""The out-of-band network as one bridged layer-2 segment: what every oob switch forwards.

Every BMC and switch management port is an untagged member of one VLAN; the links to each other
oob switch are bundled into one LACP port-channel (bond), itself an untagged member of the
VLAN, so parallel uplinks are one logical link, never a loop. Where leaves reach several oob
spines, the spines and leaves form loops of bundles; spanning tree (RSTP on Cumulus, MSTP on
EOS, PVST on SONiC) blocks all but a tree, rooted at the spines (lower bridge priority).
Layer 2 because BMCs take an address from one subnet (DHCP) and the oob network carries little
traffic; routing it would need a subnet and gateway per leaf.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from cluster.intent.qos import SWITCH_MTU
from cluster.render.views import Switch

OOB_VLAN = 100
SPINE_BRIDGE_PRIORITY = 4096  # spines win the root election; leaves keep the default
DEFAULT_BRIDGE_PRIORITY = 32768  # IEEE 802.1D default (Cumulus, EOS and SONiC's YANG agree)
LAG_NAMES = {"sonic": "PortChannel{}", "nvue": "bond{}", "eos": "Port-Channel{}"}


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
    name = LAG_NAMES[switch.os]
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


def sonic_tables(oob: OobL2) -> dict[str, Any]:
    """VLAN, VLAN_MEMBER, PORTCHANNEL(_MEMBER) and STP tables (sonic-vlan, sonic-portchannel and
    sonic-spanning-tree YANG models)."""
    vlan = f"Vlan{oob.vlan}"
    untagged = {"tagging_mode": "untagged"}
    members = [*oob.access, *(bundle.name for bundle in oob.bundles)]
    tables = {
        "VLAN": {vlan: {"vlanid": str(oob.vlan), "admin_status": "up", "mtu": str(SWITCH_MTU), "description": "oob"}},
        "VLAN_MEMBER": {f"{vlan}|{port}": untagged for port in members},
        "PORTCHANNEL": {bundle.name: {"admin_status": "up", "min_links": "1", "mtu": str(SWITCH_MTU),
                                      "lacp_key": "auto", "description": bundle.peer} for bundle in oob.bundles},
        "PORTCHANNEL_MEMBER": {f"{bundle.name}|{port}": {} for bundle in oob.bundles for port in bundle.members},
        "STP": {"GLOBAL": {"mode": "pvst", "priority": str(DEFAULT_BRIDGE_PRIORITY)}},
        "STP_VLAN": {vlan: {"vlanid": str(oob.vlan), "enabled": "true", "priority": str(oob.bridge_priority)}},
        "STP_PORT": {port: {"enabled": "true"} for port in members},
    }
    return {table: entries for table, entries in tables.items() if entries}
