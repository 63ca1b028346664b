"""The QoS plan as each side applies it: the host NIC and the fabric switches.

Both sides are derived from the one `qos` section. Renderers write these plans, and
QOS-PFC-MAP compares them, so a host and a switch can never disagree silently.
"""

from __future__ import annotations

from dataclasses import dataclass

from cluster.stackfile import Qos


@dataclass(frozen=True)
class QosSide:
    """What one side does: DSCP -> priority, PFC priorities, strict-priority and ECN queues."""

    dscp_to_priority: dict[int, int]
    pfc_priorities: frozenset[int]
    strict_priorities: frozenset[int]
    ecn_priorities: frozenset[int]
    mtu: int


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


def _side(qos: Qos) -> QosSide:
    mapping = {dscp: priority for dscp, priority in classes(qos).values()}
    lossless = qos.mode == "lossless"
    return QosSide(
        dscp_to_priority=dict(sorted(mapping.items())),
        pfc_priorities=frozenset(qos.pfc_priorities) if lossless else frozenset(),
        strict_priorities=frozenset({qos.cnp.priority}),
        ecn_priorities=frozenset({qos.roce.priority}),
        mtu=qos.mtu,
    )


def host_plan(qos: Qos) -> QosSide:
    """Host NIC: trust DSCP, map every planned DSCP explicitly, PFC on the lossless priorities."""
    return _side(qos)


def switch_plan(qos: Qos) -> QosSide:
    """Fabric switch: the same map as DSCP_TO_TC / qos map, PFC, WRED-ECN and strict CNP queue."""
    return _side(qos)


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
