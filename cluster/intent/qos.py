"""The QoS intent: the plan as each side applies it, the host NIC and the switches, with every
number a config writes (all 64 DSCPs, the default class, DWRR weights, ECN thresholds).

Two networks carry RoCE and get a plan: the GPU fabric (`qos_intent`, its RoCE class from
`qos.roce`) and a storage network with switches of its own (`storage_intent`, its RoCE class
being `qos.storage`: GPUDirect Storage and NVMe-oF over RDMA). A fabric that carries storage too
(`fabric.shared_with: [storage]`, `fabric_qos_intent`) marks ECN on both RoCE classes: storage RDMA
keeps its own lossy class, with DCQCN, beside the GPU's lossless one. Each plan is one `QosDesign`, and
both sides come from it by two separate derivations (the host per traffic class from what it
sends, the switch per egress queue) as `QosPlan`s. Every dialect renders these plans and nothing
else decides a QoS number; QOS-PFC-MAP and QOS-STORAGE compare the two sides, and the dialects'
read-back tests hold each rendered file to its plan.
"""

from __future__ import annotations

from dataclasses import dataclass

from cluster.spec import ClusterSpec
from cluster.stackfile import Ecn, Qos


@dataclass(frozen=True)
class QosSide:
    """What one side does: DSCP -> priority, PFC priorities, strict-priority and ECN queues."""

    dscp_to_priority: dict[int, int]
    pfc_priorities: frozenset[int]
    strict_priorities: frozenset[int]
    ecn_priorities: frozenset[int]
    mtu: int


SWITCH_MTU = 9216  # jumbo on every switch port: above any host MTU the stack allows (<= 9216)
ECT0 = 0b10  # ECN-Capable Transport(0) in the two low bits of the ToS byte (RFC 3168, section 5)


def roce_tos(qos: Qos) -> int:
    """The one ToS byte of the fabric's RoCE traffic (`tos` of `qos.roce`).

    The plan runs ECN on the RoCE priority (ecn_priorities), so its packets are sent ECN-capable
    and the switches mark CE instead of dropping. The same value goes to every place that sets it:
    NCCL_IB_TC (NCCL writes it into each QP's GRH traffic class, which RoCEv2 carries as the IPv4
    ToS byte: `ah_attr.grh.traffic_class = ncclParamIbTc()` in NVIDIA/nccl
    src/transport/net_ib.cc), `cma_roce_tos -t` (the RDMA-CM default ToS of the device) and
    MLNX_OFED's `/sys/class/infiniband/<dev>/tc/1/traffic_class` (the ToS of all its QPs).
    """
    return tos(qos.roce.dscp)


def tos(dscp: int) -> int:
    """A RoCE ToS byte: the DSCP in the top six bits, ECT(0) in the two ECN bits."""
    return dscp << 2 | ECT0


def default_host_priority(dscp: int) -> int:
    """ConnectX default when trusting DSCP: the top three bits (mlnx_qos prints DSCP>>3)."""
    return dscp >> 3


def classes(qos: Qos) -> dict[str, tuple[int, int]]:
    """Traffic classes by name: (dscp, priority)."""
    return {
        "roce": (qos.roce.dscp, qos.roce.priority),
        "cnp": (qos.cnp.dscp, qos.cnp.priority),
        "storage": (qos.storage.dscp, qos.storage.priority),
        "management": (qos.management.dscp, qos.management.priority),
    }


@dataclass(frozen=True)
class TrafficClass:
    name: str
    dscp: int
    priority: int


@dataclass(frozen=True)
class QosDesign:
    """What one network's plan is derived from: its RoCE class (sent ECN-capable, PFC-protected
    when lossless), the CNPs of its congestion control, the other classes it carries, and where
    ECN marks. The fabric's RoCE class is `roce`, the storage network's `storage`."""

    mode: str  # lossless | lossy
    roce: TrafficClass
    cnp: TrafficClass
    others: tuple[TrafficClass, ...]
    pfc_priorities: tuple[int, ...]
    ecn: Ecn
    mtu: int
    marked: tuple[TrafficClass, ...] = ()  # other RDMA classes on the network, sent ECN-capable and marked too

    @property
    def classes(self) -> tuple[TrafficClass, ...]:
        return (self.roce, self.cnp, *self.others)

    @property
    def rdma(self) -> tuple[TrafficClass, ...]:
        """The classes that carry RDMA: sent ECN-capable (DCQCN) and ECN-marked by the switches."""
        return (self.roce, *self.marked)


