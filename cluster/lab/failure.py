"""`lab fail NAME --mode link|kill|silent` and `lab restore`: fail a switch or a cable while probe
flows run, measure, and compare with `whatif`'s prediction for the same failure.

Modes: `link` takes every port of the switch (or both ends of the cable) down, as a pulled
cable or a power loss does; `kill` stops the switch's routing daemons at once (SIGKILL), its
links and kernel routes left as they are; `silent` drops every packet in and out of the switch
(nftables in its namespace) with every link up, as a hung ASIC or a wedged control plane does:
only BFD (or, without it, the BGP hold timer) notices that.

Measured: per probe flow (host rail to host rail, ping every 10 ms) the outage, as the longest
time between two replies received (`ping -D` stamps each reply; the output goes to a file, so no
pipe fills up; iputils sends fewer than 100 echoes a second on a loaded machine, so a count of
lost echoes times the interval would undercount), up to the moment the flows stop; from
`ip -ts monitor route` in every surviving switch, the first kernel route
change after the failure and the last one before every kernel holds the design's routes for the
failed fabric (withdrawal); the ECMP widths then. Compared: those widths against the
design's routes without the failed device (LAB-ROUTE) and the worst ratio of the tier below the
failure against `whatif`'s (LAB-WHATIF), and the switches left without uplinks against whatif's
cut-off list.

Verdict (LAB-CONVERGE, exit 1): every flow's outage and the time until the routes settle must stay
within the design's BFD detect time plus a margin for BGP to withdraw and the kernels to install
the narrower ECMP (LOSS_MARGIN_S, SETTLE_MARGIN_S: what 10 userspace FRRs on two loaded cores need,
measured in tests/test_lab.py); a failure that never settles fails it too.
"""

from __future__ import annotations

import contextlib
import datetime
import itertools
import os
import re
import signal
import subprocess
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import IO, Any

from cluster.findings import Finding
from cluster.lab import observe
from cluster.lab.check import lab_design, rail_probes, routes
from cluster.lab.expect import Design
from cluster.lab.rules import lab_finding
from cluster.lab.runtime import DAEMONS, Lab, LabError, load_frr, sh, start_frr
from cluster.spec import ClusterSpec
from cluster.topology import FABRIC, Topology
from cluster.whatif import TIER_BELOW, Outcome
from cluster.whatif import fail as whatif_fail
from cluster.whatif import fail_link as whatif_fail_link

MODES = ("link", "kill", "silent")
PROBE_INTERVAL_S = 0.01
LOSS_MARGIN_S = 1.4  # beyond BFD's detect time: BGP's withdrawal, zebra's install, a loaded machine
SETTLE_MARGIN_S = 2.4  # beyond BFD's detect time, until every surviving kernel holds the design's routes
MAX_FLOWS = 64
NFT_TABLE = "gpu_cluster_lab"


@dataclass
class FailReport:
    failed: str
    mode: str
    flows: list[dict[str, Any]] = field(default_factory=list)
    first_change_s: float | None = None  # the first kernel route change anywhere after the failure
    withdraw_s: float | None = None  # the last one, once every kernel holds the design's routes
    widths: dict[str, dict[str, int]] = field(default_factory=dict)  # switch -> {prefix: next hops} during failure
    measured_ratio: dict[str, float] = field(default_factory=dict)
    predicted_ratio: dict[str, float] = field(default_factory=dict)
    findings: list[Finding] = field(default_factory=list)
    bound_loss_s: float = 0.0  # the longest outage the design allows a flow
    bound_settle_s: float = 0.0  # the longest time the design allows until the routes settle

    @property
    def worst_loss_s(self) -> float:
        return max((flow["loss_s"] for flow in self.flows), default=0.0)

    def to_dict(self) -> dict[str, Any]:
        return {"failed": self.failed, "mode": self.mode, "first_change_s": self.first_change_s,
                "withdraw_s": self.withdraw_s,
                "worst_loss_s": round(self.worst_loss_s, 3),
                "bound_loss_s": self.bound_loss_s, "bound_settle_s": self.bound_settle_s, "flows": self.flows,
                "measured_ratio": self.measured_ratio, "whatif_ratio": self.predicted_ratio, "widths": self.widths,
                "findings": [finding.to_dict() for finding in self.findings]}


