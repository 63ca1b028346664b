"""Collective time and bus bandwidth on a design: the formulas, one function each.

Conventions (nccl-tests doc/PERFORMANCE.md): algbw = S / t; busbw = algbw x factor with
factor 2(n-1)/n for all-reduce, (n-1)/n for all-gather, reduce-scatter and all-to-all, 1 for
broadcast; n = ranks (GPUs). Bandwidths are GB/s (10^9 bytes/s), sizes bytes.

Time of one collective (NCCL src/graph/tuning.cc): for each protocol p (LL, LL128, Simple)
    t_p = latency_p + S x factor / (busbw_peak x protocol_bandwidth_p x size_efficiency(S))
and NCCL's tuner picks the fastest protocol, so t = min_p t_p. busbw_peak is the large-message
bus bandwidth of the chosen algorithm, from the graph and the calibration (formulas below).
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import Any

from cluster.catalog import load_catalog
from cluster.estimate.constants import PROTOCOLS, Calibration, Protocol, load_calibration
from cluster.estimate.placement import FabricShare
from cluster.spec import ClusterSpec, PoolSpec
from cluster.topology import FABRIC, Topology

COLLECTIVES = ("all_reduce", "all_gather", "reduce_scatter", "all_to_all", "broadcast")
ALGORITHMS = ("nvls", "ring", "tree", "nvls_tree", "hierarchical")


def bus_factor(collective: str, ranks: int) -> float:
    """nccl-tests busbw factor (doc/PERFORMANCE.md)."""
    if ranks <= 1:
        return 1.0
    if collective == "all_reduce":
        return 2 * (ranks - 1) / ranks
    if collective in ("all_gather", "reduce_scatter", "all_to_all"):
        return (ranks - 1) / ranks
    return 1.0


@dataclass(frozen=True)
class Hardware:
    """What the graph and the catalog say about one pool's nodes."""

    pool: str
    gpu: str
    gpus_per_node: int
    nvlink_gbytes: float  # per GPU per direction
    nvls: bool  # NVLink SHARP available (Hopper or newer NVIDIA)
    nics_per_node: int
    node_nic_gbytes: float  # sum of the node's fabric links at the speed they run, GB/s
    fabric_kind: str
    network_efficiency: float
    # NCCL_ALGO / NCCL_PROTO fixed by the provider's documented NCCL environment for the
    # instance type (catalog nccl.env), e.g. Ring / Simple on a3-highgpu-8g (GPUDirect-TCPX).
    forced_algorithm: str | None = None
    forced_protocol: Protocol | None = None


# NCCL_ALGO values (NCCL env docs: Tree, Ring, CollnetDirect, CollnetChain, NVLS, NVLSTree) the
# model has a formula for, to the model's names.
_NCCL_ALGO = {"ring": "ring", "tree": "tree", "nvls": "nvls", "nvlstree": "nvls_tree"}


def provider_nccl(spec: ClusterSpec, pool: PoolSpec) -> tuple[str | None, Protocol | None]:
    """The algorithm and protocol the instance type's documented NCCL environment forces, when it
    names exactly one (a list such as `Ring,Tree` leaves NCCL its choice). On premises: none."""
    if pool.instance_type is None:
        return None, None
    instance = load_catalog().instances.get(spec.target, {}).get(pool.instance_type)
    if instance is None:
        return None, None
    env = instance.nccl.env
    algo = env["NCCL_ALGO"].value.strip().lower() if "NCCL_ALGO" in env else ""
    proto = env["NCCL_PROTO"].value.strip() if "NCCL_PROTO" in env else ""
    protocol: Protocol | None = next((name for name in PROTOCOLS if name.lower() == proto.lower()), None)
    return _NCCL_ALGO.get(algo), protocol


def hardware(spec: ClusterSpec, topology: Topology, pool: PoolSpec, calibration: Calibration | None = None) -> Hardware:
    """NVLink: catalog scale_up_gbytes_per_s is both directions (H100: 900 GB/s), so one direction
    is half (450, COLLECTIVES.md "NVLink line rate 450 GB/s per direction"). NICs: the fabric
    edges of the pool's first host in the graph, links x Gbps at the slower end's speed / 8."""
    calibration = calibration or load_calibration()
    gpu = load_catalog().gpus[pool.gpu]
    host = topology.hosts_by_pool[pool.name][0]
    gbps = sum(data["links"] * data["gbps"] for _, _, data in topology.cables(host)
               if data["network"] == FABRIC)
    forced = provider_nccl(spec, pool)
    return Hardware(
        pool=pool.name,
        gpu=pool.gpu,
        gpus_per_node=pool.gpus_per_node,
        nvlink_gbytes=gpu.scale_up_gbytes_per_s / 2,
        nvls=pool.gpu in calibration.nvlink.nvls_gpus,
        nics_per_node=pool.fabric_nics.count,
        node_nic_gbytes=gbps / 8,
        fabric_kind=pool.fabric_kind,
        network_efficiency=calibration.network(pool.fabric_kind).value,
        forced_algorithm=forced[0],
        forced_protocol=forced[1],
    )