def fabric_design(qos: Qos, storage_shared: bool = False) -> QosDesign:
    """The GPU fabric's plan: every class of the `qos` section, PFC on `qos.pfc_priorities`; on a
    fabric that carries storage, storage RDMA is marked as RoCE is."""
    storage = TrafficClass("storage", qos.storage.dscp, qos.storage.priority)
    return QosDesign(
        mode=qos.mode,
        roce=TrafficClass("roce", qos.roce.dscp, qos.roce.priority),
        cnp=TrafficClass("cnp", qos.cnp.dscp, qos.cnp.priority),
        others=(storage, TrafficClass("management", qos.management.dscp, qos.management.priority)),
        pfc_priorities=tuple(qos.pfc_priorities),
        ecn=qos.ecn,
        mtu=qos.mtu,
        marked=(storage,) if storage_shared else (),
    )


def host_plan(design: QosDesign) -> QosSide:
    """The host NIC, derived per traffic class from what the host sends: each class leaves with the
    DSCP the host marks it with (RoCE: the top six bits of the one ToS byte NCCL and RDMA-CM write,
    `tos`; CNP: the NIC's CNP DSCP; the others: their DSCP) and the NIC, trusting DSCP, puts it on
    the class's priority. PFC on the lossless priorities, ECN on each RDMA class's, CNP strict.

    `switch_plan` derives the same plan per egress queue, on its own, so the QOS rules' comparison
    of the two catches a host that marks traffic the switch does not queue as planned."""
    roce_byte = tos(design.roce.dscp)
    sent = ((roce_byte >> 2, design.roce.priority), (design.cnp.dscp, design.cnp.priority),
            *((other.dscp, other.priority) for other in design.others))
    return QosSide(
        dscp_to_priority=dict(sorted(sent)),
        pfc_priorities=frozenset(design.pfc_priorities) if design.mode == "lossless" else frozenset(),
        strict_priorities=frozenset({design.cnp.priority}),
        # RDMA is sent ECN-capable only when its ToS byte carries ECT in the two low bits
        ecn_priorities=frozenset(rdma.priority for rdma in design.rdma if tos(rdma.dscp) & 0b11),
        mtu=design.mtu,
    )


def switch_plan(design: QosDesign) -> QosSide:
    """A switch, derived per egress queue (priority = queue, as every dialect here maps them): the
    DSCPs each queue takes in (DSCP_TO_TC / the qos map), PFC on the queues the plan makes
    lossless, WRED-ECN on the queues of the RDMA classes, strict priority on the CNP queue, and the switch's own
    jumbo port MTU (above any host MTU)."""
    queues: dict[int, list[int]] = {queue: [] for queue in range(8)}
    for traffic in design.classes:
        queues[traffic.priority].append(traffic.dscp)
    lossless = design.mode == "lossless"
    return QosSide(
        dscp_to_priority=dict(sorted((dscp, queue) for queue, dscps in queues.items() for dscp in dscps)),
        pfc_priorities=frozenset(queue for queue in queues if lossless and queue in design.pfc_priorities),
        strict_priorities=frozenset(queue for queue, dscps in queues.items() if design.cnp.dscp in dscps),
        ecn_priorities=frozenset(queue for queue, dscps in queues.items()
                                 if any(rdma.dscp in dscps for rdma in design.rdma)),
        mtu=SWITCH_MTU,
    )


def disagreements(host: QosSide, switch: QosSide) -> list[str]:
    """Human-readable differences between the host's and the switch's plan."""
    problems = []
    for dscp in sorted(set(host.dscp_to_priority) | set(switch.dscp_to_priority)):
        on_host, on_switch = host.dscp_to_priority.get(dscp), switch.dscp_to_priority.get(dscp)
        if on_host != on_switch:
            problems.append(f"DSCP {dscp}: host priority {on_host}, switch priority {on_switch}")
    if host.pfc_priorities != switch.pfc_priorities:
        problems.append(f"PFC: host {sorted(host.pfc_priorities)}, switch {sorted(switch.pfc_priorities)}")
    if host.mtu > switch.mtu:
        problems.append(f"MTU: host {host.mtu} above switch {switch.mtu}")
    return problems


ROCE_WEIGHT = 50  # DWRR share of the RoCE queue, as NVIDIA's RoCE profile (FACTS.md 4.1)

