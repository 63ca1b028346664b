"""What a change does to the hosts that already exist, and the stack-file keys that keep them where
they are.

Three defaults tie a host's place to more than its name: a pool without `address_block` takes the
host address block of its position in node_pools; hosts are cabled pool after pool in file order;
`fabric.fill: even` spreads the nodes over the leaf groups, so one more node can shift the split.
When a change moves an existing host's cable or address, `keeping` builds NEW again with the keys
that pin each of those (the new pools after the existing ones, every existing pool's OLD block as
its address_block, fill: packed), one edit at a time and then together, and keeps the first set of
edits that leaves every existing host as it was, or else the one that leaves the fewest moved. It
is proved by building it, never assumed: an edit that NEW's design does not validate with is
dropped.
"""

from __future__ import annotations

import copy
import itertools
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from cluster.change.compare import (
    CableKey,
    CableWork,
    Change,
    HostPorts,
    cable_changes,
    host_port_changes,
    host_ports,
    keyed_cables,
)
from cluster.pipeline import Valid, validate_mapping


@dataclass(frozen=True)
class Disturbed:
    """Existing hosts' work in a change: their ports whose address or leaf changes, and their
    cables moved or removed (a host in both designs)."""

    host_ports: int
    cables: int

    @property
    def none(self) -> bool:
        return not (self.host_ports or self.cables)

    def __str__(self) -> str:
        return f"{self.host_ports:,} ports change address or leaf, {self.cables:,} of their cables move"


@dataclass(frozen=True)
class Edit:
    """One stack-file edit: where, what to set (as the stack file writes it), and what it keeps."""

    path: str
    value: str
    why: str


@dataclass(frozen=True)
class Keeping:
    """The edits to NEW that keep existing hosts in place (or the fewest moved), and what is left
    moved with them. `edits` is empty when no key helps."""

    disturbed: Disturbed
    edits: tuple[Edit, ...]
    left: Disturbed
    reasons: tuple[str, ...] = ()  # why what is left moves, where a key cannot keep it


def _reasons(old: Valid, new: Valid) -> tuple[str, ...]:
    """Why hosts still move that no key keeps: a pool grown, shrunk or removed before others (hosts
    are cabled pool after pool, so the pools after it shift), and an even fill already in place."""
    sizes = {pool.name: pool.nodes for pool in new.spec.pools}
    order = [pool.name for pool in old.spec.pools]
    found = []
    for place, pool in enumerate(old.spec.pools):
        after = [name for name in order[place + 1:] if name in sizes]
        if not after or sizes.get(pool.name) == pool.nodes:
            continue
        what = "removed" if pool.name not in sizes else f"{pool.nodes} -> {sizes[pool.name]} nodes"
        found.append(f"pool {pool.name} ({what}) is cabled before pool{'s' if len(after) > 1 else ''} "
                     f"{', '.join(after)}, whose hosts shift with it: change the last pool, or add nodes as a "
                     "new pool at the end")
    if not found and old.spec.fabric is not None and old.spec.fabric.fill == "even":
        found.append("the old design spreads its nodes evenly over the leaf groups (fabric.fill: even); packed "
                     "would move them once, to places that later growth keeps")
    return tuple(found)


def disturbed(old: Valid, new: Valid, change: Change) -> Disturbed:
    """What `change` (OLD -> NEW) does to the hosts in both designs."""
    kept = {host for hosts in old.topology.hosts_by_pool.values() for host in hosts} & {
        host for hosts in new.topology.hosts_by_pool.values() for host in hosts}
    cables = [work for work in (*change.cables_moved, *change.cables_removed) if work.lower.device in kept]
    return Disturbed(len(change.host_ports), len(cables))


def _measure(old: Valid, old_cables: dict[CableKey, CableWork], old_ports: HostPorts, new: Valid) -> Disturbed:
    """`disturbed` of OLD -> NEW, OLD's cables and host ports worked out once by the caller."""
    change = Change()
    cable_changes(change, old_cables, keyed_cables(new))
    change.host_ports = host_port_changes(old_ports, host_ports(new))
    return disturbed(old, new, change)