@dataclass(frozen=True)
class Estimate:
    """One predicted collective."""

    collective: str
    nodes: int
    gpus: int
    size_bytes: int
    algorithm: str
    protocol: str
    time_s: float
    algbw_GBps: float
    busbw_GBps: float
    bottleneck: str
    placement: str
    peak_busbw_GBps: float

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        for key in ("time_s", "algbw_GBps", "busbw_GBps", "peak_busbw_GBps"):
            data[key] = float(f"{data[key]:.6g}")
        return data


def choose_algorithm(collective: str, nodes: int, gpus_per_node: int, hw: Hardware, calibration: Calibration) -> str:
    """NCCL's choice on Hopper (COLLECTIVES.md): NVLS within one node of 5+ GPUs, NVLS-tree
    (or tree) at 2 nodes, ring from 3 nodes up. Only all-reduce has NVLS / tree here; the
    other collectives run as rings (all-to-all as point-to-point, reported as `p2p`). An
    algorithm the provider's NCCL environment forces for all-reduce wins (NCCL_ALGO applies to
    every all-reduce, in the node too)."""
    if collective == "all_to_all":
        return "p2p"
    if collective != "all_reduce":
        return "ring"
    if hw.forced_algorithm is not None:
        return hw.forced_algorithm
    nvls = hw.nvls and gpus_per_node >= calibration.nvlink.nvls_min_gpus
    if nodes == 1:
        return "nvls" if nvls else "ring"
    if nodes == 2:
        return "nvls_tree" if nvls else "tree"
    return "ring"


def nvlink_ring_busbw(hw: Hardware, calibration: Calibration) -> float:
    """Ring over NVLink: ring_efficiency x per-direction NVLink bandwidth (fit: 367.5 / 450
    on H100, NVIDIA/nccl issue 1455); independent of the GPU count, as measured on 2..8 GPUs."""
    return calibration.nvlink.ring_efficiency * hw.nvlink_gbytes


def nvls_busbw(gpus: int, hw: Hardware, calibration: Calibration) -> float:
    """NVLS all-reduce: each GPU pulls its 1/n slice reduced by the switch (multimem.ld_reduce,
    S/n in, S out) and multicasts it back (S/n out, S in): S(1 + 1/n) per direction, so
    algbw = B n/(n+1) and busbw = 2B(n-1)/(n+1), times nvls_efficiency. This reproduces the
    measured growth from 5 to 8 GPUs (420 / 440 / 460 / 480, nccl issue 1455)."""
    return calibration.nvlink.nvls_efficiency * 2 * hw.nvlink_gbytes * (gpus - 1) / (gpus + 1)


def network_node_gbytes(hw: Hardware, share: FabricShare, gpus_per_node: int, concurrent: bool = False) -> float:
    """What the node's NICs deliver to the ranks it holds: node NIC GB/s x fabric efficiency
    (one per fabric kind: EFA, InfiniBand, RoCE, GCP RDMA, TCPX, TCPXO; calibration) x the fabric share (oversubscription on the
    path, placement.py) x the share of the node's NICs the ranks use: gpus/g of them, but at
    least one NIC when the other GPUs are idle (NCCL binds each GPU to its nearest NIC). When
    every GPU of the node runs its own group at once (`concurrent`, a training step), each
    group gets exactly its gpus/g share of the node's NICs."""
    share_of_node = gpus_per_node / hw.gpus_per_node
    used = min(1.0, share_of_node if concurrent else max(share_of_node, 1 / max(hw.nics_per_node, 1)))
    return hw.node_nic_gbytes * hw.network_efficiency * share.factor * used


@dataclass(frozen=True)
class Peak:
    busbw: float
    bottleneck: str


def _network_label(share: FabricShare) -> str:
    return share.bottleneck if share.factor < 1 and share.bottleneck else "NIC"