@dataclass(frozen=True)
class QosPlan:
    """One side of the QoS plan, as the numbers a config writes (priority = TC = queue)."""

    mode: str
    classes: tuple[TrafficClass, ...]
    dscp_to_priority: tuple[tuple[int, int], ...]
    lossless: tuple[int, ...]
    ecn: tuple[int, ...]
    strict: tuple[int, ...]
    dwrr: tuple[tuple[int, int], ...]  # (priority, weight percent), weights sum to 100
    ecn_min_bytes: int
    ecn_max_bytes: int
    mtu: int
    roce: TrafficClass
    cnp: TrafficClass

    @property
    def lossless_csv(self) -> str:
        return ",".join(str(priority) for priority in self.lossless)

    @property
    def queues(self) -> tuple[tuple[int, int | None, bool, bool], ...]:
        """(queue, DWRR weight or None, strict, ECN) for every queue the plan uses (queue = priority)."""
        weights = dict(self.dwrr)
        used = sorted(set(weights) | set(self.strict) | set(self.ecn))
        return tuple((queue, weights.get(queue), queue in self.strict, queue in self.ecn) for queue in used)

    @property
    def default_priority(self) -> int:
        """Where every DSCP the plan does not name goes: the management class when it is lossy,
        else the lowest priority that is neither lossless, RoCE nor CNP. Never a PFC priority, so
        stray traffic (DSCP 24-31 would land on priority 3 by every platform's default) cannot pause
        the fabric."""
        return _default_priority(self.classes, self.lossless, self.roce, self.cnp)

    @property
    def dscp_map(self) -> tuple[tuple[int, int], ...]:
        """All 64 DSCPs -> priority: the plan's, the rest to `default_priority`."""
        planned = dict(self.dscp_to_priority)
        return tuple((dscp, planned.get(dscp, self.default_priority)) for dscp in range(64))

    @property
    def dscps_by_priority(self) -> tuple[tuple[int, tuple[int, ...]], ...]:
        """(priority, its DSCPs) for every priority that gets one; each DSCP exactly once."""
        groups: dict[int, list[int]] = {}
        for dscp, priority in self.dscp_map:
            groups.setdefault(priority, []).append(dscp)
        return tuple((priority, tuple(dscps)) for priority, dscps in sorted(groups.items()))

    @property
    def priorities(self) -> tuple[int, ...]:
        """Every priority that carries traffic: the planned ones and the default class."""
        return tuple(sorted({item.priority for item in self.classes} | {self.default_priority}))

    @property
    def lossy_priorities_csv(self) -> str:
        return ",".join(str(priority) for priority in range(8) if priority not in self.lossless)


def _default_priority(planned: tuple[TrafficClass, ...], lossless: tuple[int, ...], roce: TrafficClass,
                      cnp: TrafficClass) -> int:
    by_name = {item.name: item.priority for item in planned}
    taken = set(lossless) | {roce.priority, cnp.priority}
    management = by_name.get("management")
    if management is not None and management not in taken:
        return management
    return min(priority for priority in range(8) if priority not in taken)


def qos_plan(design: QosDesign, side: QosSide) -> QosPlan:
    """The numbers of one side; DWRR: RoCE 50%, the other planned priorities and the default class
    share the rest."""
    planned = sorted(design.classes, key=lambda item: (item.priority, item.name))
    roce, cnp = design.roce, design.cnp
    default = _default_priority(tuple(planned), tuple(sorted(side.pfc_priorities)), roce, cnp)
    others = sorted({item.priority for item in planned} - set(side.strict_priorities) - {roce.priority} | {default})
    others = [priority for priority in others if priority != roce.priority]
    share, remainder = divmod(100 - ROCE_WEIGHT, max(len(others), 1))
    dwrr = {roce.priority: ROCE_WEIGHT}
    for priority in others:
        dwrr[priority] = share + (remainder if priority == others[0] else 0)
    return QosPlan(
        mode=design.mode,
        classes=tuple(planned),
        dscp_to_priority=tuple(sorted(side.dscp_to_priority.items())),
        lossless=tuple(sorted(side.pfc_priorities)),
        ecn=tuple(sorted(side.ecn_priorities)),
        strict=tuple(sorted(side.strict_priorities)),
        dwrr=tuple(sorted(dwrr.items())),
        ecn_min_bytes=design.ecn.min_bytes,
        ecn_max_bytes=design.ecn.max_bytes,
        mtu=side.mtu,
        roce=roce,
        cnp=cnp,
    )


@dataclass(frozen=True)
class QosIntent:
    """The whole QoS plan of one RoCE network: what every host NIC and every switch on it applies."""

    host: QosPlan
    switch: QosPlan


def design_intent(design: QosDesign) -> QosIntent:
    """Both sides of one network's plan, each derived on its own from its design."""
    return QosIntent(host=qos_plan(design, host_plan(design)), switch=qos_plan(design, switch_plan(design)))


def qos_intent(qos: Qos, storage_shared: bool = False) -> QosIntent:
    """Both sides of the GPU fabric's plan, from the `qos` section (`storage_shared`: the fabric
    carries the storage network too)."""
    return design_intent(fabric_design(qos, storage_shared))


def storage_shares_fabric(spec: ClusterSpec) -> bool:
    """The storage network's ports are fabric leaf ports (`fabric.shared_with: [storage]`)."""
    return spec.fabric is not None and "storage" in spec.fabric.shared_with


def fabric_qos_intent(spec: ClusterSpec) -> QosIntent | None:
    """Both sides of the GPU fabric's plan as the design has it (None: no RoCE plan)."""
    return qos_intent(spec.qos, storage_shares_fabric(spec)) if spec.qos is not None else None
