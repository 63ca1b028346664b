"""How many equal-cost BGP paths each routed switch needs, from the topology, and what each OS allows.

A leaf reaches every other leaf over all its uplinks; a spine reaches a leaf over every parallel
link to it and the other pods over all its core uplinks; a core reaches a pod over every link to
that pod's spines (of its plane). A switch's width is the largest of these sets, so
`maximum-paths` set to it lets BGP use every cabled link, which is what FAB-OVERSUB assumes.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np

from cluster.topology import Topology

# Most equal-cost paths per dialect (docs/dialects.md, "ECMP width and route limits"):
# FRR: debian/rules --enable-multipath=256 (Debian 12's FRR 8.4.4 rejects `maximum-paths 257`; SONiC
#   raised its own build to 512 in Nov 2024, sonic-buildimage src/sonic-frr/patch/0054-*; 256 keeps older images);
# NVUE: `multipaths ebgp 1-128` (NVUE command reference, BGP); EOS: `maximum-paths 1-600` (Arista AVD v5.0 schema).
MAX_PATHS = {"sonic": 256, "nvue": 128, "eos": 600}
OS_NAMES = {"sonic": "SONiC (FRR)", "nvue": "Cumulus Linux NVUE", "eos": "Arista EOS"}
# EOS's own per-neighbor default (AVD v5.0 renders `maximum-routes 12000` as that default):
EOS_DEFAULT_MAXIMUM_ROUTES = 12_000
ROUTE_HEADROOM = 1.5  # room to grow the design before the limit tears sessions down


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


def maximum_routes(routes: int) -> int:
    """EOS per-neighbor route limit: the design's route count with headroom, never below EOS's default."""
    return max(EOS_DEFAULT_MAXIMUM_ROUTES, -(-int(routes * ROUTE_HEADROOM) // 1000) * 1000)