def _target(lab: Lab, name: str) -> tuple[str | None, tuple[str, str, str, str] | None]:
    """(switch, None) or (None, (lower, lower_if, upper, upper_if)) for NAME; LabError if neither."""
    plan = lab.plan
    if "~" in name:
        lower, _, upper = name.partition("~")
        for cable in plan.cables:
            if {cable.a, cable.b} == {lower, upper}:
                return None, (cable.a, cable.a_if, cable.b, cable.b_if)
        raise LabError(f"no cable between {lower} and {upper} in this lab; cables are LOWER~UPPER of switches it holds")
    if name not in {switch.name for switch in plan.switches}:
        names = ", ".join(switch.name for switch in plan.switches[:6])
        raise LabError(f"{name!r} is not a switch of this lab (it holds {names}, ...); a cable is LOWER~UPPER")
    return name, None


def _ports(lab: Lab, switch: str | None, cable: tuple[str, str, str, str] | None) -> list[tuple[str, str]]:
    """(device, interface) of what fails: every port of the switch the design has up, or both
    ends of the cable."""
    if cable is not None:
        return [(cable[0], cable[1]), (cable[2], cable[3])]
    return [(switch, interface.name) for item in lab.plan.switches if item.name == switch
            for interface in item.interfaces if interface.up]


def _set_links(lab: Lab, ports: list[tuple[str, str]], state: str) -> None:
    per_device: dict[str, list[str]] = {}
    for device, interface in ports:
        per_device.setdefault(device, []).append(f"link set {interface} {state}\n")
    for device, commands in per_device.items():
        sh("ip", "-n", lab.ns(device), "-batch", "-", stdin="".join(commands))


def apply(lab: Lab, name: str, mode: str) -> None:
    """Fail NAME in MODE and record it in the state (for restore and down)."""
    if any(item["name"] == name for item in lab.state["failures"]):
        raise LabError(f"{name} has already failed; `lab restore` first")
    switch, cable = _target(lab, name)
    if cable is not None and mode == "kill":
        raise LabError("--mode kill stops a switch's daemons; a cable fails with --mode link or silent")
    lab.state["failures"].append({"name": name, "mode": mode})
    lab.save()
    if mode == "link":
        _set_links(lab, _ports(lab, switch, cable), "down")
    elif mode == "kill":
        for daemon in DAEMONS:
            pid, _ = lab.state["pids"][f"{switch}/{daemon}"]
            with contextlib.suppress(ProcessLookupError):
                os.kill(int(pid), signal.SIGKILL)
    elif cable is not None:
        _silence(lab, cable[0], cable[1])
    else:
        assert switch is not None
        _silence(lab, switch, None)


def _silence(lab: Lab, device: str, interface: str | None) -> None:
    """Drop every packet in and out of `device` (of its `interface` only, when given), links up."""
    into = f"iifname {interface} " if interface else ""
    out = f"oifname {interface} " if interface else ""
    rules = (f"table inet {NFT_TABLE} {{\n"
             f"  chain input {{ type filter hook input priority -500; {into}drop; }}\n"
             f"  chain forward {{ type filter hook forward priority -500; {into}drop; {out}drop; }}\n"
             f"  chain output {{ type filter hook output priority -500; {out}drop; }}\n"
             f"}}\n"
             f"table arp {NFT_TABLE} {{\n"
             f"  chain input {{ type filter hook input priority -500; {into}drop; }}\n"
             f"  chain output {{ type filter hook output priority -500; {out}drop; }}\n"
             f"}}\n")
    sh("nft", "-f", "-", ns=lab.ns(device), stdin=rules)


