"""Bisection bandwidth of the GPU fabric, by max-flow over the topology graph.

The cut splits the GPUs into two halves along leaf-group boundaries (whole pods first on a
three-tier fabric), so a node's rails never straddle it. Its bandwidth is the one-way max-flow
from every host of one side to every host of the other, each host sending at most its own
fabric injection, every cable carrying links x Gbps in each direction. The ratio is that flow
over the smaller side's injection: half the total GPU injection when the halves are equal, so
1.0 is a non-blocking fabric and 0.5 a 2:1 one.

Which balanced cut is worst: a fat-tree's cut is limited by each side's uplink capacity, so
the worst one puts the weakest groups together. Two candidates are flowed and the lower kept:
groups in pod / index order, and weakest-uplinks-per-GPU first (pods, then groups in a pod).
On regular designs the two agree; on irregular ones (uneven uplinks, spines that do not divide
the uplinks) the second finds the cut the first misses.

On three tiers a second cut splits the weakest pod in halves: its traffic climbs only to the
pod's spines, so it measures the leaf tier alone (`bisections`).

Capacities are integer Gbps, as max-flow solvers need. Small graphs use networkx's
preflow-push (no import cost); large ones scipy's sparse Dinic (about 0.05 s per flow at
131,072 GPUs; networkx's pure-Python flow was measured at 66 s on such a graph in issue 6).
Tests check both give the same flow on the same networks.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Collection, Mapping
from dataclasses import dataclass
from typing import Any

import networkx as nx

from cluster.load import NETWORK_CODES
from cluster.topology import FABRIC, Topology

Array = Any  # a 1-D numpy integer array (numpy is imported lazily)
# Below this networkx is faster than importing scipy (0.1-0.3 s) for a flow or two; above it networkx takes
# 5-90 ms a flow (6,000 arcs), and `diff` and `whatif` run hundreds of flows on a 1,024-GPU design.
SCIPY_FROM_ARCS = 1_000


@dataclass(frozen=True)
class Cut:
    """One balanced split of the GPUs and the bandwidth across it."""

    groups_a: tuple[int, ...]  # leaf groups (0-based) on side A; the rest are side B
    groups_b: tuple[int, ...]
    gpus_a: int
    gpus_b: int
    flow_gbps: int  # one-way max-flow from A to B
    injection_gbps: int  # the smaller side's total fabric injection
    pods: bool  # the cut follows pod boundaries

    @property
    def ratio(self) -> float:
        return self.flow_gbps / self.injection_gbps if self.injection_gbps else 0.0

    def describe(self) -> str:
        along = " (along pod boundaries)" if self.pods else ""
        return (f"cut between leaf groups {_ranges(self.groups_a)} ({self.gpus_a:,} GPUs) and "
                f"{_ranges(self.groups_b)} ({self.gpus_b:,} GPUs){along}")


@dataclass(frozen=True)
class _Group:
    index: int
    pod: int
    gpus: int
    injection: int
    uplink_gbps: int


@dataclass(frozen=True)
class Bisections:
    """The worst cut of the whole fabric, and on three tiers the worst cut inside one pod.

    A cut between pods crosses the leaf and spine tiers (traffic climbs to the cores); a cut
    inside a pod crosses only the leaf tier. Both are checked, each against its own tiers.
    """

    fabric: Cut | None
    pod: Cut | None


def bisection(
    topology: Topology,
    without: Collection[str] = (),
    fewer_links: Mapping[tuple[str, str], int] | None = None,
) -> Cut | None:
    """The worst balanced cut (lowest ratio) of the fabric; None with fewer than two leaf groups.

    `without` removes devices and `fewer_links` takes links off an edge (keyed (lower, upper)),
    for what-if analysis; the graph itself is never changed.
    """
    return bisections(topology, without, fewer_links).fabric


def bisections(
    topology: Topology,
    without: Collection[str] = (),
    fewer_links: Mapping[tuple[str, str], int] | None = None,
    pod: int | None = None,
) -> Bisections:
    """`bisection`, plus (three tiers) the worst cut inside pod `pod`, or inside the pod whose
    leaves have the fewest uplinks per GPU when `pod` is None."""
    network = _FlowNetwork(topology, set(without), dict(fewer_links or {}))
    groups = network.groups()
    pod_gpus: dict[int, int] = defaultdict(int)
    pod_groups: dict[int, list[_Group]] = defaultdict(list)
    for group in groups:
        pod_gpus[group.pod] += group.gpus
        pod_groups[group.pod].append(group)
    three_tier = len(pod_gpus) > 1
    fabric = _worst(network, groups, pod_gpus, three_tier) if len(groups) > 1 else None
    inside = None
    if three_tier:
        if pod is None:
            split = [number for number, members in pod_groups.items() if len(members) > 1]
            pod = min(split, key=lambda number: (sum(g.uplink_gbps for g in pod_groups[number])
                                                 / max(pod_gpus[number], 1), number), default=None)
        if pod is not None and len(pod_groups.get(pod, [])) > 1:
            inside = _worst(network, pod_groups[pod], pod_gpus, False)
    return Bisections(fabric, inside)


def _worst(network: _FlowNetwork, groups: list[_Group], pod_gpus: Mapping[int, int], pods: bool) -> Cut:
    """The lower of two candidate cuts: groups in (pod, index) order, and weakest first."""
    pod_uplinks = {pod: int(network.pod_uplinks[pod]) if 0 <= pod < len(network.pod_uplinks) else 0
                   for pod in pod_gpus}
    in_order = sorted(groups, key=lambda g: (g.pod, g.index))
    weakest = sorted(groups, key=lambda g: (pod_uplinks[g.pod] / max(pod_gpus[g.pod], 1), g.pod,
                                            g.uplink_gbps / max(g.gpus, 1), g.index))
    best: Cut | None = None
    for order in (in_order, weakest) if weakest != in_order else (in_order,):
        cut = network.flow(order, pods)
        if best is None or cut.ratio < best.ratio - 1e-12:
            best = cut
    assert best is not None
    return best


class _FlowNetwork:
    """The fabric as integer-capacity arcs (tail, head, Gbps): hosts, switches, host injection.

    Vectorized over the graph's shared link arrays (Topology.link_arrays), because at 131,072
    GPUs there are 393k fabric edges and a Python loop with per-edge bookkeeping cost 0.8 s.
    Node positions are the graph's; nodes off the fabric are isolated in the flow network.
    """

    def __init__(self, topology: Topology, without: set[str], fewer: dict[tuple[str, str], int]) -> None:
        import numpy as np

        graph = topology.graph
        arrays = topology.link_arrays
        index = arrays.index
        self.size = size = len(arrays.names)
        keep = arrays.network == NETWORK_CODES[FABRIC]
        if without:
            gone = np.zeros(size, dtype=bool)
            gone[[index[name] for name in without if name in index]] = True
            keep &= ~gone[arrays.lower] & ~gone[arrays.upper]
        low, high, links, gbps = arrays.lower[keep], arrays.upper[keep], arrays.links[keep], arrays.gbps[keep]
        if fewer:
            links = links.copy()
            row = {pair: position for position, pair in enumerate(zip(low.tolist(), high.tolist(), strict=True))}
            for (lower, upper), count in fewer.items():
                position = row.get((index.get(lower, -1), index.get(upper, -1)))
                if position is not None:
                    links[position] -= count
            positive = links > 0
            low, high, links, gbps = low[positive], high[positive], links[positive], gbps[positive]
        capacity = links * gbps
        attrs = [data for _, data in graph.nodes(data=True)]
        is_host = np.fromiter((a["kind"] == "host" for a in attrs), dtype=bool, count=size)
        tier = [a.get("tier") for a in attrs]
        group = np.fromiter((-1 if a.get("group") is None else a["group"] for a in attrs), dtype=np.int64,
                            count=size)
        pod = np.fromiter((-1 if a.get("pod") is None else a["pod"] for a in attrs), dtype=np.int64, count=size)
        gpus = np.fromiter((a.get("gpus", 0) if a["kind"] == "host" else 0 for a in attrs), dtype=np.int64,
                           count=size)
        host_edge = is_host[low]
        # Both directions of every cable; the solvers add parallel arcs up.
        self.tails = np.concatenate([low, high])
        self.heads = np.concatenate([high, low])
        self.capacity = np.concatenate([capacity, capacity])
        self.injection = np.bincount(low[host_edge], weights=capacity[host_edge], minlength=size).astype(np.int64)
        up = np.bincount(low[~host_edge], weights=capacity[~host_edge], minlength=size).astype(np.int64)
        # A host's leaf group and pod are its first fabric leaf's (every rail leaf of a group agrees).
        host_group = np.full(size, -1, dtype=np.int64)
        host_pod = np.full(size, -1, dtype=np.int64)
        first = np.unique(low[host_edge], return_index=True)[1]
        hosts_low = low[host_edge][first]
        host_group[hosts_low] = group[high[host_edge][first]]
        host_pod[hosts_low] = pod[high[host_edge][first]]
        self.host_ids = hosts_low
        self.host_group = host_group
        group_count = int(host_group.max()) + 1 if len(hosts_low) else 0
        self.group_gpus = np.bincount(host_group[hosts_low], weights=gpus[hosts_low], minlength=group_count)
        self.group_injection = np.bincount(host_group[hosts_low], weights=self.injection[hosts_low],
                                           minlength=group_count)
        self.group_pod = np.full(group_count, -1, dtype=np.int64)
        self.group_pod[host_group[hosts_low]] = host_pod[hosts_low]
        leaves = np.fromiter((t == "leaf" for t in tier), dtype=bool, count=size) & (group >= 0) & (group < group_count)
        self.group_uplinks = np.bincount(group[leaves], weights=up[leaves], minlength=group_count)
        spines = np.fromiter((t == "spine" for t in tier), dtype=bool, count=size) & (pod >= 0)
        pods = int(max(pod.max(initial=-1), 0)) + 1
        self.pod_uplinks = np.bincount(pod[spines], weights=up[spines], minlength=pods)

    def groups(self) -> list[_Group]:
        return [
            _Group(int(group), int(self.group_pod[group]), int(self.group_gpus[group]),
                   int(self.group_injection[group]), int(self.group_uplinks[group]))
            for group in range(len(self.group_gpus)) if self.group_gpus[group] > 0
        ]

    def flow(self, order: list[_Group], pods: bool) -> Cut:
        """Max-flow across the balanced prefix split of `order`."""
        import numpy as np

        total = sum(group.gpus for group in order)
        running, best_k, best_gap = 0, 1, total
        for k, group in enumerate(order[:-1], start=1):
            running += group.gpus
            gap = abs(2 * running - total)
            if gap < best_gap:
                best_k, best_gap = k, gap
        side_a = np.zeros(len(self.group_gpus), dtype=bool)
        side_a[[group.index for group in order[:best_k]]] = True
        in_cut = np.zeros(len(self.group_gpus), dtype=bool)
        in_cut[[group.index for group in order]] = True
        source, sink = self.size, self.size + 1
        hosts = self.host_ids[in_cut[self.host_group[self.host_ids]]]  # other pods' hosts only relay
        on_a = side_a[self.host_group[hosts]]
        injection = self.injection[hosts]
        tails = np.concatenate([self.tails, np.full(int(on_a.sum()), source), hosts[~on_a]])
        heads = np.concatenate([self.heads, hosts[on_a], np.full(int((~on_a).sum()), sink)])
        capacity = np.concatenate([self.capacity, injection[on_a], injection[~on_a]])
        value = max_flow(tails, heads, capacity, self.size + 2, source, sink)
        groups_a = tuple(group.index for group in sorted(order[:best_k], key=lambda g: g.index))
        groups_b = tuple(group.index for group in sorted(order[best_k:], key=lambda g: g.index))
        gpus_a = sum(int(self.group_gpus[group]) for group in groups_a)
        pods_a = {int(self.group_pod[group]) for group in groups_a}
        on_pods = pods and not pods_a & {int(self.group_pod[group]) for group in groups_b}
        return Cut(groups_a, groups_b, gpus_a, total - gpus_a, value,
                   int(min(injection[on_a].sum(), injection[~on_a].sum())), on_pods)


def max_flow(tails: Array, heads: Array, capacity: Array, size: int, source: int, sink: int) -> int:
    """Max-flow value over arcs (parallel arcs add up): networkx when small, scipy when large."""
    if len(tails) < SCIPY_FROM_ARCS:
        return networkx_max_flow(tails, heads, capacity, size, source, sink)
    return scipy_max_flow(tails, heads, capacity, size, source, sink)


def scipy_max_flow(tails: Array, heads: Array, capacity: Array, size: int, source: int, sink: int) -> int:
    """scipy's sparse Dinic (imported here: 0.3 s that small designs skip)."""
    import numpy as np
    from scipy.sparse import csr_array
    from scipy.sparse.csgraph import maximum_flow

    matrix = csr_array(
        (np.asarray(capacity, dtype=np.int32), (np.asarray(tails, dtype=np.int32), np.asarray(heads, dtype=np.int32))),
        shape=(size, size),
    )
    matrix.sum_duplicates()
    return int(maximum_flow(matrix, source, sink).flow_value)


