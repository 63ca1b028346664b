"""A training step's communication on a design: what each parallel dimension sends, what
overlaps with compute, what is exposed, and the resulting step time.

Rank layout (Megatron-LM order): tensor-parallel ranks are adjacent, then data-parallel, then
pipeline stages: rank = tp_rank + tp x (dp_rank + dp x pp_rank). Expert-parallel groups are
ep consecutive data-parallel ranks. Ranks fill the placed nodes in order, g per node.

Volumes per GPU (bf16 activations, `grad_bytes` per gradient element; b micro-batch, s sequence,
h hidden, L layers, m = global_batch / (dp x b) micro-batches per step):
- DP: gradients of params / (tp x pp) elements: one all-reduce, or a reduce-scatter plus an
  all-gather of the parameters (distributed optimizer / ZeRO) - the same bytes on the wire.
- TP (Megatron without sequence-parallel overlap): 2 all-reduces of b x s x h x 2 bytes per
  layer in the forward pass and 2 in the backward, per micro-batch, L / pp layers per stage.
- PP: one activation (forward) and one gradient (backward) of b x s x h x 2 / tp bytes per GPU
  per micro-batch across each stage boundary (scatter-gather over the TP ranks).
- EP (every layer MoE): dispatch and combine all-to-all, forward and backward: 4 per layer per
  micro-batch of b x s x h x 2 x top_k / tp bytes per GPU.

Overlap (stated assumptions, the usual Megatron defaults): DP gradient reduction overlaps only
the backward pass of the last micro-batch (2/3 of its compute: backward is about twice the
forward), since earlier micro-batches accumulate; TP and EP collectives sit on the critical
path (exposed); PP sends (2 per micro-batch) are counted as exposed. step time = compute + exposed communication;
communication share = exposed / step time.
"""

from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import asdict, dataclass, field
from typing import Any, Literal

from cluster.estimate.constants import Calibration, load_calibration
from cluster.estimate.model import (
    Hardware,
    estimate,
    hardware,
    nvlink_point_to_point_s,
    point_to_point_s,
)
from cluster.estimate.placement import Kind, Placement, fabric_share, place
from cluster.spec import ClusterSpec, PoolSpec
from cluster.topology import Topology

Flow = tuple[int, int, float]
#: What a training step can be: from a model of a million parameters and a millisecond of compute
#: up to sizes no cluster trains.
MIN_PARAMS, MAX_PARAMS = 1e6, 1e15
MIN_STEP_COMPUTE_S, MAX_STEP_COMPUTE_S = 1e-3, 1e7
GLOBAL_BATCH = 1024  # sequences per step when none is given: Llama-2-70B's 4M tokens of 4096


def nearest_multiples(value: int, unit: int) -> tuple[int, ...]:
    """The multiples of `unit` (at least one `unit`) on either side of `value`, lower first."""
    lower, upper = value // unit * unit, -(-value // unit) * unit
    return tuple(dict.fromkeys(multiple for multiple in (lower, upper) if multiple >= unit)) or (unit,)


def default_global_batch(dp: int, micro_batch: int) -> int:
    """The global batch when none is given: the multiple of dp x micro-batch nearest GLOBAL_BATCH
    (the larger of two equally near), so every data-parallel rank runs whole micro-batches."""
    return min(nearest_multiples(GLOBAL_BATCH, dp * micro_batch), key=lambda value: (abs(value - GLOBAL_BATCH), -value))