def _unsilence(lab: Lab, device: str) -> None:
    for family in ("inet", "arp"):
        sh("nft", "delete", "table", family, NFT_TABLE, ns=lab.ns(device), check=False)


def restore(lab: Lab) -> list[str]:
    """Undo every recorded failure; returns what was restored."""
    restored = []
    for item in reversed(lab.state["failures"]):
        name, mode = item["name"], item["mode"]
        switch, cable = _target(lab, name)
        if mode == "link":
            _set_links(lab, _ports(lab, switch, cable), "up")
        elif mode == "kill":
            assert switch is not None
            for daemon in DAEMONS:
                for leftover in (f"{daemon}.pid", f"{daemon}.vty"):
                    (lab.node_dir(switch) / leftover).unlink(missing_ok=True)
            (lab.node_dir(switch) / "zserv.api").unlink(missing_ok=True)
            start_frr(lab, switch, next(s.frr_conf for s in lab.plan.switches if s.name == switch))
            load_frr(lab, switch)
        else:
            _unsilence(lab, cable[0] if cable is not None else str(switch))
        restored.append(f"{name} ({mode})")
    lab.state["failures"] = []
    lab.save()
    return restored


def _flows(expected: Design) -> list[tuple[str, str, str]]:
    """(host, source, target) probe flows across leaves, at most MAX_FLOWS."""
    flows = []
    for source, target in rail_probes(expected):
        if source.leaf != target.leaf and expected.reachable(source.leaf, target.leaf):
            flows.append((source.host, source.address, target.address))
    return sorted(set(flows))[:MAX_FLOWS]


def _start_flows(lab: Lab, flows: list[tuple[str, str, str]], seconds: float,
                 outputs: Sequence[IO[str]]) -> list[subprocess.Popen[str]]:
    """One timestamped ping per flow, each writing to its own file of `outputs`."""
    count = int(seconds / PROBE_INTERVAL_S)
    return [subprocess.Popen(["ip", "netns", "exec", lab.ns(host), "ping", "-D", "-n", "-i", f"{PROBE_INTERVAL_S:g}",
                              "-c", str(count), "-W", "1", "-I", source, target],
                             stdout=output, stderr=subprocess.DEVNULL, text=True)
            for (host, source, target), output in zip(flows, outputs, strict=True)]


def _loss(text: str, stopped: float) -> tuple[float, int, int]:
    """(the longest time without a reply in seconds, replies lost, echoes sent) of one `ping -D`
    output, its flow stopped at `stopped` (epoch seconds): the gaps between the stamps of the
    replies received, and from the last one to the stop (a flow that never recovered)."""
    sent_match = re.search(r"(\d+) packets transmitted", text)
    replies = re.findall(r"^\[(\d+\.\d+)\] .*icmp_seq=(\d+)", text, re.MULTILINE)
    stamps = sorted(float(stamp) for stamp, _ in replies)
    received = len({sequence for _, sequence in replies})
    sent = int(sent_match.group(1)) if sent_match else received
    if not stamps:
        return float("inf"), sent, sent
    gaps = [later - earlier for earlier, later in itertools.pairwise(stamps)]
    longest = max([*gaps, max(0.0, stopped - stamps[-1])])
    return longest, max(0, sent - received), sent


def _route_changes(monitors: dict[str, subprocess.Popen[str]], since: float) -> list[float]:
    """Seconds after `since` of every kernel route change the monitors saw, in order."""
    for process in monitors.values():
        process.terminate()
    times = []
    for process in monitors.values():
        out, _ = process.communicate(timeout=10)
        for stamp in re.findall(r"^\[(\d{4}-\d\d-\d\dT[\d:.]+)\]", out, re.MULTILINE):
            moment = datetime.datetime.fromisoformat(stamp).timestamp()  # local time, as `ip -ts` prints it
            if moment >= since:
                times.append(moment - since)
    return sorted(times)