def networkx_max_flow(tails: Array, heads: Array, capacity: Array, size: int, source: int, sink: int) -> int:
    """networkx's preflow-push on the same arcs (also the cross-check for scipy in tests)."""
    summed: dict[tuple[int, int], int] = defaultdict(int)
    for tail, head, gbps in zip(tails.tolist(), heads.tolist(), capacity.tolist(), strict=True):
        summed[(tail, head)] += gbps
    network = nx.DiGraph()
    network.add_nodes_from(range(size))
    network.add_edges_from((tail, head, {"capacity": gbps}) for (tail, head), gbps in summed.items())
    return int(nx.maximum_flow_value(network, source, sink))


def _ranges(groups: tuple[int, ...]) -> str:
    """(0, 1, 2, 5) -> '1-3, 6' (1-based, like the rest of the report)."""
    parts: list[str] = []
    start = previous = None
    for group in groups:
        if start is None:
            start = previous = group
        elif previous is not None and group == previous + 1:
            previous = group
        else:
            parts.append(f"{start + 1}" if start == previous else f"{start + 1}-{(previous or 0) + 1}")
            start = previous = group
    if start is not None:
        parts.append(f"{start + 1}" if start == previous else f"{start + 1}-{(previous or 0) + 1}")
    return ", ".join(parts) if len(parts) <= 6 else f"{', '.join(parts[:6])} and {len(parts) - 6} more ranges"
