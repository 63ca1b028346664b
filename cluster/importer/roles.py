"""Each device's place in the design, from the names the product gives devices.

A host is `<pool>-node-NNN`; a fabric leaf `leaf-GGG-rR` (rail-optimized) or `leaf-GGG`
(rack-tor), `pP-` in front on a fabric of several planes; a spine `spine-NNN`, a core `core-NNN`
(`pP-` likewise); a storage, management or out-of-band switch `stor-`, `mgmt-`, `oob-` then
`leaf-NNN` or `spine-NNN` (cluster.topology). Numbers are 1-based and at least three digits
(cluster.naming.number). A name that fits none of these has no role: the import names it and
leaves it out of the design, and its links are compared with the design like any other.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from cluster.naming import number
from cluster.topology import FABRIC, PREFIX

HOST = re.compile(r"^(?P<pool>[a-z0-9](?:[a-z0-9-]{0,30}[a-z0-9])?)-node-(?P<number>[0-9]{3,7})$")
LEAF = re.compile(r"^(?:p(?P<plane>[0-9]{1,2})-)?leaf-(?P<number>[0-9]{3,7})(?:-r(?P<rail>[0-9]{1,3}))?$")
UPPER = re.compile(r"^(?:p(?P<plane>[0-9]{1,2})-)?(?P<tier>spine|core)-(?P<number>[0-9]{3,7})$")
NETWORK = re.compile(r"^(?P<prefix>[a-z]{2,5})-(?P<tier>leaf|spine)-(?P<number>[0-9]{3,7})$")
NETWORK_OF_PREFIX = {prefix: network for network, prefix in PREFIX.items()}

Tier = Literal["leaf", "spine", "core"]


@dataclass(frozen=True)
class HostRole:
    """A host: its pool and its 0-based index in the pool."""

    pool: str
    index: int


@dataclass(frozen=True)
class SwitchRole:
    """A switch: network, tier, plane, 0-based index in its tier (a leaf's index is its group),
    and a rail leaf's rail."""

    network: str
    tier: Tier
    plane: int
    index: int
    rail: int | None = None


Role = HostRole | SwitchRole


def _index(digits: str) -> int | None:
    """`004` -> 3; None for a number the product never writes (`0004`, `000`)."""
    value = int(digits) - 1
    return value if value >= 0 and number(value) == digits else None


def role_of(name: str) -> Role | None:
    """The role a device name gives, or None."""
    host = HOST.match(name)
    if host is not None:
        index = _index(host.group("number"))
        return None if index is None else HostRole(host.group("pool"), index)
    leaf = LEAF.match(name)
    if leaf is not None:
        index = _index(leaf.group("number"))
        plane = int(leaf.group("plane") or 0)
        rail = leaf.group("rail")
        return None if index is None else SwitchRole(FABRIC, "leaf", plane, index, int(rail) if rail else None)
    upper = UPPER.match(name)
    if upper is not None:
        index = _index(upper.group("number"))
        tier: Tier = "spine" if upper.group("tier") == "spine" else "core"
        return None if index is None else SwitchRole(FABRIC, tier, int(upper.group("plane") or 0), index)
    other = NETWORK.match(name)
    if other is not None and other.group("prefix") in NETWORK_OF_PREFIX:
        index = _index(other.group("number"))
        network_tier: Tier = "leaf" if other.group("tier") == "leaf" else "spine"
        return None if index is None else SwitchRole(NETWORK_OF_PREFIX[other.group("prefix")], network_tier, 0, index)
    return None


def roles(devices: set[str]) -> tuple[dict[str, Role], list[str]]:
    """(device -> role) for every device whose name gives one, and the names that give none."""
    found: dict[str, Role] = {}
    unnamed: list[str] = []
    for device in sorted(devices):
        role = role_of(device)
        if role is None:
            unnamed.append(device)
        else:
            found[device] = role
    return found, unnamed
