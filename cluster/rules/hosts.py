"""Host-side fabric rules: bandwidth per GPU, rail alignment."""

from __future__ import annotations

import math
from collections.abc import Iterator

import numpy as np

from cluster.findings import Finding, Severity
from cluster.load import NETWORK_CODES
from cluster.rules.base import Rule
from cluster.spec import ClusterSpec, PoolSpec
from cluster.topology import FABRIC, Topology


def fabric_gbps_per_node(topology: Topology, host: str) -> tuple[float, float]:
    """(Gbps the links really run at, Gbps the NIC ports are rated for) on the GPU fabric."""
    effective = nominal = 0.0
    for _, _, data in topology.cables(host):
        if data["network"] == FABRIC:
            effective += data["links"] * data["gbps"]
            nominal += data["links"] * data["lower_gbps"]
    return effective, nominal


class GpuNicBandwidth(Rule):
    """Fabric bandwidth per GPU = the node's fabric port Gbps / GPUs per node. Below
    policy.min_gbps_per_gpu: error; below recommended: warning; fewer NICs than GPUs: warning.
    Cloud layouts come from the instance catalog."""

    id = "FAB-GPU-NIC"
    title = "fabric bandwidth per GPU"

    def check(self, spec: ClusterSpec, topology: Topology) -> Iterator[Finding]:
        policy = spec.policy
        for pool in spec.pools:
            first = topology.hosts_by_pool[pool.name][0]
            effective, nominal = fabric_gbps_per_node(topology, first)
            per_gpu = effective / pool.gpus_per_node
            layout = self._layout(pool)
            slower = f" (the NICs are rated {nominal / pool.gpus_per_node:g}; links run slower)" if nominal != effective else ""
            path = f"{pool.path}.instance_type" if pool.instance_type else f"{pool.path}.fabric_nics"
            if per_gpu < policy.min_gbps_per_gpu:
                yield self.finding(
                    path,
                    f"expected >= {policy.min_gbps_per_gpu:g} Gbps of fabric per GPU, found {per_gpu:g} "
                    f"({layout} for {pool.gpus_per_node} GPUs){slower}",
                    self._hint(pool, "fix", policy.min_gbps_per_gpu, effective)
                    + "; or lower policy.min_gbps_per_gpu",
                )
            elif per_gpu < policy.recommended_gbps_per_gpu:
                yield self.finding(
                    path,
                    f"{per_gpu:g} Gbps of fabric per GPU is below the recommended "
                    f"{policy.recommended_gbps_per_gpu:g} ({layout}){slower}",
                    self._hint(pool, "improve", policy.recommended_gbps_per_gpu, effective),
                    Severity.WARNING,
                )
            if pool.fabric_nics.count < pool.gpus_per_node:
                yield self.finding(
                    path,
                    f"{pool.fabric_nics.count} fabric NICs for {pool.gpus_per_node} GPUs: GPUs share NICs "
                    "(PCIe and NIC contention, cross-NUMA traffic)",
                    "use one fabric NIC per GPU",
                    Severity.WARNING,
                )

    @staticmethod
    def _layout(pool: PoolSpec) -> str:
        nics = pool.fabric_nics
        kind = pool.fabric_kind.upper() if pool.instance_type else ""
        ports = f" x {nics.ports_per_nic} ports" if nics.ports_per_nic > 1 else ""
        return f"{nics.count}{ports} x {nics.gbps}G {kind}".rstrip()

    @staticmethod
    def _hint(pool: PoolSpec, verb: str, target: float, effective: float) -> str:
        """The NIC count (at today's port speed) that reaches `target` Gbps per GPU."""
        if pool.instance_type:
            return f"{verb} with an instance type with more fabric bandwidth (for example p5e.48xlarge, a3-ultragpu-8g)"
        nics = pool.fabric_nics
        ports = max(nics.count * nics.ports_per_nic, 1)
        per_port = effective / ports if effective else float(nics.gbps)
        count = math.ceil(target * pool.gpus_per_node / (per_port * nics.ports_per_nic) - 1e-9)
        reached = count * nics.ports_per_nic * per_port / pool.gpus_per_node
        return (f"{verb} with node_pools[{pool.index}].fabric_nics.count: {count} ({count} x {per_port:g}G gives "
                f"{reached:g} Gbps per GPU), or faster NICs and switch ports")


