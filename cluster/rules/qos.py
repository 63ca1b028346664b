"""Lossless QoS plan consistency (RoCE on premises only)."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterator

from cluster.findings import Finding, Severity
from cluster.intent.qos import QosIntent, QosPlan, classes, storage_shares_fabric
from cluster.rules.base import Derived, ReadsDerived, Rule
from cluster.spec import ClusterSpec
from cluster.topology import Topology

ROCE_MIN_MTU = 4200  # a 4096-byte RoCE payload plus headers; below it RoCE falls back to 2048


class PfcMap(ReadsDerived):
    """Lossless mode: the RoCE priority has PFC on; the CNP priority differs and has no PFC;
    DSCP values are unique; host and switch plans agree (derived separately, and in the intent
    every config is rendered from: all 64 DSCPs, PFC, ECN, MTU). Skipped for InfiniBand and cloud."""

    id = "QOS-PFC-MAP"
    title = "lossless QoS plan"

    def applies(self, spec: ClusterSpec) -> bool:
        return spec.qos is not None

    def check_derived(self, spec: ClusterSpec, topology: Topology, derived: Derived) -> Iterator[Finding]:
        intent = derived.qos_intent()
        qos = spec.qos
        assert qos is not None
        pfc = set(qos.pfc_priorities)
        if qos.mode == "lossless":
            if qos.roce.priority not in pfc:
                yield self.finding(
                    "qos.pfc_priorities",
                    f"RoCE traffic (DSCP {qos.roce.dscp}) is on priority {qos.roce.priority}, but PFC protects "
                    f"{sorted(pfc) or 'no priority'}: RoCE would be dropped under congestion",
                    f"add {qos.roce.priority} to qos.pfc_priorities, or move qos.roce.priority to a PFC priority",
                )
            if qos.cnp.priority == qos.roce.priority:
                yield self.finding(
                    "qos.cnp.priority",
                    f"CNP shares priority {qos.cnp.priority} with RoCE: congestion notices queue behind the data "
                    "they should slow down",
                    "give CNP its own strict priority (NVIDIA's default is 6)",
                )
            elif qos.cnp.priority in pfc:
                yield self.finding(
                    "qos.cnp.priority",
                    f"CNP priority {qos.cnp.priority} has PFC on; CNPs must never be paused",
                    f"remove {qos.cnp.priority} from qos.pfc_priorities",
                )
            if len(pfc) > 2:
                yield self.finding(
                    "qos.pfc_priorities",
                    f"{len(pfc)} lossless priorities; switch buffers hold headroom for at most two",
                    "keep PFC on the RoCE priority (and storage at most)",
                    Severity.WARNING,
                )
        elif pfc:
            yield self.finding(
                "qos.pfc_priorities",
                f"qos.mode is lossy, so PFC on {sorted(pfc)} is not applied",
                "set qos.mode: lossless, or empty qos.pfc_priorities",
                Severity.WARNING,
            )
        by_dscp: dict[int, list[str]] = defaultdict(list)
        for name, (dscp, _) in classes(qos).items():
            by_dscp[dscp].append(name)
        shared = {dscp: names for dscp, names in by_dscp.items() if len(names) > 1}
        for dscp, names in sorted(shared.items()):
            yield self.finding(
                f"qos.{names[1]}.dscp",
                f"DSCP {dscp} is used by {' and '.join(names)}; each class needs its own DSCP",
                "give every traffic class a distinct DSCP",
            )
        if qos.storage.priority == qos.roce.priority:
            yield self.finding(
                "qos.storage.priority",
                f"storage shares RoCE priority {qos.roce.priority}: a storage burst pauses GPU traffic",
                "give storage its own priority (default 1)",
                Severity.WARNING,
            )
        if intent is not None and not shared:  # a DSCP two classes claim is reported above
            yield from self._intent(intent)

    def _intent(self, intent: QosIntent) -> Iterator[Finding]:
        hint = "the QoS intent (cluster/intent/qos.py) no longer follows the qos section (a bug, not your stack)"
        for problem in side_disagreements(intent):
            yield self.finding("qos", problem, hint)


def side_disagreements(intent: QosIntent) -> Iterator[str]:
    """How the two sides of one network's plan differ, as every config writes them: each of the 64
    DSCPs on one priority on both, the same lossless priorities, ECN where RoCE is sent
    ECN-capable, no host MTU above the switches', and no DSCP the plan does not name on a lossless
    priority."""
    host, switch = intent.host, intent.switch
    for (dscp, on_host), (_, on_switch) in zip(host.dscp_map, switch.dscp_map, strict=True):
        if on_host != on_switch:
            yield f"host and switch intents disagree: DSCP {dscp} on host priority {on_host}, switch priority {on_switch}"
    if host.lossless != switch.lossless:
        yield f"host and switch intents disagree: PFC on host {list(host.lossless)}, switch {list(switch.lossless)}"
    if host.ecn != switch.ecn:
        yield f"host and switch intents disagree: ECN on host {list(host.ecn)}, switch {list(switch.ecn)}"
    if host.mtu > switch.mtu:
        yield f"host MTU {host.mtu} is above the switches' {switch.mtu}"
    for side, plan in (("host", host), ("switch", switch)):
        stray = _stray(plan)
        if stray:
            shown = ", ".join(str(dscp) for dscp in stray[:8]) + (", ..." if len(stray) > 8 else "")
            yield f"the {side} intent leaves {len(stray)} DSCPs the plan does not name ({shown}) on a lossless priority"


def _stray(plan: QosPlan) -> list[int]:
    """DSCPs the plan does not name that its 64-entry map puts on a lossless priority."""
    named = {dscp for dscp, _ in plan.dscp_to_priority}
    return [dscp for dscp, priority in plan.dscp_map if dscp not in named and priority in plan.lossless]


class Mtu(Rule):
    """RoCE needs an MTU that carries 4096-byte payloads (about 4200 bytes with headers)."""

    id = "QOS-MTU"
    title = "RoCE MTU"
    severity = Severity.WARNING

    def applies(self, spec: ClusterSpec) -> bool:
        return spec.qos is not None

    def check(self, spec: ClusterSpec, topology: Topology) -> Iterator[Finding]:
        assert spec.qos is not None
        if spec.qos.mtu < ROCE_MIN_MTU:
            yield self.finding(
                "qos.mtu",
                f"MTU {spec.qos.mtu} is below {ROCE_MIN_MTU}: RoCE falls back to 2048-byte frames",
                "set qos.mtu to 9000 (jumbo frames end to end)",
            )


class StoragePlan(ReadsDerived):
    """The storage network's RoCE plan (on premises, beside a RoCE or InfiniBand fabric): storage RDMA on qos.storage's
    priority with ECN, PFC there when storage.lossless asks for a lossless storage network, CNPs on
    a priority of their own, and host and switch sides that agree (derived separately: all 64
    DSCPs, PFC, ECN, MTU). Where storage shares the fabric (`fabric.shared_with: [storage]`), the
    fabric's one plan must hold the storage class: its DSCP on its priority on both sides, ECN marked
    there (storage RDMA keeps its own class, with DCQCN), PFC there when storage.lossless, and the
    storage ports' host plan agreeing with the fabric leaves they are cabled to."""

    id = "QOS-STORAGE"
    title = "storage QoS plan"

    def applies(self, spec: ClusterSpec) -> bool:
        return spec.storage_qos is not None and spec.storage is not None and spec.fabric is not None

    def check_derived(self, spec: ClusterSpec, topology: Topology, derived: Derived) -> Iterator[Finding]:
        assert spec.storage_qos is not None and spec.storage is not None and spec.fabric is not None
        storage, cnp, lossless = spec.storage_qos.storage, spec.storage_qos.cnp, spec.storage.lossless
        shared = storage_shares_fabric(spec)
        if not shared and storage.priority == cnp.priority:
            yield self.finding(
                "qos.storage.priority",
                f"storage RDMA shares priority {storage.priority} with CNP on the storage network: congestion "
                "notices queue behind the storage data they should slow down",
                f"give storage a priority other than CNP's {cnp.priority} (default 1)",
            )
        intent = derived.storage_intent()
        fabric = derived.qos_intent()
        if intent is None or (shared and fabric is None):
            return
        if shared:  # the storage ports' host plan against the fabric leaves they are cabled to
            assert fabric is not None
            intent = QosIntent(host=intent.host, switch=fabric.switch)
        plan = "the GPU fabric's QoS plan (storage shares the fabric)" if shared else "the storage network's QoS plan"
        sides = (("host", intent.host), ("switch", intent.switch))
        misplaced = [f"{side} priority {dict(side_plan.dscp_map)[storage.dscp]}" for side, side_plan in sides
                     if dict(side_plan.dscp_map)[storage.dscp] != storage.priority]
        if misplaced:
            yield self.finding("qos.storage", f"{plan} puts storage DSCP {storage.dscp} on {', '.join(misplaced)}, "
                                              f"not on qos.storage.priority {storage.priority}", _BUG_HINT)
        unpaused = [f"{side} PFC on {list(side_plan.lossless) or 'no priority'}" for side, side_plan in sides
                    if storage.priority not in side_plan.lossless]
        if lossless and unpaused:
            yield self.finding(
                "qos.pfc_priorities" if shared else "storage.lossless",
                f"storage.lossless asks for a lossless storage class, but {plan} has no PFC on storage priority "
                f"{storage.priority} ({', '.join(unpaused)}): storage RDMA would be dropped under congestion",
                (f"add {storage.priority} to qos.pfc_priorities (with qos.mode: lossless), or set storage.lossless: "
                 "false" if shared else _BUG_HINT),
            )
        unmarked = [side for side, side_plan in sides if storage.priority not in side_plan.ecn]
        if unmarked:
            yield self.finding("storage", f"{plan} marks no ECN on storage priority {storage.priority} "
                                          f"({' and '.join(unmarked)} side)", _BUG_HINT)
        for problem in side_disagreements(intent):
            yield self.finding("storage", f"{'storage ports' if shared else 'storage network'}: {problem}", _BUG_HINT)


_BUG_HINT = ("the storage QoS intent (cluster/intent/storage_qos.py) no longer follows the qos and storage "
             "sections (a bug, not your stack)")
