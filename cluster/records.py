"""The topology graph's records: what a host, a switch, a provider fabric and a cable carry.

networkx keeps a node's and an edge's attributes in a plain dict, and the topology keeps them
there: one copy of the facts, no per-node object beside it (a second copy of 22k nodes and 460k
edges at 131,072 GPUs would double the graph's memory). These read-only TypedDicts type those
dicts: mypy checks every key a reader names and rejects any write, so the graph is a typed record
store that nothing changes after build. `Topology.node`, `.switch`, `.host`, `.switches()` and
`.edges` hand them out typed.
"""

from __future__ import annotations

from typing import Literal

from typing_extensions import ReadOnly, TypedDict

Tier = Literal["leaf", "spine", "core"]
Ports = tuple[tuple[int, int], ...]  # (NIC, port) pairs of a host's end of a cable, in rail order
Slot = tuple[int, int]  # (first, stride) of an edge's links on one end's ports, 0-based


class HostNode(TypedDict):
    """A GPU server: its pool, GPUs, and place in its pool and in the cluster (both 0-based)."""

    kind: ReadOnly[Literal["host"]]
    pool: ReadOnly[str]
    gpus: ReadOnly[int]
    index: ReadOnly[int]
    cluster_index: ReadOnly[int]
    path: ReadOnly[str]  # the pool's config path


class SwitchNode(TypedDict):
    """A switch of one network: its model as deployed and its place in the design.

    `index` is its position in its tier, plane and network (the number in its name, less one);
    `group` (rail leaves: the leaf group) and `rail` (rail-optimized leaves) are None elsewhere;
    `pod` is None on the core tier; `plane` is 0 off a dual-plane fabric.
    """

    kind: ReadOnly[Literal["switch"]]
    network: ReadOnly[str]
    tier: ReadOnly[Tier]
    index: ReadOnly[int]
    plane: ReadOnly[int]
    group: ReadOnly[int | None]
    rail: ReadOnly[int | None]
    pod: ReadOnly[int | None]
    model: ReadOnly[str]
    ports: ReadOnly[int]
    port_gbps: ReadOnly[int]
    uplink_ports: ReadOnly[int]
    uplink_gbps: ReadOnly[int]
    os: ReadOnly[str]
    path: ReadOnly[str]  # the config path of the switch model (fabric.leaf, storage.spine, ...)


class ProviderNode(TypedDict):
    """A cloud pool's fabric: the provider's switches, one opaque node per pool."""

    kind: ReadOnly[Literal["provider"]]
    network: ReadOnly[str]
    tier: ReadOnly[Literal["provider"]]
    model: ReadOnly[str]  # the fabric kind (efa, rdma, infiniband)
    path: ReadOnly[str]


Node = HostNode | SwitchNode | ProviderNode


class CableData(TypedDict):
    """One edge: every cable between `lower` (the end nearer the hosts) and `upper` on `network`.

    `gbps` is per link, the slower end's port speed; `ports` are the host's (NIC, port) pairs on a
    host edge, empty between switches; `rail` is the rail of a host's fabric edge, else None.
    `lower_slot` / `upper_slot`, where set, place the edge's links on that end's ports by
    (first, stride): the lower end's uplink slots (fixed uplink ports, then the top main ports),
    the upper end's downlink ports from port 1, both 0-based (cluster.ports); None: in order.
    """

    network: ReadOnly[str]
    links: ReadOnly[int]
    gbps: ReadOnly[int]
    lower_gbps: ReadOnly[int]
    upper_gbps: ReadOnly[int]
    lower: ReadOnly[str]
    upper: ReadOnly[str]
    ports: ReadOnly[Ports]
    rail: ReadOnly[int | None]
    path: ReadOnly[str]
    lower_slot: ReadOnly[Slot | None]
    upper_slot: ReadOnly[Slot | None]
