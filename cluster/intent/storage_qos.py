"""The storage network's QoS plan: storage RDMA (GPUDirect Storage, NVMe-oF over RoCE) is RoCE
too, and needs its own class on every storage switch and host storage port.

A storage network with switches of its own (beside a RoCE or an InfiniBand GPU fabric: storage is
Ethernet either way) gets a `QosDesign` whose RoCE class is `qos.storage`
(ECN-marked and sent ECN-capable, so DCQCN slows a sender before the queue overflows), CNPs as on
the fabric (`qos.cnp`, strict priority), everything else on `qos.management`'s class, and PFC on
the storage priority only when `storage.lossless` asks for it. The same derivations as the
fabric's (`cluster.intent.qos.design_intent`) give its host and switch sides, and the same dialect
templates render them. A storage network converged onto the fabric (`fabric.shared_with:
[storage]`) has no plan of its own: its ports are fabric leaf ports and carry the fabric's plan,
which holds the storage class and marks it (`storage_port_intent`).
"""

from __future__ import annotations

from dataclasses import replace

from cluster.intent.qos import (
    SWITCH_MTU,
    QosDesign,
    QosIntent,
    TrafficClass,
    design_intent,
    fabric_design,
    storage_shares_fabric,
)
from cluster.spec import ClusterSpec
from cluster.stackfile import Ecn

# Below two jumbo frames a marking threshold marks on the first packet queued behind another.
ECN_FLOOR_BYTES = 2 * SWITCH_MTU


def storage_ecn(spec: ClusterSpec) -> Ecn:
    """The storage class's ECN thresholds: `storage.ecn` as given, else `qos.ecn` (set for the
    fabric's leaf ports; on an InfiniBand design, for a port of the fabric leaf's speed) scaled by
    the storage leaf's port speed over the fabric leaf's. A marking
    threshold must hold at least C x RTT / 7 of queue to keep a port of speed C busy (DCTCP:
    Alizadeh et al., "Data Center TCP", SIGCOMM 2010, section 3.4, guidelines for choosing K), so at
    one data-center round-trip time it grows and shrinks with the port speed. Neither threshold goes below two jumbo frames."""
    assert spec.storage_qos is not None and spec.storage is not None and spec.fabric is not None
    if spec.storage.ecn is not None:
        return spec.storage.ecn
    storage_gbps, fabric_gbps = spec.storage.leaf.port_gbps, spec.fabric.leaf.port_gbps
    ecn = spec.storage_qos.ecn
    low = max(ecn.min_bytes * storage_gbps // fabric_gbps, ECN_FLOOR_BYTES)
    high = max(ecn.max_bytes * storage_gbps // fabric_gbps, low + ECN_FLOOR_BYTES)
    return Ecn(min_bytes=low, max_bytes=high)


def storage_design(spec: ClusterSpec) -> QosDesign | None:
    """The plan of a storage network with its own switches, beside a RoCE or an InfiniBand fabric;
    None where none applies: a cloud target, no storage network, or storage converged onto the fabric."""
    qos = spec.storage_qos
    if qos is None or spec.storage is None or spec.fabric is None or storage_shares_fabric(spec):
        return None
    return QosDesign(
        mode="lossless" if spec.storage.lossless else "lossy",
        roce=TrafficClass("storage", qos.storage.dscp, qos.storage.priority),
        cnp=TrafficClass("cnp", qos.cnp.dscp, qos.cnp.priority),
        others=(TrafficClass("management", qos.management.dscp, qos.management.priority),),
        pfc_priorities=(qos.storage.priority,) if spec.storage.lossless else (),
        ecn=storage_ecn(spec),
        mtu=qos.mtu,
    )


def storage_intent(spec: ClusterSpec) -> QosIntent | None:
    """Both sides of the storage network's own plan (None where `storage_design` is)."""
    design = storage_design(spec)
    return design_intent(design) if design is not None else None


def storage_port_intent(spec: ClusterSpec) -> QosIntent | None:
    """The plan a host's storage ports follow: the storage network's own, or, where storage shares
    the fabric leaves (the switch end of the cable is a fabric leaf port), the fabric's plan sent
    from the storage class: storage RDMA leaves with `qos.storage`'s ToS (its own lossy priority,
    never the GPU's lossless one, as FAB-ISOLATION requires), DCQCN on both RDMA classes as the
    fabric's switches mark both."""
    if spec.qos is None or not storage_shares_fabric(spec):
        return storage_intent(spec)
    fabric = fabric_design(spec.qos, storage_shared=True)
    storage, gpu = fabric.marked[0], fabric.roce
    return design_intent(replace(fabric, roce=storage, marked=(gpu,),
                                 others=tuple(gpu if other == storage else other for other in fabric.others)))