@dataclass(frozen=True)
class Workload:
    """The training job: model size, parallelism and compute time per step."""

    params: float
    dp: int
    tp: int = 1
    pp: int = 1
    ep: int = 1
    experts: int = 0
    top_k: int = 2
    step_compute_s: float = 1.0
    layers: int = 80
    hidden: int = 8192
    seq_len: int = 4096
    micro_batch: int = 1
    global_batch: int = GLOBAL_BATCH
    grad_bytes: int = 2
    dp_comm: Literal["all_reduce", "zero"] = "all_reduce"

    @property
    def gpus(self) -> int:
        return self.dp * self.tp * self.pp

    @property
    def micro_batches(self) -> int:
        return self.global_batch // (self.dp * self.micro_batch)

    def problems(self) -> list[str]:
        """What makes the workload impossible, as messages naming the option to change."""
        found = []
        for name in ("dp", "tp", "pp", "ep", "layers", "hidden", "seq_len", "micro_batch", "global_batch",
                     "grad_bytes", "top_k"):
            if getattr(self, name) < 1:
                found.append(f"--{name.replace('_', '-')} must be at least 1")
        # `not lo <= x < hi` also catches nan; inf is no model size and no compute time either, and
        # neither is a denormal (5e-324): a step of no compute is all communication, a number that
        # means nothing.
        if not MIN_PARAMS <= self.params < MAX_PARAMS:
            found.append(f"--params must be a positive number of parameters from {MIN_PARAMS:g} to below "
                         f"{MAX_PARAMS:g} (e.g. 70e9), got {self.params:g}")
        if not MIN_STEP_COMPUTE_S <= self.step_compute_s < MAX_STEP_COMPUTE_S:
            found.append(f"--step-compute-s must be a positive number of seconds from {MIN_STEP_COMPUTE_S:g} to below "
                         f"{MAX_STEP_COMPUTE_S:g} (compute per step), got {self.step_compute_s:g}")
        if self.experts < 0:
            found.append("--experts must be 0 (a dense model) or more")
        elif self.experts and self.top_k > self.experts:
            found.append(f"--top-k {self.top_k} is more than --experts {self.experts}: a token cannot go to more "
                         "experts than a layer has")
        for name in ("dp", "tp", "pp", "ep", "layers", "hidden", "seq_len", "micro_batch", "global_batch",
                     "grad_bytes", "top_k", "experts"):
            if getattr(self, name) > 10**9:
                found.append(f"--{name.replace('_', '-')} must be at most 1,000,000,000")
        if found:
            return found
        unit = self.dp * self.micro_batch
        if self.global_batch % unit:
            nearest = " or ".join(f"{value:,}" for value in nearest_multiples(self.global_batch, unit))
            found.append(f"--global-batch {self.global_batch:,} is not a multiple of dp x micro-batch = {unit:,}: "
                         f"use {nearest}, or leave --global-batch out (the multiple nearest {GLOBAL_BATCH:,})")
        if self.ep > 1 and (self.dp % self.ep or not self.experts or self.experts % self.ep):
            found.append(f"--ep {self.ep} needs --experts X with X a multiple of ep, and ep dividing dp ({self.dp})")
        return found


@dataclass(frozen=True)
class CommItem:
    """One kind of communication in the step."""

    name: str
    collective: str
    group_gpus: int
    group_nodes: int
    size_bytes: int
    count: int
    time_s: float
    exposed_s: float
    algorithm: str
    busbw_GBps: float
    bottleneck: str


@dataclass(frozen=True)
class StepEstimate:
    """A step on one design."""

    stack: str
    pool: str
    nodes: int
    gpus: int
    placement: str
    compute_s: float
    items: tuple[CommItem, ...] = field(default=())

    @property
    def communication_s(self) -> float:
        return sum(item.time_s for item in self.items)

    @property
    def exposed_s(self) -> float:
        return sum(item.exposed_s for item in self.items)

    @property
    def step_s(self) -> float:
        return self.compute_s + self.exposed_s

    @property
    def communication_share(self) -> float:
        return self.exposed_s / self.step_s

    def to_dict(self) -> dict[str, Any]:
        return {
            "stack": self.stack, "pool": self.pool, "nodes": self.nodes, "gpus": self.gpus,
            "placement": self.placement, "compute_s": self.compute_s,
            "communication_s": _round(self.communication_s), "exposed_s": _round(self.exposed_s),
            "overlapped_s": _round(self.communication_s - self.exposed_s), "step_s": _round(self.step_s),
            "communication_share": _round(self.communication_share),
            "items": [{key: _round(value) if isinstance(value, float) else value for key, value in asdict(item).items()}
                      for item in self.items],
        }


def _round(value: float) -> float:
    return float(f"{value:.6g}")


@dataclass(frozen=True)
class _Group:
    """One communication group type: its GPUs per node, nodes spanned and node-level flows."""

    gpus: int
    nodes: int
    per_node: int
    flows: tuple[Flow, ...]