def peak_busbw(collective: str, algorithm: str, nodes: int, gpus_per_node: int, hw: Hardware, share: FabricShare,
               calibration: Calibration, concurrent: bool = False) -> Peak:
    """Large-message busbw of one algorithm, and what limits it.

    - one node: NVLink ring or NVLS (above).
    - ring over several nodes (COLLECTIVES.md "Multi-node ring"): every channel crosses the
      network once per node, so busbw = min(NVLink ring, network_node_gbytes) - from 3 nodes up a
      ring's busbw tracks the node's total NIC bandwidth (nccl-tests 160).
    - tree / NVLS-tree / hierarchical all-reduce (COLLECTIVES.md "Hierarchical (2D)"): reduce-
      scatter inside the node, all-reduce of S/g between nodes over every NIC at once, all-gather
      inside the node, pipelined so the slower phase sets the pace:
      algbw = min(intra-node algbw, network_node_gbytes x N / (2(N-1))). At 2 nodes the network
      phase moves S/g per GPU, which is why busbw can exceed the NIC total there.
    - all-to-all: (n-g)/n of each GPU's data leaves the node through its own NIC (all-to-all
      cannot aggregate NICs per peer, nccl-tests 267): busbw = eff x NIC per GPU x (n-1)/(n-g).
    - broadcast: a pipelined ring, algbw = busbw = the slowest link's bandwidth.
    """
    ranks = nodes * gpus_per_node
    nvlink_ring = nvlink_ring_busbw(hw, calibration)
    intra = nvls_busbw(gpus_per_node, hw, calibration) if algorithm in ("nvls", "nvls_tree") else nvlink_ring
    if nodes == 1:
        if algorithm == "nvls":
            return Peak(intra, "NVLink (NVLS)")
        return Peak(nvlink_ring, "NVLink")
    network = network_node_gbytes(hw, share, gpus_per_node, concurrent)
    label = _network_label(share)
    if collective == "all_to_all":
        per_gpu = network / gpus_per_node
        bound = per_gpu * (ranks - 1) / (ranks - gpus_per_node)
        return Peak(bound, label) if bound < nvlink_ring else Peak(nvlink_ring, "NVLink")
    if algorithm in ("tree", "nvls_tree", "hierarchical") and collective == "all_reduce":
        intra_algbw = intra / bus_factor("all_reduce", gpus_per_node) if gpus_per_node > 1 else math.inf
        inter_algbw = network * nodes / (2 * (nodes - 1))
        factor = bus_factor("all_reduce", ranks)
        if inter_algbw < intra_algbw:
            return Peak(inter_algbw * factor, label)
        return Peak(intra_algbw * factor, "NVLink (NVLS)" if algorithm == "nvls_tree" else "NVLink")
    if network < nvlink_ring:
        return Peak(network, label)
    return Peak(nvlink_ring, "NVLink")


def latency_us(collective: str, algorithm: str, protocol: Protocol, nodes: int, gpus_per_node: int,
               calibration: Calibration) -> float:
    """NCCL tuning.cc latency: base + hops. Ring all-reduce takes 2(n-1) steps, of which
    2(N-1) cross the network (the rest NVLink); all-gather / reduce-scatter / broadcast half of
    that; tree: 2 log2(N) network hops; NVLS: the tree base plus two NVLink hops (NVLS is not in
    the quoted table: an assumption); all-to-all: one network step per peer node."""
    table = calibration.nccl_latency_us
    ranks = nodes * gpus_per_node
    nvlink_hop = table.hop["nvlink_ring"][protocol]
    if algorithm in ("nvls", "nvls_tree", "tree", "hierarchical"):
        network_hops = 2 * math.ceil(math.log2(nodes)) if nodes > 1 else 0
        return (table.base["tree"][protocol] + network_hops * table.hop["network_tree"][protocol]
                + 2 * nvlink_hop)
    steps = 2 * (ranks - 1) if collective == "all_reduce" else ranks - 1
    network_steps = (2 if collective == "all_reduce" else 1) * (nodes - 1)
    if collective == "all_to_all":
        steps, network_steps = gpus_per_node - 1, nodes - 1
    return (table.base["ring"][protocol] + network_steps * table.hop["network_ring"][protocol]
            + max(steps - network_steps, 0) * nvlink_hop)


def size_regime(collective: str, nodes: int) -> str:
    """Which fitted size-efficiency curve applies."""
    if nodes == 1:
        return "intra_node"
    return "all_to_all" if collective == "all_to_all" else "inter_node"


