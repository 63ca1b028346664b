"""The QoS plan as each side applies it: the host NIC and the fabric switches.

Both sides come from the one `qos` section by two separate derivations (the host per traffic class
from what it sends, the switch per egress queue). Renderers write these plans; QOS-PFC-MAP compares
the two plans, and each plan with what the renderers wrote (`RenderedQos`, read back by the
artifacts stage), so a host and a switch can never disagree silently.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from cluster.stackfile import Qos


@dataclass(frozen=True)
class QosSide:
    """What one side does: DSCP -> priority, PFC priorities, strict-priority and ECN queues."""

    dscp_to_priority: dict[int, int]
    pfc_priorities: frozenset[int]
    strict_priorities: frozenset[int]
    ecn_priorities: frozenset[int]
    mtu: int


@dataclass(frozen=True)
class RenderedQos:
    """The plans as rendered and read back: the host script (both of its paths) and each fabric
    dialect in use."""

    host_mlnx: QosSide
    host_dcb: QosSide
    switches: dict[str, QosSide]
    # per rendered file: DSCPs the plan does not name that it (over the platform's default map)
    # leaves on a PFC priority, where stray traffic could pause the fabric
    stray: dict[str, tuple[int, ...]] = field(default_factory=dict)


SWITCH_MTU = 9216  # jumbo on every switch port: above any host MTU the stack allows (<= 9216)
ECT0 = 0b10  # ECN-Capable Transport(0) in the two low bits of the ToS byte (RFC 3168, section 5)


def roce_tos(qos: Qos) -> int:
    """The one ToS byte of RoCE traffic: the RoCE DSCP in the top six bits, ECT(0) in the ECN bits.

    The plan runs ECN on the RoCE priority (ecn_priorities), so its packets are sent ECN-capable
    and the switches mark CE instead of dropping. The same value goes to every place that sets it:
    NCCL_IB_TC (NCCL writes it into each QP's GRH traffic class, which RoCEv2 carries as the IPv4
    ToS byte: `ah_attr.grh.traffic_class = ncclParamIbTc()` in NVIDIA/nccl
    src/transport/net_ib.cc), `cma_roce_tos -t` (the RDMA-CM default ToS of the device) and
    MLNX_OFED's `/sys/class/infiniband/<dev>/tc/1/traffic_class` (the ToS of all its QPs).
    """
    return qos.roce.dscp << 2 | ECT0


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


def host_plan(qos: Qos) -> QosSide:
    """The host NIC, derived per traffic class from what the host sends: each class leaves with the
    DSCP the host marks it with (RoCE: the top six bits of the one ToS byte NCCL and RDMA-CM write,
    `roce_tos`; CNP: the NIC's CNP DSCP; storage and management: the tc marks) and the NIC, trusting
    DSCP, puts it on the class's priority. PFC on the lossless priorities, ECN on RoCE's, CNP strict.

    `switch_plan` derives the same plan per egress queue, on its own, so QOS-PFC-MAP's comparison of
    the two catches a host that marks traffic the switch does not queue as planned."""
    sent = ((roce_tos(qos) >> 2, qos.roce.priority), (qos.cnp.dscp, qos.cnp.priority),
            (qos.storage.dscp, qos.storage.priority), (qos.management.dscp, qos.management.priority))
    return QosSide(
        dscp_to_priority=dict(sorted(sent)),
        pfc_priorities=frozenset(qos.pfc_priorities) if qos.mode == "lossless" else frozenset(),
        strict_priorities=frozenset({qos.cnp.priority}),
        # RoCE is sent ECN-capable only when its ToS byte carries ECT in the two low bits
        ecn_priorities=frozenset({qos.roce.priority}) if roce_tos(qos) & 0b11 else frozenset(),
        mtu=qos.mtu,
    )


def switch_plan(qos: Qos) -> QosSide:
    """A fabric switch, derived per egress queue (priority = queue, as every dialect here maps them):
    the DSCPs each queue takes in (DSCP_TO_TC / the qos map), PFC on the queues the plan makes
    lossless, WRED-ECN on the RoCE queue, strict priority on the CNP queue, and the switch's own
    jumbo port MTU (above any host MTU)."""
    queues: dict[int, list[int]] = {queue: [] for queue in range(8)}
    for traffic in (qos.roce, qos.cnp, qos.storage, qos.management):
        queues[traffic.priority].append(traffic.dscp)
    lossless = qos.mode == "lossless"
    return QosSide(
        dscp_to_priority=dict(sorted((dscp, queue) for queue, dscps in queues.items() for dscp in dscps)),
        pfc_priorities=frozenset(queue for queue in queues if lossless and queue in qos.pfc_priorities),
        strict_priorities=frozenset(queue for queue, dscps in queues.items() if qos.cnp.dscp in dscps),
        ecn_priorities=frozenset(queue for queue, dscps in queues.items() if qos.roce.dscp in dscps),
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


def plan_disagreements(host: QosSide, switch: QosSide) -> list[str]:
    """`disagreements` of the two derived plans, plus ECN: a switch marking CE on a priority whose
    traffic the host sends without ECT drops it instead (the read-back files state no ECN, so this
    part compares the plans only)."""
    problems = disagreements(host, switch)
    if host.ecn_priorities != switch.ecn_priorities:
        problems.append(f"ECN: host sends ECN-capable traffic on {sorted(host.ecn_priorities) or 'no priority'}, "
                        f"switch marks on {sorted(switch.ecn_priorities) or 'no priority'}")
    return problems