def _groups(workload: Workload, gpus_per_node: int, members_of: list[list[int]], all_to_all: bool) -> _Group:
    """Node-level traffic of all groups of one type running at once (rings in rank order, or
    all-to-all between every pair of nodes of a group), weighted by the share of a node's GPUs."""
    flows: dict[tuple[int, int], float] = defaultdict(float)
    first = members_of[0]
    nodes_first = sorted({rank // gpus_per_node for rank in first})
    per_node = len(first) // len(nodes_first)
    for members in members_of:
        nodes = list(dict.fromkeys(rank // gpus_per_node for rank in members))
        if len(nodes) < 2:
            continue
        weight = per_node / gpus_per_node
        if all_to_all:
            for source in nodes:
                for target in nodes:
                    if source != target:
                        flows[(source, target)] += weight / (len(nodes) - 1)
        else:
            for index, source in enumerate(nodes):
                flows[(source, nodes[(index + 1) % len(nodes)])] += weight
    return _Group(len(first), len(nodes_first), per_node, tuple((s, t, w) for (s, t), w in sorted(flows.items())))


def _members(workload: Workload, kind: str) -> list[list[int]]:
    """Rank lists of every group of one kind (tp, dp, ep), Megatron order."""
    tp, dp, pp = workload.tp, workload.dp, workload.pp
    groups: list[list[int]] = []
    for stage in range(pp):
        base = stage * tp * dp
        if kind == "tp":
            groups += [[base + tp * d + t for t in range(tp)] for d in range(dp)]
        elif kind == "dp":
            groups += [[base + tp * d + t for d in range(dp)] for t in range(tp)]
        else:
            ep = workload.ep
            groups += [[base + tp * (block + e) + t for e in range(ep)] for t in range(tp) for block in range(0, dp, ep)]
    return groups


def step_estimate(stack: str, spec: ClusterSpec, topology: Topology, workload: Workload, pool: PoolSpec,
                  placement: Kind = "packed", calibration: Calibration | None = None) -> StepEstimate:
    """Communication per step of `workload` on `pool` of the design (see the module doc)."""
    calibration = calibration or load_calibration()
    hw = hardware(spec, topology, pool, calibration)
    g = hw.gpus_per_node
    nodes = math.ceil(workload.gpus / g)
    where = place(topology, pool.name, nodes, placement)
    m = workload.micro_batches
    activation = workload.micro_batch * workload.seq_len * workload.hidden * 2
    layers_per_stage = math.ceil(workload.layers / workload.pp)
    items: list[CommItem] = []

    def collective(name: str, kind: str, coll: str, size: int, count: int, exposed_fraction: float | None,
                   window: float = 0.0) -> None:
        group = _groups(workload, g, _members(workload, kind), coll == "all_to_all")
        share = fabric_share(topology, where, group.flows)
        result = estimate(hw, coll, group.nodes, size, share, gpus_per_node=group.per_node,
                          placement=placement, calibration=calibration, concurrent=True)
        total = result.time_s * count
        exposed = total * exposed_fraction if exposed_fraction is not None else max(0.0, total - window)
        items.append(CommItem(name, coll, group.gpus, group.nodes, size, count, total, exposed, result.algorithm,
                              result.busbw_GBps, result.bottleneck))

    if workload.dp > 1:
        grads = int(workload.params / (workload.tp * workload.pp) * workload.grad_bytes)
        window = (2 / 3) * workload.step_compute_s / max(m + workload.pp - 1, 1)
        if workload.dp_comm == "zero":
            collective("DP gradient reduce-scatter", "dp", "reduce_scatter", grads, 1, None, window)
            params = int(workload.params / (workload.tp * workload.pp) * 2)
            collective("DP parameter all-gather", "dp", "all_gather", params, 1, 1.0)
        else:
            collective("DP gradient all-reduce", "dp", "all_reduce", grads, 1, None, window)
    if workload.tp > 1:
        collective("TP activation all-reduce", "tp", "all_reduce", activation, 4 * layers_per_stage * m, 1.0)
    if workload.ep > 1:
        tokens = int(activation * workload.top_k / workload.tp)
        collective("EP token all-to-all", "ep", "all_to_all", tokens, 4 * layers_per_stage * m, 1.0)
    if workload.pp > 1:
        items.append(_pipeline(workload, hw, topology, where, activation // workload.tp, calibration))
    return StepEstimate(stack, pool.name, nodes, workload.gpus, placement, workload.step_compute_s, tuple(items))


def _pipeline(workload: Workload, hw: Hardware, topology: Topology, where: Placement, size: int,
              calibration: Calibration) -> CommItem:
    """Stage-to-stage sends: every GPU of stage s sends to the same position in stage s + 1,
    all GPUs of a node at once. Stages tp x dp ranks apart share a node when that is fewer
    than g ranks (NVLink); otherwise node i sends to node i + stride / g over the fabric."""
    g = hw.gpus_per_node
    stride = workload.tp * workload.dp
    sends = 2 * workload.micro_batches
    if stride < g:
        seconds, bottleneck, nodes = nvlink_point_to_point_s(hw, size, calibration), "NVLink", 1
    else:
        node_stride = max(stride // g, 1)
        flows = [(node, node + node_stride, 1.0) for node in range(len(where.hosts) - node_stride)]
        share = fabric_share(topology, where, flows)
        seconds, bottleneck = point_to_point_s(hw, share, size, g, calibration)
        nodes = 2
    return CommItem("PP activation send/recv", "send_recv", 2, nodes, size, sends, seconds * sends,
                    seconds * sends, "p2p", size / seconds / 1e9, bottleneck)
