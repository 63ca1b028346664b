"""The practical floor: the same links as numpy arrays, every per-link check as one vector op.

`extract` turns the validated graph's edges into arrays (one Python pass: the input of the
floor, timed on its own); `scan` computes what the rules compute from those arrays with no
per-edge Python: per-switch down/up links and Gbps, the worst oversubscription per tier, port
budgets, speed mismatches, rail alignment, address demand, reachability of every GPU leaf, and
bisection by scipy's max-flow. Its answers are compared with the validation's in `check`, so
the floor cannot silently compute less than the real thing.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy.sparse import csr_array
from scipy.sparse.csgraph import breadth_first_order, maximum_flow

from cluster.load import edge_list
from cluster.topology import Topology

TIERS = {"leaf": 0, "spine": 1, "core": 2}
NETWORKS = {"fabric": 0, "storage": 1, "management": 2, "oob": 3}


@dataclass
class Arrays:
    """One row per edge (lower, upper, links, gbps, lower_gbps, upper_gbps, network, rail)."""

    lower: np.ndarray
    upper: np.ndarray
    links: np.ndarray
    gbps: np.ndarray
    lower_gbps: np.ndarray
    upper_gbps: np.ndarray
    network: np.ndarray
    rail: np.ndarray
    # one row per node
    is_host: np.ndarray
    tier: np.ndarray
    node_network: np.ndarray
    node_rail: np.ndarray
    node_group: np.ndarray
    node_pod: np.ndarray
    ports: np.ndarray
    uplink_ports: np.ndarray
    gpus: np.ndarray
    names: list[str]


def extract(topology: Topology) -> Arrays:
    """The graph's edges and node attributes as arrays (the floor's input)."""
    graph = topology.graph
    names = list(graph.nodes)
    index = {name: position for position, name in enumerate(names)}
    rows = [(index[d["lower"]], index[d["upper"]], d["links"], d["gbps"], d["lower_gbps"], d["upper_gbps"],
             NETWORKS[d["network"]], -1 if d["rail"] is None else d["rail"]) for _, _, _, d in edge_list(graph)]
    columns = np.array(rows, dtype=np.int64).T
    nodes = [data for _, data in graph.nodes(data=True)]

    def column(key: str, default: int = -1) -> np.ndarray:
        return np.array([default if data.get(key) is None else data[key] for data in nodes], dtype=np.int64)

    return Arrays(
        *columns,
        is_host=np.array([data["kind"] == "host" for data in nodes]),
        tier=np.array([TIERS.get(data.get("tier"), -1) for data in nodes], dtype=np.int64),
        node_network=np.array([NETWORKS.get(data.get("network"), -1) for data in nodes], dtype=np.int64),
        node_rail=column("rail"), node_group=column("group"), node_pod=column("pod"), ports=column("ports", 0),
        uplink_ports=column("uplink_ports", 0), gpus=column("gpus", 0), names=names,
    )


def scan(a: Arrays) -> dict[str, Any]:
    """Every per-link check as vector operations; returns the figures `check` compares."""
    size = len(a.names)
    bandwidth = a.links * a.gbps
    oob = NETWORKS["oob"]
    # A switch's own oob management port is not a data port (as in cluster.load).
    counts_up = (a.network != oob) | (a.node_network[a.lower] == oob)
    counts_down = (a.network != oob) | (a.node_network[a.upper] == oob)
    up_links = np.bincount(a.lower[counts_up], a.links[counts_up], size)
    up_gbps = np.bincount(a.lower[counts_up], bandwidth[counts_up], size)
    down_links = np.bincount(a.upper[counts_down], a.links[counts_down], size)
    down_gbps = np.bincount(a.upper[counts_down], bandwidth[counts_down], size)
    fabric_switch = (a.node_network == NETWORKS["fabric"]) & ~a.is_host & (a.tier >= 0)
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.where(up_links > 0, down_gbps / np.maximum(up_gbps, 1), 0.0)
    worst = {tier: float(ratio[fabric_switch & (a.tier == code) & (up_links > 0)].max(initial=0.0))
             for tier, code in TIERS.items()}
    used = down_links + np.maximum(0, up_links - a.uplink_ports)
    over_ports = int(((used > a.ports) & ~a.is_host & (a.tier >= 0)).sum())
    mismatched_links = int(a.links[a.lower_gbps != a.upper_gbps].sum())
    fabric = a.network == NETWORKS["fabric"]
    host_edge = fabric & a.is_host[a.lower]
    misrailed = int((host_edge & (a.rail >= 0) & (a.node_rail[a.upper] != a.rail)).sum())
    switch_edge = ~a.is_host[a.lower]
    demand = {"fabric_links": int(2 * a.links[switch_edge & (a.network != oob)].sum()),
              "hosts": int((np.where(fabric, 2, 1) * a.links)[~switch_edge & (a.network != oob)].sum())}
    # Reachability: one breadth-first search over the fabric's switches from a GPU leaf.
    between = fabric & ~a.is_host[a.lower] & ~a.is_host[a.upper]
    switches = csr_array((np.ones(int(between.sum()) * 2, dtype=np.int8),
                          (np.concatenate([a.lower[between], a.upper[between]]),
                           np.concatenate([a.upper[between], a.lower[between]]))), shape=(size, size))
    gpu_leaves = np.unique(a.upper[host_edge])
    reached = breadth_first_order(switches, int(gpu_leaves[0]), directed=False, return_predecessors=False)
    unreachable = len(np.setdiff1d(gpu_leaves, reached))
    return {"worst": worst, "over_ports": over_ports, "mismatched_links": mismatched_links,
            "misrailed": misrailed, "demand": demand, "unreachable_leaves": unreachable,
            "bisection": _bisection(a, fabric, host_edge, size)}


def _bisection(a: Arrays, fabric: np.ndarray, host_edge: np.ndarray, size: int) -> float:
    """Max-flow between the first and second half of the leaf groups, in group order."""
    hosts = a.lower[host_edge]
    host_group = np.full(size, -1, dtype=np.int64)
    host_group[hosts] = a.node_group[a.upper[host_edge]]
    groups = np.unique(host_group[hosts])
    if len(groups) < 2:
        return 1.0
    gpus_per_group = np.bincount(host_group[np.unique(hosts)], a.gpus[np.unique(hosts)])
    cumulative = np.cumsum(gpus_per_group)
    split = int(np.argmin(np.abs(2 * cumulative[:-1] - cumulative[-1]))) + 1
    injection = np.bincount(hosts, (a.links * a.gbps)[host_edge], size).astype(np.int64)
    unique_hosts = np.unique(hosts)
    side_a = host_group[unique_hosts] < split
    source, sink = size, size + 1
    capacity = (a.links * a.gbps)[fabric]
    tails = np.concatenate([a.lower[fabric], a.upper[fabric], np.full(int(side_a.sum()), source),
                            unique_hosts[~side_a]])
    heads = np.concatenate([a.upper[fabric], a.lower[fabric], unique_hosts[side_a],
                            np.full(int((~side_a).sum()), sink)])
    weights = np.concatenate([capacity, capacity, injection[unique_hosts[side_a]], injection[unique_hosts[~side_a]]])
    matrix = csr_array((weights.astype(np.int32), (tails.astype(np.int32), heads.astype(np.int32))),
                       shape=(size + 2, size + 2))
    matrix.sum_duplicates()
    flow = maximum_flow(matrix, source, sink).flow_value
    smaller = min(int(injection[unique_hosts[side_a]].sum()), int(injection[unique_hosts[~side_a]].sum()))
    return float(flow) / smaller
