"""Isolation of the GPU fabric from storage and management traffic."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np

from cluster.findings import Finding, Severity
from cluster.intent.qos import QosIntent, classes
from cluster.load import NETWORK_CODES
from cluster.rules.base import Derived, ReadsDerived
from cluster.spec import ClusterSpec
from cluster.topology import FABRIC, Topology


class Isolation(ReadsDerived):
    """On premises the GPU fabric shares no switch with storage or management. Shared: ERROR,
    unless RoCE has its own PFC-protected priority and every guest network a different one, in
    the plan and in the host and switch intents every config is rendered from, then WARNING.
    Provider-defined cloud layouts are exempt."""

    id = "FAB-ISOLATION"
    title = "fabric isolation"

    def applies(self, spec: ClusterSpec) -> bool:
        return spec.fabric is not None

    def check_derived(self, spec: ClusterSpec, topology: Topology, derived: Derived) -> Iterator[Finding]:
        intent = derived.qos_intent()
        guests = _guests(topology)
        if not guests:
            return
        networks = sorted(guests)
        switches = sorted(set().union(*guests.values()))
        example = ", ".join(switches[:3]) + (f" and {len(switches) - 3} more" if len(switches) > 3 else "")
        protected, why = self._protected(spec, intent, networks)
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
    def _protected(spec: ClusterSpec, intent: QosIntent | None, networks: list[str]) -> tuple[bool, str]:
        qos = spec.qos
        if qos is None:
            return False, "an InfiniBand fabric has no RoCE priority to protect GPU traffic"
        if qos.mode != "lossless" or qos.roce.priority not in qos.pfc_priorities:
            return False, f"RoCE priority {qos.roce.priority} has no PFC, so guest traffic can cause RoCE drops"
        planned = classes(qos)
        for network in networks:
            if planned[network][1] == qos.roce.priority:
                return False, f"{network} traffic shares RoCE priority {qos.roce.priority}"
        assert intent is not None  # a RoCE plan always has its intent
        problem = Isolation._intent_problem(spec, intent, networks)
        if problem:
            return False, problem
        return True, f"RoCE keeps PFC-protected priority {qos.roce.priority}, so this is a warning"

    @staticmethod
    def _intent_problem(spec: ClusterSpec, intent: QosIntent, networks: list[str]) -> str:
        """The protection as the host and switch intents (what every config writes) apply it."""
        assert spec.qos is not None
        planned = classes(spec.qos)
        roce_dscp = spec.qos.roce.dscp
        for label, plan in (("host", intent.host), ("switch", intent.switch)):
            mapping = dict(plan.dscp_map)
            roce_priority = mapping[roce_dscp]
            if roce_priority not in plan.lossless:
                return f"the {label} intent puts RoCE (DSCP {roce_dscp}) on priority {roce_priority} without PFC"
            for network in networks:
                dscp = planned[network][0]
                if mapping[dscp] == roce_priority:
                    return f"the {label} intent puts {network} (DSCP {dscp}) on RoCE priority {roce_priority}"
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