class RailAlignment(Rule):
    """Rail-optimized fabrics: port r of every node lands on a rail-r leaf, every rail leaf of a
    leaf group serves the same nodes, and every pool uses every rail."""

    id = "FAB-RAIL"
    title = "rail alignment"

    def applies(self, spec: ClusterSpec) -> bool:
        return spec.fabric is not None and spec.fabric.design == "rail-optimized"

    def check(self, spec: ClusterSpec, topology: Topology) -> Iterator[Finding]:
        assert spec.fabric is not None
        # From the link arrays: every fabric edge that names a rail (a host's port), in edge order.
        # At 131,072 GPUs a walk of all 460k edges with a record lookup each cost 0.07 s.
        arrays = topology.link_arrays
        rows = np.flatnonzero((arrays.network == NETWORK_CODES[FABRIC]) & (arrays.rail >= 0))
        rails = arrays.rail[rows]
        host_is_lower = arrays.is_host[arrays.lower[rows]]
        hosts = np.where(host_is_lower, arrays.lower[rows], arrays.upper[rows])
        leaves = np.where(host_is_lower, arrays.upper[rows], arrays.lower[rows])
        leaf_rail, leaf_group, leaf_plane = (_node_column(topology, key) for key in ("rail", "group", "plane"))
        wrong = np.flatnonzero(leaf_rail[leaves] != rails)
        if len(wrong):
            first = int(wrong[0])
            data = topology.edges[int(rows[first])][3]
            host, leaf = arrays.names[int(hosts[first])], arrays.names[int(leaves[first])]
            yield self.finding(
                data["path"],
                f"{host} port for rail {data['rail']} lands on {leaf}, a rail-{topology.switch(leaf)['rail']} leaf",
                "cable rail r of every node to a rail-r leaf",
            )
            return
        inconsistent = _rail_inconsistent_group(leaf_plane[leaves], leaf_group[leaves], rails, hosts)
        if inconsistent is not None:
            (plane, group), hosts_per_rail = inconsistent
            sizes = ", ".join(f"rail {rail}: {count}" for rail, count in hosts_per_rail)
            yield self.finding(
                "node_pools",
                f"leaf group {group + 1} (plane {plane}) is not rail-consistent: its rail leaves serve "
                f"different nodes ({sizes})",
                "give every pool the same number of fabric ports per node (one per rail), or use separate "
                "fabrics",
            )
        rail_count = spec.fabric.rails
        for pool in spec.pools:
            used = pool.fabric_nics.ports // spec.fabric.planes
            if used < rail_count:
                yield self.finding(
                    f"{pool.path}.fabric_nics",
                    f"{pool.name} reaches rails 0-{used - 1} of {rail_count}: its GPUs cannot use rails "
                    f"{used}-{rail_count - 1}",
                    f"give every pool {rail_count} fabric ports per plane",
                    Severity.WARNING,
                )


def _node_column(topology: Topology, key: str) -> np.ndarray:
    """One integer per node of the graph (in graph order): its record's `key`, -1 where None or absent."""
    return np.array([-1 if value is None else value for _, value in topology.graph.nodes(data=key)], dtype=np.int64)


def _rail_inconsistent_group(planes: np.ndarray, groups: np.ndarray, rails: np.ndarray,
                             hosts: np.ndarray) -> tuple[tuple[int, int], list[tuple[int, int]]] | None:
    """The first (plane, leaf group) whose rail leaves do not all serve the same hosts, with
    (rail, hosts served) for each of its rails; None when every group is consistent.

    One row per (host port, leaf), as positions. A group is consistent when each of its rails
    serves every host of the group: it then has as many distinct (rail, host) pairs as rails
    times hosts (no rail serves more than the group's hosts, so any short rail shows).
    """
    if not len(hosts):
        return None
    assert (groups >= 0).all(), "a rail leaf is in a leaf group"
    group_count, rail_count, host_count = int(groups.max()) + 1, int(rails.max()) + 1, int(hosts.max()) + 1
    group = planes * group_count + groups  # sorts as (plane, group)
    served = np.unique((group * rail_count + rails) * host_count + hosts)  # each (group, rail, host) once
    group_rail, host = np.divmod(served, host_count)
    group, rail = np.divmod(group_rail, rail_count)
    groups_seen, pairs = np.unique(group, return_counts=True)
    hosts_in = np.bincount(np.unique(group * host_count + host) // host_count, minlength=len(pairs))[groups_seen]
    rails_in = np.bincount(np.unique(group_rail) // rail_count, minlength=len(pairs))[groups_seen]
    short = np.flatnonzero(pairs != hosts_in * rails_in)
    if not len(short):
        return None
    first = int(groups_seen[short[0]])
    rails_here, counts = np.unique(rail[group == first], return_counts=True)
    return divmod(first, group_count), list(zip(rails_here.tolist(), counts.tolist(), strict=True))
