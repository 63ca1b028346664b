"""How many equal-cost BGP paths each routed switch needs, from the topology, and what each OS allows.

A leaf reaches every other leaf over all its uplinks; a spine reaches a leaf over every parallel
link to it and the other pods over all its core uplinks; a core reaches a pod over every link to
that pod's spines (of its plane). A switch's width is the largest of these sets, so
`maximum-paths` set to it lets BGP use every cabled link, which is what FAB-OVERSUB assumes. What
each OS allows is its dialect's `max_paths` (cluster/dialects/<os>/, sources there).
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np

from cluster.topology import Topology


def ecmp_widths(topology: Topology, names: Iterable[str] | None = None) -> dict[str, tuple[int, int]]:
    """{switch: (uplinks, width)} for every switch (of `names`, or all): uplinks to the tier above
    and the widest equal-cost set it must spread over (at least 1)."""
    a = topology.link_arrays
    nodes = topology.nodes
    # a lower end's group: itself, except spines, which stand for their pod (and plane) seen from a core
    group_of: dict[tuple[object, ...], int] = {}
    groups = np.empty(len(a.names), dtype=np.int64)
    for position, name in enumerate(a.names):
        data = nodes[name]
        key: tuple[object, ...] = ((data.get("network"), data.get("plane"), data.get("pod"))
                                   if data.get("tier") == "spine" and data.get("kind") == "switch" else (name,))
        groups[position] = group_of.setdefault(key, len(group_of))
    between_switches = ~a.is_host[a.lower] & ~a.is_host[a.upper] & (a.network == a.node_network[a.lower])
    lower, upper, links = a.lower[between_switches], a.upper[between_switches], a.links[between_switches]
    size = len(a.names)
    uplinks = np.bincount(lower, links, size)
    width = uplinks.copy()
    if len(upper):
        pair = upper * len(group_of) + groups[lower]
        unique, inverse = np.unique(pair, return_inverse=True)
        per_group = np.bincount(inverse, links)
        np.maximum.at(width, unique // len(group_of), per_group)
    wanted = names if names is not None else (name for name, _ in topology.switches())
    return {name: (int(uplinks[a.index[name]]), max(1, int(width[a.index[name]]))) for name in wanted}
