"""Where N nodes of a pool land on the fabric, and what the leaf and spine uplinks give them.

Two placements bracket what a scheduler can do:
- packed: whole leaf groups first, largest groups first (what a topology-aware scheduler such as
  Slurm's topology/tree plugin aims for). Only the job's own traffic is on those leaves.
- worst: round-robin over leaf groups (and pods), so consecutive ranks sit under different
  leaves, and every other port of those leaves is busy with other traffic. A flow that leaves its
  leaf then gets the leaf's fair share: uplink bandwidth / downlink bandwidth (the
  oversubscription read off the graph), and likewise at the spine tier for flows leaving a pod.

A leaf group is the set of fabric leaves a host is cabled to (all rails of its group on a
rail-optimized fabric; its top-of-rack leaf on rack-tor). Traffic between two hosts of one group
stays on their leaves (rail-aligned, as NCCL's PXN keeps it); traffic between groups crosses the
leaf uplinks, and traffic between pods the spine uplinks too.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from cluster.topology import FABRIC, Topology

Kind = Literal["packed", "worst"]
PLACEMENTS: tuple[Kind, ...] = ("packed", "worst")


@dataclass(frozen=True)
class Placement:
    """The hosts a job of N nodes uses, in rank order, and the leaf group of each."""

    kind: Kind
    hosts: tuple[str, ...]
    groups: tuple[frozenset[str], ...]  # leaf group per host, same order

    @property
    def leaf_groups(self) -> int:
        return len(set(self.groups))


class NoFabricPath(ValueError):
    """The placed nodes have no fabric path between them (FAB-CONNECTED): a collective across
    them cannot run, so there is no time to estimate."""


@dataclass(frozen=True)
class FabricShare:
    """The fraction of its NIC bandwidth a crossing flow keeps, and what limits it."""

    factor: float = 1.0
    bottleneck: str | None = None  # "leaf uplinks at leaf-002 (2:1)"
    tier: str | None = None  # leaf | spine


def leaf_group(topology: Topology, host: str) -> frozenset[str]:
    """The fabric leaves a host is cabled to (empty on cloud targets: the provider's fabric)."""
    return topology.host_fabric[host][0]


def place(topology: Topology, pool: str, nodes: int, kind: Kind = "packed") -> Placement:
    """N hosts of `pool` placed `packed` (fewest leaf groups) or `worst` (spread over all)."""
    hosts = topology.hosts_by_pool[pool]
    if not 1 <= nodes <= len(hosts):
        raise ValueError(f"{nodes} nodes requested, pool {pool!r} has {len(hosts)}")
    by_group: dict[frozenset[str], list[str]] = defaultdict(list)
    for host in hosts:
        by_group[leaf_group(topology, host)].append(host)
    ordered = sorted(by_group.values(), key=lambda members: (-len(members), members[0]))
    if kind == "packed":
        chosen = [host for members in ordered for host in members][:nodes]
    else:
        # Round-robin over groups, alternating pods, so neighbours in rank order are far apart.
        ordered.sort(key=lambda members: (_pod_rank(topology, members[0]), members[0]))
        chosen = []
        depth = 0
        while len(chosen) < nodes:
            chosen.extend(members[depth] for members in ordered if depth < len(members))
            depth += 1
        chosen = chosen[:nodes]
    return Placement(kind, tuple(chosen), tuple(leaf_group(topology, host) for host in chosen))


def _pod_rank(topology: Topology, host: str) -> tuple[int, int]:
    """(index of the host's leaf group within its pod, pod): sorting by it interleaves pods."""
    leaves = sorted(leaf_group(topology, host))
    plan = topology.fabric_plan
    if not leaves or plan is None:
        return (0, 0)
    data = topology.switch(leaves[0])
    groups_per_pod = -(-plan.groups // max(plan.pods, 1))  # as topology.build splits them
    return ((data["group"] or 0) % groups_per_pod, data["pod"] or 0)


def ring_flows(count: int) -> list[tuple[int, int, float]]:
    """A ring in rank order: rank i sends everything to rank i+1 (one flow per node)."""
    if count < 2:
        return []
    return [(index, (index + 1) % count, 1.0) for index in range(count)]


def fabric_share(topology: Topology, placement: Placement, flows: Sequence[tuple[int, int, float]] | None = None,
                 all_to_all: bool = False) -> FabricShare:
    """How much of a node's NIC bandwidth its cross-leaf flows keep under `placement`.

    flows: (source rank, destination rank, share of the source node's traffic). all_to_all:
    every node sends the same amount to every other node, so (N - k) / (N - 1) of a node's
    traffic leaves a leaf group holding k of the N nodes (COLLECTIVES.md: all-to-all is lowered by
    oversubscription when ranks span leaves).
    packed: demand on a leaf group's uplinks = sum over its placed hosts of (share leaving the
    group x host's fabric downlink Gbps); factor = min(1, uplink Gbps / demand).
    worst: the other ports of the group are busy, so a crossing flow gets uplink / downlink of
    the whole group (its fair share). The spine tier is treated the same way for flows leaving a
    pod. The smallest factor over groups and pods wins and is named as the bottleneck.
    """
    count = len(placement.hosts)
    if count < 2 or not any(placement.groups):
        return FabricShare()
    leaving: dict[int, float] = defaultdict(float)  # rank -> share of its traffic leaving its group
    leaving_pod: dict[int, float] = defaultdict(float)
    pods = [_pod_of(topology, group) for group in placement.groups]
    if all_to_all:
        members = _counts(placement.groups)
        pod_members = _counts(pods)
        for rank, group in enumerate(placement.groups):
            leaving[rank] = (count - members[group]) / (count - 1)
            leaving_pod[rank] = (count - pod_members[pods[rank]]) / (count - 1)
    else:
        for source, target, share in flows or ring_flows(count):
            if placement.groups[source] != placement.groups[target]:
                leaving[source] += share
            if pods[source] != pods[target]:
                leaving_pod[source] += share
    best = FabricShare()
    demand: dict[frozenset[str], float] = defaultdict(float)
    for rank, share in leaving.items():
        demand[placement.groups[rank]] += share * _host_fabric_gbps(topology, placement.hosts[rank])
    for group, needed in sorted(demand.items(), key=lambda item: sorted(item[0])):
        if needed <= 0:
            continue
        up = down = 0.0
        for leaf in group:
            load = topology.switch_loads[leaf]
            up += load.up_gbps
            down += load.down_gbps
        offered = down if placement.kind == "worst" else needed
        factor = min(1.0, up / offered) if offered else 1.0
        if factor < best.factor:
            ratio = f"{down / up:.3g}:1" if up else "none"
            best = FabricShare(factor, f"leaf uplinks at {min(group)} ({ratio})", "leaf")
    if len(set(pods)) > 1 and any(value > 0 for value in leaving_pod.values()):
        best = _spine_share(topology, placement, pods, leaving_pod, best)
    if best.factor <= 0:
        raise NoFabricPath(f"{count} nodes placed {placement.kind} have no fabric path between their leaf groups "
                           f"({best.bottleneck}): a collective across them cannot run (see FAB-CONNECTED)")
    return best


def _spine_share(topology: Topology, placement: Placement, pods: list[int], leaving_pod: dict[int, float],
                 best: FabricShare) -> FabricShare:
    demand: dict[int, float] = defaultdict(float)
    for rank, share in leaving_pod.items():
        demand[pods[rank]] += share * _host_fabric_gbps(topology, placement.hosts[rank])
    by_pod: dict[int | None, list[str]] = defaultdict(list)
    for name, data in topology.switches(FABRIC, "spine"):
        by_pod[data["pod"]].append(name)
    for pod, needed in sorted(demand.items()):
        up = down = 0.0
        spines = sorted(by_pod.get(pod, ()))
        for spine in spines:
            load = topology.switch_loads[spine]
            up += load.up_gbps
            down += load.down_gbps
        if needed <= 0 or not spines:
            continue
        offered = down if placement.kind == "worst" else needed
        factor = min(1.0, up / offered) if offered and up else (0.0 if offered else 1.0)
        if factor < best.factor:
            ratio = f"{down / up:.3g}:1" if up else "none"
            best = FabricShare(factor, f"spine uplinks at {spines[0]} ({ratio})", "spine")
    return best


def _counts(values: Sequence[object]) -> dict[object, int]:
    counts: dict[object, int] = defaultdict(int)
    for value in values:
        counts[value] += 1
    return counts


def _pod_of(topology: Topology, group: frozenset[str]) -> int:
    if not group:
        return 0
    return topology.switch(min(group))["pod"] or 0


def _host_fabric_gbps(topology: Topology, host: str) -> float:
    """Gbps of the host's GPU-fabric links (at the speed they really run)."""
    return float(topology.host_fabric[host][1])
