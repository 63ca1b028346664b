"""Isolation of the GPU fabric from storage and management traffic."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np

from cluster.findings import Finding, Severity
from cluster.load import NETWORK_CODES
from cluster.qos import RenderedQos, classes
from cluster.rules.base import Derived, ReadsDerived
from cluster.spec import ClusterSpec
from cluster.topology import FABRIC, Topology


class Isolation(ReadsDerived):
    """On premises the GPU fabric shares no switch with storage or management. Shared: ERROR,
    unless RoCE has its own PFC-protected priority and every guest network a different one, in
    the plan and in the host and switch configs as rendered (read back), then WARNING.
    Provider-defined cloud layouts are exempt."""

    id = "FAB-ISOLATION"
    title = "fabric isolation"

    def applies(self, spec: ClusterSpec) -> bool:
        return spec.fabric is not None

    def check_derived(self, spec: ClusterSpec, topology: Topology, derived: Derived) -> Iterator[Finding]:
        rendered = derived.rendered_qos()
        guests = _guests(topology)
        if not guests:
            return
        networks = sorted(guests)
        switches = sorted(set().union(*guests.values()))
        example = ", ".join(switches[:3]) + (f" and {len(switches) - 3} more" if len(switches) > 3 else "")
        protected, why = self._protected(spec, rendered, networks)
        severity = Severity.WARNING if protected else Severity.ERROR
        yield self.finding(
            "fabric.shared_with",
            f"the GPU fabric carries {' and '.join(networks)} traffic on {len(switches)} "
            f"switch{'es' if len(switches) != 1 else ''} ({example}); "
            f"{why}",
            "give storage and management their own switches and NICs (remove fabric.shared_with)"
            + ("" if protected else ", or give RoCE its own PFC-protected priority"),
            severity,
        )

    @staticmethod
    def _protected(spec: ClusterSpec, rendered: RenderedQos | None, networks: list[str]) -> tuple[bool, str]:
        qos = spec.qos
        if qos is None:
            return False, "an InfiniBand fabric has no RoCE priority to protect GPU traffic"
        if qos.mode != "lossless" or qos.roce.priority not in qos.pfc_priorities:
            return False, f"RoCE priority {qos.roce.priority} has no PFC, so guest traffic can cause RoCE drops"
        planned = classes(qos)
        for network in networks:
            if planned[network][1] == qos.roce.priority:
                return False, f"{network} traffic shares RoCE priority {qos.roce.priority}"
        assert rendered is not None  # a RoCE plan is always rendered and read back
        problem = Isolation._rendered_problem(spec, rendered, networks)
        if problem:
            return False, problem
        return True, f"RoCE keeps PFC-protected priority {qos.roce.priority}, so this is a warning"

    @staticmethod
    def _rendered_problem(spec: ClusterSpec, emitted: RenderedQos, networks: list[str]) -> str:
        """The protection as the rendered host and switch configs really apply it (read back)."""
        assert spec.qos is not None
        planned = classes(spec.qos)
        roce_dscp = spec.qos.roce.dscp
        sides = [("host script", emitted.host_mlnx)] + [(f"{os} switch config", side)
                                                        for os, side in sorted(emitted.switches.items())]
        for label, side in sides:
            roce_priority = side.dscp_to_priority.get(roce_dscp)
            if roce_priority not in side.pfc_priorities:
                return f"as rendered, the {label} puts RoCE (DSCP {roce_dscp}) on priority {roce_priority} without PFC"
            for network in networks:
                dscp = planned[network][0]
                if side.dscp_to_priority.get(dscp) == roce_priority:
                    return f"as rendered, the {label} puts {network} (DSCP {dscp}) on RoCE priority {roce_priority}"
        return ""


def _guests(topology: Topology) -> dict[str, set[str]]:
    """{storage | management: the fabric switches that carry it}, from the shared link arrays.

    Out-of-band cables are left out: on a fabric switch that is its own management port."""
    arrays = topology.link_arrays
    fabric = NETWORK_CODES[FABRIC]
    fabric_switch = (arrays.node_network == fabric) & ~arrays.is_host
    guests: dict[str, set[str]] = {}
    for network in ("storage", "management"):
        carried = arrays.network == NETWORK_CODES[network]
        ends = np.concatenate([arrays.lower[carried], arrays.upper[carried]])
        switches = np.unique(ends[fabric_switch[ends]]).tolist()
        if switches:
            guests[network] = {arrays.names[switch] for switch in switches}
    return guests

