"""The fabric as a scheduler sees it: leaf groups of hosts, pods of spines, and a root.

A rail-optimized leaf group has one leaf per rail (and plane), and every one of them serves the
same hosts, so a scheduler treats the group as one logical leaf. Spines of a pod are equivalent
for placement, as are cores, so each tier above collapses to one logical switch per pod and one
root. Everything is read off the graph (which leaf a host is cabled to), not re-derived from
the sizing, so the exports follow the cabling. The topology keeps it (Topology.fabric_tree).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import networkx as nx

from cluster.naming import FABRIC, number
from cluster.records import SwitchNode


@dataclass(frozen=True)
class LeafGroup:
    """One logical leaf: the physical leaves of a group and the hosts cabled to them."""

    name: str
    index: int
    pod: int
    leaves: tuple[str, ...]
    hosts: tuple[str, ...]


@dataclass(frozen=True)
class Pod:
    """The spines that a set of leaf groups uplinks to (all spines on a two-tier fabric)."""

    name: str
    index: int
    spines: tuple[str, ...]
    groups: tuple[str, ...]


@dataclass(frozen=True)
class FabricTree:
    """Leaf groups, pods above them and the cores on top (empty below three tiers)."""

    groups: tuple[LeafGroup, ...]
    pods: tuple[Pod, ...]
    cores: tuple[str, ...]

    @property
    def tiers(self) -> int:
        if self.cores:
            return 3
        return 2 if any(pod.spines for pod in self.pods) else 1

    def group_of(self) -> dict[str, LeafGroup]:
        """Host name -> its leaf group."""
        return {host: group for group in self.groups for host in group.hosts}


def fabric_tree(graph: nx.MultiGraph, switches: Mapping[str, SwitchNode],
                hosts_by_pool: Mapping[str, Sequence[str]]) -> FabricTree:
    """The logical hierarchy of the on-prem GPU fabric (empty on cloud targets)."""
    by_tier: dict[str, list[tuple[str, SwitchNode]]] = {"leaf": [], "spine": [], "core": []}
    for name, data in switches.items():
        if data["network"] == FABRIC:
            by_tier[data["tier"]].append((name, data))
    leaves_by_group: dict[int, list[str]] = {}
    pod_of_group: dict[int, int] = {}
    group_of_leaf: dict[str, int] = {}
    for name, data in by_tier["leaf"]:
        group, pod = data["group"], data["pod"]
        assert group is not None and pod is not None, "every fabric leaf is in a leaf group and a pod"
        leaves_by_group.setdefault(group, []).append(name)
        group_of_leaf[name] = group
        pod_of_group[group] = pod
    hosts_by_group: dict[int, list[str]] = {group: [] for group in leaves_by_group}
    for pool_hosts in hosts_by_pool.values():
        for host in pool_hosts:
            mine = sorted({group_of_leaf[peer] for peer in graph[host]
                           if FABRIC in graph[host][peer] and peer in group_of_leaf})
            for group in mine[:1]:
                hosts_by_group[group].append(host)
    order = sorted(leaves_by_group)
    groups = tuple(
        LeafGroup(name=f"leaf-{number(group)}", index=group, pod=pod_of_group[group],
                  leaves=tuple(sorted(leaves_by_group[group])), hosts=tuple(hosts_by_group[group]))
        for group in order
    )
    spines_by_pod: dict[int, list[str]] = {}
    for name, data in by_tier["spine"]:
        pod = data["pod"]
        assert pod is not None, "every fabric spine is in a pod"
        spines_by_pod.setdefault(pod, []).append(name)
    pod_indexes = sorted(set(pod_of_group.values()) | set(spines_by_pod))
    pods = tuple(
        Pod(name=f"pod-{number(pod)}", index=pod, spines=tuple(sorted(spines_by_pod.get(pod, []))),
            groups=tuple(group.name for group in groups if group.pod == pod))
        for pod in pod_indexes
    )
    cores = tuple(sorted(name for name, _ in by_tier["core"]))
    return FabricTree(groups=groups, pods=pods, cores=cores)