Editor = Callable[[Valid, dict[str, Any]], list[Edit]]


def _existing_first(old: Valid, data: dict[str, Any]) -> list[Edit]:
    """New pools after the existing ones, the existing ones in OLD's order: hosts are cabled pool
    by pool in file order."""
    rank = {pool.name: place for place, pool in enumerate(old.spec.pools)}
    pools: list[dict[str, Any]] = data["node_pools"]
    ordered = sorted(pools, key=lambda pool: rank.get(pool["name"], len(rank)))  # stable: new pools keep their order
    if [pool["name"] for pool in ordered] == [pool["name"] for pool in pools]:
        return []
    data["node_pools"] = ordered
    return [Edit("node_pools", "in the order " + ", ".join(pool["name"] for pool in ordered),
                 "hosts are cabled pool by pool in file order: the existing pools first, in their order, the new "
                 "ones after them")]


def _blocks_pinned(old: Valid, data: dict[str, Any]) -> list[Edit]:
    """Every existing pool whose host address block would change keeps OLD's as its address_block;
    a new pool whose position now falls on a taken block takes a free one."""
    was = {pool.name: pool.host_block for pool in old.spec.pools}
    pools: list[dict[str, Any]] = data["node_pools"]
    edits = []
    for index, pool in enumerate(pools):
        block = was.get(pool["name"])
        if block is not None and pool.get("address_block", index) != block:
            pool["address_block"] = block
            edits.append(Edit(f"node_pools[{index}].address_block", str(block),
                              f"pool {pool['name']} keeps host address block {block}"))
    if not edits:
        return []
    taken = {pool["address_block"] for pool in pools if pool.get("address_block") is not None}
    free = (block for block in itertools.count() if block not in taken)
    for index, pool in enumerate(pools):
        if pool.get("address_block") is None and index in taken:
            pool["address_block"] = next(free)
            edits.append(Edit(f"node_pools[{index}].address_block", str(pool["address_block"]),
                              f"new pool {pool['name']} takes a free block"))
    return edits


def _packed(_old: Valid, data: dict[str, Any]) -> list[Edit]:
    """`fabric.fill: packed`: each leaf group filled in order, so appended nodes move no one."""
    fabric: dict[str, Any] = data.get("fabric") or {}
    if fabric.get("fill") == "packed":
        return []
    data["fabric"] = {**fabric, "fill": "packed"}
    return [Edit("fabric.fill", "packed", "each leaf group is filled to capacity in order, so added nodes "
                 "take new places instead of shifting the even split")]


EDITORS: tuple[Editor, ...] = (_existing_first, _blocks_pinned, _packed)


def keeping(old: Valid, new: Valid, change: Change) -> Keeping | None:
    """None when the change leaves every existing host as it was; else the edits to NEW that keep
    them (checked by building NEW with them), or the ones that keep the most."""
    now = disturbed(old, new, change)
    if now.none:
        return None
    source = new.loaded.data or {}
    old_cables, old_ports = keyed_cables(old), host_ports(old)  # the same for every candidate
    best: tuple[Disturbed, tuple[Edit, ...]] = (now, ())
    for size in range(1, len(EDITORS) + 1):
        for editors in itertools.combinations(EDITORS, size):
            data = copy.deepcopy(source)
            made = [editor(old, data) for editor in editors]
            if not all(made):  # an editor with nothing to do: the smaller set is tried on its own
                continue
            built = validate_mapping(new.stack, data)
            if not isinstance(built, Valid) or built.schema_failed or not built.ok:
                continue
            left = _measure(old, old_cables, old_ports, built)
            edits = tuple(edit for edit_list in made for edit in edit_list)
            if (left.host_ports + left.cables, len(edits)) < (best[0].host_ports + best[0].cables, len(best[1])):
                best = (left, edits)
        if best[0].none:
            break
    return Keeping(now, best[1], best[0], () if best[0].none else _reasons(old, new))
