"""Lossless QoS plan consistency (RoCE on premises only)."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterator

from cluster.findings import Finding, Severity
from cluster.qos import RenderedQos, classes, disagreements, host_plan, plan_disagreements, switch_plan
from cluster.rules.base import Derived, ReadsDerived, Rule
from cluster.spec import ClusterSpec
from cluster.topology import Topology

ROCE_MIN_MTU = 4200  # a 4096-byte RoCE payload plus headers; below it RoCE falls back to 2048


class PfcMap(ReadsDerived):
    """Lossless mode: the RoCE priority has PFC on; the CNP priority differs and has no PFC;
    DSCP values are unique; host and switch plans agree (derived separately, and as rendered).
    Skipped for InfiniBand and cloud."""

    id = "QOS-PFC-MAP"
    title = "lossless QoS plan"

    def applies(self, spec: ClusterSpec) -> bool:
        return spec.qos is not None

    def check_derived(self, spec: ClusterSpec, topology: Topology, derived: Derived) -> Iterator[Finding]:
        rendered = derived.rendered_qos()
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
        if not shared:  # a DSCP two classes claim is reported above; each side would pick one of them
            for problem in plan_disagreements(host_plan(qos), switch_plan(qos)):
                yield self.finding("qos", f"host and switch plans disagree: {problem}",
                                   "a derivation in cluster/qos.py no longer follows the qos section "
                                   "(a bug, not your stack)")
        if rendered is not None:
            yield from self._rendered(spec, rendered)

    def _rendered(self, spec: ClusterSpec, emitted: RenderedQos) -> Iterator[Finding]:
        """Compare what the renderers actually write (read back) with the plan and with each other."""
        assert spec.qos is not None
        hint = "a template no longer writes the plan: fix cluster/templates or cluster/render (a bug, not your stack)"
        sides = [("host script (mlnx_qos)", host_plan(spec.qos), emitted.host_mlnx),
                 ("host script (dcb)", host_plan(spec.qos), emitted.host_dcb)]
        sides += [(f"{os} switch config", switch_plan(spec.qos), side) for os, side in emitted.switches.items()]
        for label, planned, rendered in sides:
            for problem in disagreements(planned, rendered):
                yield self.finding("qos", f"rendered {label} differs from the plan: {problem}", hint)
        for os, side in emitted.switches.items():
            for problem in disagreements(emitted.host_mlnx, side):
                yield self.finding("qos", f"rendered host script and {os} switch config disagree: {problem}", hint)
        for label, dscps in sorted(emitted.stray.items()):
            if dscps:
                shown = ", ".join(str(dscp) for dscp in dscps[:8]) + (", ..." if len(dscps) > 8 else "")
                yield self.finding("qos", f"rendered {label} leaves {len(dscps)} DSCPs the plan does not "
                                          f"name ({shown}) on a lossless priority", hint)


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