def fail(lab: Lab, spec: ClusterSpec, topology: Topology, name: str, mode: str,
         settle_timeout: float = 20.0) -> FailReport:
    """Fail NAME while probe flows run, until the fabric has settled (at most `settle_timeout` s)
    and one second more; the failure stays until `lab restore`."""
    failing = _target(lab, name)  # a name that is no switch or cable of the lab is refused before anything runs
    expected = lab_design(lab, spec, topology)
    report = FailReport(name, mode, bound_loss_s=round(expected.bfd.detect_ms / 1000 + LOSS_MARGIN_S, 3),
                        bound_settle_s=round(expected.bfd.detect_ms / 1000 + SETTLE_MARGIN_S, 3))
    flows = _flows(expected)
    with contextlib.ExitStack() as files:
        outputs = [files.enter_context(tempfile.TemporaryFile("w+")) for _ in flows]
        _measure(lab, spec, topology, expected, report, failing, flows, outputs, settle_timeout)
    report.findings += _verdict(report, expected)
    return report


def _measure(lab: Lab, spec: ClusterSpec, topology: Topology, expected: Design, report: FailReport,
             failing: tuple[str | None, tuple[str, str, str, str] | None],
             flows: list[tuple[str, str, str]], outputs: Sequence[IO[str]], settle_timeout: float) -> None:
    """Fail the report's target while the flows run, and record what happened."""
    name, mode = report.failed, report.mode
    switch, cable = failing
    failed = frozenset({switch}) if switch else frozenset()
    fewer = () if cable is None else ((cable[0], cable[2], 1),) if cable[0] in expected.upper_of else ()
    processes = _start_flows(lab, flows, settle_timeout + 5, outputs)
    survivors = [s.name for s in lab.plan.switches if s.name not in failed]
    monitors = {s: subprocess.Popen(["ip", "-n", lab.ns(s), "-ts", "monitor", "route"], stdout=subprocess.PIPE,
                                    stderr=subprocess.DEVNULL, text=True) for s in survivors}
    time.sleep(1.0)  # the flows run, and the monitors listen, before the failure
    started_at, started = time.time(), time.monotonic()
    apply(lab, name, mode)
    want = {s: expected.routes(s, failed, fewer) for s in survivors}
    settled = False
    while not settled and time.monotonic() - started < settle_timeout:
        observed = observe.kernel_routes(lab, survivors)
        settled = all({p: len(h) for p, h in observed[s].items() if p in want[s]} == want[s] for s in survivors)
        time.sleep(0.05)
    time.sleep(1.0)  # flows that recovered show it
    changes = _route_changes(monitors, started_at)
    if changes:
        report.first_change_s = round(changes[0], 3)
        report.withdraw_s = round(changes[-1], 3) if settled else None
    stopped = time.time()
    for process in processes:
        process.send_signal(signal.SIGINT)  # ping prints its summary and exits
    for (host, source, target), process, output in zip(flows, processes, outputs, strict=True):
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        output.seek(0)
        loss_s, lost, sent = _loss(output.read(), stopped)
        report.flows.append({"host": host, "source": source, "target": target, "sent": sent, "lost": lost,
                             "loss_s": round(loss_s, 3)})
    observed = observe.kernel_routes(lab, survivors)
    report.findings += routes(lab, expected, {}, failed, fewer, observed)
    report.widths = {s: {p: len(h) for p, h in sorted(observed[s].items())} for s in survivors}
    outcome = (whatif_fail_link(topology, spec, cable[0], cable[2]) if cable is not None
               else whatif_fail(topology, spec, name))
    report.findings += _compare(lab, topology, expected, outcome, observed, failed, report, switch)


