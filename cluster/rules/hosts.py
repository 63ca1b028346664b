"""Host-side fabric rules: bandwidth per GPU, rail alignment."""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterator

from cluster.findings import Finding, Severity
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
        members: dict[tuple[int, int], dict[int, set[str]]] = defaultdict(lambda: defaultdict(set))
        # The topology's edge list and records: same edges in the same order as
        # graph.edges(data=True), without a networkx view lookup per edge (460k at 131,072 GPUs).
        nodes, switches = topology.nodes, topology.switch_nodes
        for lower, upper, _key, data in topology.edges:
            if data["network"] != FABRIC or data["rail"] is None:
                continue
            host, leaf = (lower, upper) if nodes[lower]["kind"] == "host" else (upper, lower)
            leaf_data = switches[leaf]
            if leaf_data["rail"] != data["rail"]:
                yield self.finding(
                    data["path"],
                    f"{host} port for rail {data['rail']} lands on {leaf}, a rail-{leaf_data['rail']} leaf",
                    "cable rail r of every node to a rail-r leaf",
                )
                return
            group = leaf_data["group"]
            assert group is not None, "a rail leaf is in a leaf group"
            members[(leaf_data["plane"], group)][leaf_data["rail"]].add(host)
        for (plane, group), rails in sorted(members.items()):
            sets = list(rails.values())
            if any(hosts != sets[0] for hosts in sets[1:]):
                sizes = ", ".join(f"rail {rail}: {len(hosts)}" for rail, hosts in sorted(rails.items()))
                yield self.finding(
                    "node_pools",
                    f"leaf group {group + 1} (plane {plane}) is not rail-consistent: its rail leaves serve "
                    f"different nodes ({sizes})",
                    "give every pool the same number of fabric ports per node (one per rail), or use separate "
                    "fabrics",
                )
                break
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