def estimate(hw: Hardware, collective: str, nodes: int, size_bytes: int, share: FabricShare | None = None,
             gpus_per_node: int | None = None, algorithm: str | None = None, placement: str = "packed",
             calibration: Calibration | None = None, efficiency: float | None = None,
             concurrent: bool = False) -> Estimate:
    """Predict one collective of `size_bytes` per rank buffer on `nodes` nodes of `hw`.
    `efficiency` overrides the fitted size efficiency (the calibration fit solves for it);
    `concurrent`: the node's other GPUs run the same collective in their own groups at once."""
    calibration = calibration or load_calibration()
    share = share or FabricShare()
    per_node = gpus_per_node or hw.gpus_per_node
    ranks = nodes * per_node
    chosen = algorithm or choose_algorithm(collective, nodes, per_node, hw, calibration)
    if chosen == "nvls" and nodes > 1:
        chosen = "nvls_tree"
    if chosen in ("nvls", "nvls_tree") and not (hw.nvls and per_node >= calibration.nvlink.nvls_min_gpus):
        raise ValueError(f"algorithm {chosen} needs NVLink SHARP: {calibration.nvlink.nvls_min_gpus}+ GPUs of "
                         f"{', '.join(calibration.nvlink.nvls_gpus)} per node, pool {hw.pool} has {per_node} {hw.gpu}")
    if chosen in ("nvls", "nvls_tree", "tree", "hierarchical") and collective != "all_reduce":
        raise ValueError(f"algorithm {chosen} is an all-reduce algorithm; {collective} runs as a ring")
    peak = peak_busbw(collective, chosen, nodes, per_node, hw, share, calibration, concurrent)
    factor = bus_factor(collective, ranks)
    if efficiency is None:
        efficiency = calibration.size_efficiency[size_regime(collective, nodes)].efficiency(size_bytes)
    best: tuple[float, Protocol] | None = None
    protocols: tuple[Protocol, ...] = ("Simple",) if collective == "all_to_all" else PROTOCOLS
    if hw.forced_protocol is not None and collective != "all_to_all":
        protocols = (hw.forced_protocol,)
    for protocol in protocols:
        bandwidth = peak.busbw * calibration.protocol_bandwidth[protocol] * efficiency * 1e9
        seconds = latency_us(collective, chosen, protocol, nodes, per_node, calibration) * 1e-6
        seconds += size_bytes * factor / bandwidth if ranks > 1 else 0.0
        if best is None or seconds < best[0]:
            best = (seconds, protocol)
    assert best is not None
    seconds, protocol = best
    algbw = size_bytes / seconds / 1e9
    return Estimate(
        collective=collective, nodes=nodes, gpus=ranks, size_bytes=size_bytes, algorithm=chosen,
        protocol=protocol, time_s=seconds, algbw_GBps=algbw, busbw_GBps=algbw * factor,
        bottleneck=peak.bottleneck, placement=placement, peak_busbw_GBps=peak.busbw,
    )


def point_to_point_s(hw: Hardware, share: FabricShare, bytes_per_gpu: int, senders_per_node: int,
                     calibration: Calibration | None = None) -> tuple[float, str]:
    """Time for `senders_per_node` GPUs of every node to each send `bytes_per_gpu` to a peer on
    another node at once (pipeline stages): NCCL base + one network hop of latency (Simple), then
    the node's bytes over what its NICs deliver (network_node_gbytes). Alpha-beta only: the table
    has no send/recv sizes to fit a size efficiency on (UNCALIBRATED). Returns (seconds, bottleneck)."""
    calibration = calibration or load_calibration()
    table = calibration.nccl_latency_us
    latency = (table.base["ring"]["Simple"] + table.hop["network_ring"]["Simple"]) * 1e-6
    network = network_node_gbytes(hw, share, senders_per_node, concurrent=True) * 1e9
    seconds = latency + senders_per_node * bytes_per_gpu / network
    return seconds, _network_label(share)


def nvlink_point_to_point_s(hw: Hardware, bytes_per_gpu: int, calibration: Calibration | None = None) -> float:
    """A send between two GPUs of one node: base + one NVLink hop, then ring NVLink bandwidth
    (alpha-beta only, like point_to_point_s)."""
    calibration = calibration or load_calibration()
    table = calibration.nccl_latency_us
    latency = (table.base["ring"]["Simple"] + table.hop["nvlink_ring"]["Simple"]) * 1e-6
    return latency + bytes_per_gpu / (nvlink_ring_busbw(hw, calibration) * 1e9)