def _verdict(report: FailReport, expected: Design) -> list[Finding]:
    """LAB-CONVERGE when a flow's outage or the settling passed the design's bound."""
    findings = []
    detect = expected.bfd.detect_ms
    path = f"switches/{report.failed.partition('~')[0]}"
    if report.worst_loss_s > report.bound_loss_s:
        worst = max(report.flows, key=lambda flow: flow["loss_s"])
        findings.append(lab_finding(
            "LAB-CONVERGE", path, f"after {report.failed} failed ({report.mode}), {worst['host']}'s flow to "
            f"{worst['target']} went {worst['loss_s']:g} s without a reply; the design's bound is "
            f"{report.bound_loss_s:g} s (BFD detects in {detect} ms, plus {LOSS_MARGIN_S:g} s to withdraw)",
            "check BFD on the sessions around it (`lab check`: LAB-BFD) and the load of this machine"))
    if report.withdraw_s is None or report.withdraw_s > report.bound_settle_s:
        took = "never settled" if report.withdraw_s is None else f"settled after {report.withdraw_s:g} s"
        findings.append(lab_finding(
            "LAB-CONVERGE", path, f"after {report.failed} failed ({report.mode}), the routes {took}; the design's "
            f"bound is {report.bound_settle_s:g} s (BFD detects in {detect} ms, plus {SETTLE_MARGIN_S:g} s)",
            "check BFD and the BGP timers of the switches around it, then the routes the survivors hold"))
    return findings


def _compare(lab: Lab, topology: Topology, expected: Design, outcome: Outcome,
             observed: dict[str, dict[str, tuple[str, ...]]], failed: frozenset[str], report: FailReport,
             switch: str | None) -> list[Finding]:
    """The tier below the failure as measured against whatif: its worst oversubscription (design
    downlinks over the uplinks its kernel still forwards on) and the switches left without one."""
    tier = TIER_BELOW.get(topology.switch(switch)["tier"], "leaf") if switch else "leaf"
    loads = topology.switch_loads
    uplink_gbps = {lower: topology.cable(lower, upper, FABRIC)["gbps"] for lower, upper in expected.links
                   if lower in expected.fabric}
    cut_off = []
    worst: tuple[float, str] = (0.0, "")
    for name in (s.name for s in lab.plan.switches if s.tier == tier and s.name in expected.fabric - failed):
        uplinks = {session.peer_address for session in expected.sessions.get(name, ())
                   if session.peer in expected.upper_of.get(name, ())}
        used = {hop for hops in observed.get(name, {}).values() for hop in hops if hop in uplinks}
        if uplinks and not used:
            cut_off.append(name)
            ratio = float("inf")
        else:
            ratio = loads[name].down_gbps / (len(used) * uplink_gbps[name]) if used else 0.0
        report.measured_ratio[name] = round(ratio, 3)
        if ratio > worst[0]:
            worst = (ratio, name)
    findings = []
    predicted = next((ratio for ratio in outcome.ratios if ratio.tier == tier), None)
    if predicted is not None:
        report.predicted_ratio[predicted.after_at] = round(predicted.after, 3)
        if worst[1] and abs(worst[0] - predicted.after) > 1e-6 * max(1.0, predicted.after):
            findings.append(lab_finding(
                "LAB-WHATIF", f"switches/{worst[1]}",
                f"after {outcome.failed} failed, the worst {tier} measured is {worst[1]} at {worst[0]:.3g}:1 (its "
                f"design downlinks over the uplinks its kernel forwards on); whatif predicts {predicted.after:.3g}:1 "
                f"at {predicted.after_at}", "compare the lab's routes of that switch with its cabling"))
    predicted_cut = sorted(set(outcome.cut_off) & {s.name for s in lab.plan.switches})
    if sorted(cut_off) != predicted_cut:
        findings.append(lab_finding(
            "LAB-WHATIF", f"switches/{(cut_off or predicted_cut)[0]}",
            f"after {outcome.failed} failed, switches without uplinks: lab {', '.join(sorted(cut_off)) or 'none'}; "
            f"whatif {', '.join(predicted_cut) or 'none'}", "compare the lab's routes of those switches with their "
            "cabling"))
    return findings
