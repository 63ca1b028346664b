"""`lab up|check|fail|restore|down|status|export|lldp STACK`: the design's GPU fabric in real FRR on this machine.

Exit codes as `validate`: 0 clean, 1 findings (`check`, `fail`) , 2 unusable input (a rendered tree
the lab cannot use: LAB-INPUT findings, every one at once, nothing built or written), a machine
that cannot run a lab, or a lab that is not up (or already up, for `up`).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from cluster.cli import VERBS
from cluster.commands import out_target, publish_tree, refuse, tell
from cluster.findings import Finding, printable
from cluster.inputs import Unreadable, read_text_bounded
from cluster.limits import MAX_LAB_DEVICES
from cluster.pipeline import Valid, validate
from cluster.spec import ClusterSpec
from cluster.topology import Topology

if TYPE_CHECKING:  # the lab's modules load only when a lab action runs
    from cluster.lab.model import Planned, Slice
    from cluster.lab.sizing import Sized

ACTIONS = ("up", "check", "fail", "restore", "down", "status", "export", "lldp")
MAX_RENDERED_FILE = 64 * 1024 * 1024


def add_parser(verbs: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    parser = verbs.add_parser("lab", help=VERBS["lab"], description=__doc__.split("\n\n")[0])
    actions = parser.add_subparsers(dest="action", required=True)
    state = argparse.ArgumentParser(add_help=False)
    state.add_argument("--state-dir", default=None,
                       help="where the lab's state lives (default $GPU_CLUSTER_LAB_DIR or /run/gpu-cluster-lab)")
    output = argparse.ArgumentParser(add_help=False)
    output.add_argument("--format", choices=("text", "json"), default="text")
    stack = argparse.ArgumentParser(add_help=False)
    stack.add_argument("stack", help="stack name (dev -> stacks/Pulumi.dev.yaml) or path")
    up = actions.add_parser("up", parents=[stack, state, output], help="build the fabric in network namespaces")
    up.add_argument("--slice", default=None,
                    help="all, or groups=N: the first N leaf groups, every switch above them and their hosts "
                         "(default: all when it fits this machine's memory and CPU, else the largest groups=N that does)")
    up.add_argument("--from", dest="source", default=None, metavar="DIR",
                    help="run the rendered tree in DIR (`render --out DIR`, edited or not) instead of rendering")
    up.add_argument("--timeout", type=float, default=120, help="seconds to wait for convergence (default 120)")
    check = actions.add_parser("check", parents=[stack, state, output], help="check the running lab against the design")
    check.add_argument("--no-lldp", action="store_true", help="skip the LLDP neighbor check")
    fail = actions.add_parser("fail", parents=[stack, state, output],
                              help="fail a switch or a cable LOWER~UPPER while probe flows run")
    fail.add_argument("name", help="a switch of the lab (spine-001) or a cable LOWER~UPPER")
    fail.add_argument("--mode", choices=("link", "kill", "silent"), default="link",
                      help="link: ports down; kill: routing daemons killed; silent: every packet dropped, links up")
    restore = actions.add_parser("restore", parents=[stack, state], help="undo every `lab fail`")
    restore.add_argument("--timeout", type=float, default=120, help="seconds to wait for convergence (default 120)")
    actions.add_parser("down", parents=[stack, state], help="remove everything the lab created")
    actions.add_parser("status", parents=[stack, state, output], help="what the lab holds and whether it is up")
    lldp = actions.add_parser("lldp", parents=[stack, state],
                              help="write every device's LLDP neighbors (lldpctl -f json), as verify and import read them")
    lldp.add_argument("--out", required=True, metavar="DIR", help="the folder to write <device>.json files into")
    export = actions.add_parser("export", parents=[stack], help="write the lab as a containerlab topology")
    export.add_argument("--format", choices=("containerlab",), default="containerlab", dest="export_format")
    export.add_argument("--slice", default=None, help="as for `lab up` (default all)")
    export.add_argument("--out", default=None, help="output directory (default build/lab/<stack>/)")


def run(args: argparse.Namespace) -> int:
    from cluster.lab.runtime import LabError

    try:
        code: int = ACTION_RUN[args.action](args)
    except LabError as error:
        print(f"lab {args.action}: {error}", file=sys.stderr)
        return 2
    return code


def _design(args: argparse.Namespace, verb: str) -> Valid | None:
    result = validate(args.stack)
    if not isinstance(result, Valid) or not result.ok:
        refuse(result, f"lab {verb}")
        return None
    if result.spec.target != "onprem" or result.spec.fabric is None:
        print(f"lab {verb}: {result.stack} has no on-prem fabric of ours to boot (target "
              f"{result.spec.target}); the lab runs on-prem Ethernet designs", file=sys.stderr)
        return None
    if result.spec.fabric.transport != "roce":
        print(f"lab {verb}: {result.stack}'s GPU fabric is {result.spec.fabric.transport}, and the lab boots "
              "Ethernet fabrics in FRR; an InfiniBand design is checked by its own tools instead: ibdmchk on "
              "render's verify/fabric.topo, OpenSM with its fabric/ files over ibsim (docs/guides/verify.md)",
              file=sys.stderr)
        return None
    return result


def _plan(args: argparse.Namespace, result: Valid, chosen: Slice) -> Planned:
    """The lab plan of `chosen` from --from (or a fresh render): a `Planned`, its plan None with
    LAB-INPUT findings when the tree cannot be used."""
    from cluster.artifacts import render_tree
    from cluster.lab.model import Planned, build_plan
    from cluster.lab.rules import input_finding

    if args.source is None:
        return build_plan(result.spec, result.topology, render_tree(result.spec, result.topology), chosen,
                          rendered_now=True)
    root = Path(args.source)
    if not root.is_dir():
        return Planned(None, (input_finding(str(root), "--from: not a directory",
                                            f"give the folder `render {result.stack} --out DIR` wrote"),))
    files, unreadable = _read_tree(root)
    return build_plan(result.spec, result.topology, files, chosen, unreadable)


def _read_tree(root: Path) -> tuple[dict[str, str], dict[str, str]]:
    """The switch and host files, the DHCP servers' configurations and the cabling plan under `root`: {path: text},
    and {path: why} of those that cannot be read (the plan reports only those it needs)."""
    from cluster.lab.model import CABLING, DHCP_CONFIG, OOB_DHCP_CONFIG

    files: dict[str, str] = {}
    unreadable: dict[str, str] = {}
    for path in sorted(root.rglob("*")):
        relative = path.relative_to(root).as_posix()
        if not path.is_file() or not ("switches" in path.parts or "hosts" in path.parts
                                      or relative in (CABLING, DHCP_CONFIG, OOB_DHCP_CONFIG)):
            continue
        try:
            files[relative] = read_text_bounded(path, MAX_RENDERED_FILE, "rendered file")
        except Unreadable as error:
            unreadable[relative] = str(error).removeprefix(f"{path}: ")
    return files, unreadable


def _refused(args: argparse.Namespace, stack: str, findings: tuple[Finding, ...], problem: str, nothing: str) -> int:
    """Print the LAB-INPUT findings that keep the lab from being built, in the output format asked
    for (all of them: each names a file or device to fix), and give exit code 2."""
    if getattr(args, "format", "text") == "json":  # export's --format names the topology's format
        print(json.dumps({"stack": stack, "ok": False, "findings": [f.to_dict() for f in findings]}, indent=2))
    else:
        print(f"lab {args.action}: {stack}: {problem} ({len(findings)} finding"
              f"{'s' if len(findings) != 1 else ''}); {nothing}")
        _print_findings(list(findings), shown=len(findings))
    return 2


def _available_mb() -> float:
    for line in Path("/proc/meminfo").read_text().splitlines():
        if line.startswith("MemAvailable:"):
            return int(line.split()[1]) / 1024
    return 0.0


def _fitting_slice(args: argparse.Namespace, result: Valid) -> Sized:
    """The slice of --slice, or without it the largest that fits this machine's memory and CPU
    (all, else up to two leaf groups), with what it needs; LabError when it would not fit in memory."""
    from cluster.lab.model import Slice, leaf_groups, slice_devices
    from cluster.lab.runtime import LabError
    from cluster.lab.sizing import HOST_MB, MEMORY_SHARE, SESSION_MB, SWITCH_MB, Machine, Need, choose

    topology = result.topology
    try:
        chosen = Slice.parse(args.slice)
    except ValueError as error:
        raise LabError(str(error)) from None

    def need(candidate: Slice) -> Need:
        switches, hosts, _ = slice_devices(topology, candidate)
        sessions = sum(data["links"] for _, _, network, data in topology.edges
                       if network == "fabric" and data["lower"] in switches and data["upper"] in switches)
        return Need(candidate, len(switches), 2 * sessions, len(hosts))

    candidates = [chosen]
    if args.slice is None:
        groups = len(set(leaf_groups(topology).values()))
        candidates += [Slice(n) for n in range(min(groups - 1, 2), 0, -1)]  # smaller than all
    sized = choose([need(candidate) for candidate in candidates], Machine(_available_mb(), len(os.sched_getaffinity(0))))
    _within_limit("up", result, sized.need.slice)
    if not sized.fits_memory:
        raise LabError(f"slice {sized.need.slice} needs about {sized.need.memory_mb:,.0f} MB ({SWITCH_MB:g} MB a switch, "
                       f"{SESSION_MB:g} MB a session, {HOST_MB:g} MB a host) and this machine has "
                       f"{sized.machine.memory_budget_mb:,.0f} MB for a lab ({MEMORY_SHARE:.0%} of MemAvailable); "
                       "choose a smaller --slice groups=N")
    return sized


def _within_limit(verb: str, result: Valid, chosen: Slice) -> None:
    """LabError, before anything is rendered, when the slice holds more devices than a lab takes
    (cluster.limits.MAX_LAB_DEVICES), naming the largest slice that fits, if one does."""
    from cluster.lab.model import Slice, leaf_groups, slice_devices
    from cluster.lab.runtime import LabError

    topology = result.topology

    def devices(candidate: Slice) -> tuple[int, int]:
        switches, hosts, _ = slice_devices(topology, candidate)
        return len(switches), len(hosts)

    switches, hosts = devices(chosen)
    if switches + hosts <= MAX_LAB_DEVICES:
        return
    fits, low, high = None, 1, len(set(leaf_groups(topology).values()))
    while low <= high:  # a slice's devices grow with its leaf groups
        middle = (low + high) // 2
        if sum(devices(Slice(middle))) <= MAX_LAB_DEVICES:
            fits, low = middle, middle + 1
        else:
            high = middle - 1
    if fits is not None:
        fix = f"choose --slice groups={fits} or fewer ({sum(devices(Slice(fits))):,} devices)"
    else:
        fix = (f"even --slice groups=1 holds {sum(devices(Slice(1))):,} (every switch above a leaf group comes "
               "with it): boot a smaller design of the same shape")
    nothing = "started" if verb == "up" else "written"
    raise LabError(f"{result.stack}: --slice {chosen} holds {switches:,} switches and {hosts:,} hosts "
                   f"({switches + hosts:,} devices); a lab takes at most {MAX_LAB_DEVICES:,} devices (its plan grows "
                   f"faster than its devices: 5,376 took 79 s of CPU and 5.5 GB); {fix}; nothing {nothing}")


def _up(args: argparse.Namespace) -> int:
    from cluster.lab import runtime

    result = _design(args, "up")
    if result is None:
        return 2
    tell(result)
    root = runtime.state_dir(args.state_dir)
    if runtime.load(root) is not None:
        raise runtime.LabError(f"a lab is up (state {root / 'state.json'}); run `lab down` first")
    sized = _fitting_slice(args, result)
    planned = _plan(args, result, sized.need.slice)
    if planned.plan is None:
        return _refused(args, result.stack, planned.findings, "the lab cannot be built from the rendered tree",
                        "nothing started")
    summary = runtime.up(planned.plan, root, result.stack, str(sized.need.slice), args.timeout)
    summary["sizing"] = sized.to_dict()
    if args.format == "json":
        print(json.dumps(summary, indent=2))
    else:
        converged = (f"converged in {summary['converge_s']} s" if summary["converge_s"] is not None
                     else f"NOT converged within {args.timeout:g} s (run `lab check` to see which sessions)")
        print(f"lab up: {result.stack}: {summary['slice']}")
        print(f"  size: {sized.describe()}")
        print(f"  {summary['switches']} switches (FRR: zebra, bgpd, bfdd; lldpd), {summary['hosts']} hosts, "
              f"{summary['cables']} cables{_oob_counts(summary)}; built in {summary['build_s']} s, {converged}; "
              f"daemons {summary['memory_mb']} MB resident")
        for note in summary["notes"]:
            print(f"  note: {note}")
        print(printable(f"  next: lab check {args.stack}; lab fail {args.stack} NAME; lab down {args.stack}"))
    return 0 if summary["converge_s"] is not None else 1


def _running(args: argparse.Namespace) -> Any:
    from cluster.lab import runtime

    root = runtime.state_dir(args.state_dir)
    lab = runtime.load(root)
    if lab is None or lab.state.get("phase") != "up":
        raise runtime.LabError(f"no lab is up (state {root}); start one with `lab up {args.stack}`")
    return lab


def _lab_and_design(args: argparse.Namespace, verb: str) -> tuple[Any, str, ClusterSpec, Topology] | None:
    """The running lab and the design it must be of (None: the design was refused, exit 2)."""
    lab = _running(args)
    result = _design(args, verb)
    if result is None:
        return None
    if lab.state["stack"] != result.stack:
        from cluster.lab.runtime import LabError
        raise LabError(f"the lab that is up is stack {lab.state['stack']}, not {result.stack}")
    return lab, result.stack, result.spec, result.topology


SHOWN_FINDINGS = 40


def _oob_counts(summary: dict[str, Any]) -> str:
    """`, and an out-of-band network of N switches and M cables` where the lab has one."""
    if not summary.get("oob_switches"):
        return ""
    return (f", and an out-of-band network of {summary['oob_switches']} switch"
            f"{'es' if summary['oob_switches'] != 1 else ''} and {summary['oob_cables']} cables")


def _bmc_counts(counts: dict[str, int]) -> str:
    """`N BMC cables and M BMC leases as designed`, or why no lease was asked for."""
    cables = f"{counts.get('bmc_links', 0)} BMC cables"
    if counts.get("oob_dhcp_planned"):
        return f"{cables} and {counts.get('bmc_leases', 0)} BMC leases as designed"
    return f"{cables} as designed (no oob DHCP server planned: management_plane.dhcp_server, so no BMC leases)"


def _print_findings(findings: list[Finding], shown: int = SHOWN_FINDINGS) -> None:
    for finding in findings[:shown]:
        print(f"  {finding.severity} {finding.rule} {finding.path}: {finding.message}")
        print(f"      hint: {finding.hint}")
    if len(findings) > shown:
        print(f"  ... and {len(findings) - shown} more (--format json lists every one)")


def _check(args: argparse.Namespace) -> int:
    from cluster.lab.check import check

    found = _lab_and_design(args, "check")
    if found is None:
        return 2
    lab, stack, spec, topology = found
    checked = check(lab, spec, topology, lldp=not args.no_lldp)
    if args.format == "json":
        print(json.dumps({"stack": stack, "slice": lab.plan.slice, "ok": not checked.findings,
                          "counts": checked.counts, "findings": [f.to_dict() for f in checked.findings]}, indent=2))
    else:
        counts = checked.counts
        print(f"lab check: {stack}: {counts['established']}/{counts['sessions']} BGP sessions established "
              f"({counts['bfd_up']} with BFD up on the design's timers), {counts['prefixes']} prefixes with their "
              f"ECMP widths, {counts['host_route_queries']} host rail routes, {counts['reach_probes']} reachability and "
              f"{counts['mtu_probes']} MTU probes, {counts['host_network_probes']} storage and management port "
              f"probes, {counts['nccl_sockets']} NCCL socket interfaces, {counts['dhcp_leases']} DHCP leases as designed, "
              f"{counts['oob_probes']} switch management addresses from the oob network, {_bmc_counts(counts)}, "
              f"{counts.get('lldp_cables', 0)} cables by LLDP "
              f"(link speeds are not emulated): {len(checked.findings)} finding"
              f"{'s' if len(checked.findings) != 1 else ''}")
        _print_findings(checked.findings)
    return 1 if checked.findings else 0


def _fail(args: argparse.Namespace) -> int:
    from cluster.lab.failure import fail

    found = _lab_and_design(args, "fail")
    if found is None:
        return 2
    lab, _, spec, topology = found
    report = fail(lab, spec, topology, args.name, args.mode)
    if args.format == "json":
        print(json.dumps(report.to_dict(), indent=2))
    else:
        lossy = [flow for flow in report.flows if flow["lost"]]
        first = f"first route change after {report.first_change_s} s" if report.first_change_s is not None \
            else "no route changed"
        withdraw = f"in {report.withdraw_s} s" if report.withdraw_s is not None else "did NOT settle"
        print(f"lab fail: {printable(args.name)} ({args.mode}): {first}, routes settled to the design's failed fabric "
              f"{withdraw} (bound {report.bound_settle_s:g} s); {len(lossy)} of {len(report.flows)} probe flows lost "
              f"packets, the worst for {report.worst_loss_s:.2f} s (bound {report.bound_loss_s:g} s)")
        worst = max(report.measured_ratio.items(), key=lambda item: item[1], default=None)
        if worst is not None:
            predicted = ", ".join(f"{name} {ratio:g}:1" for name, ratio in report.predicted_ratio.items())
            print(f"  worst oversubscription below it: lab {worst[0]} {worst[1]:g}:1; whatif {predicted or 'n/a'}")
        _print_findings(report.findings)
        print(printable(f"  the failure stays until `lab restore {args.stack}`"))
    return 1 if report.findings else 0


def _restore(args: argparse.Namespace) -> int:
    from cluster.lab.failure import restore
    from cluster.lab.runtime import wait_converged

    lab = _running(args)
    restored = restore(lab)
    if not restored:
        print("lab restore: nothing had failed")
        return 0
    converged = wait_converged(lab, args.timeout)
    again = f"converged again in {converged:.2f} s" if converged is not None else \
        f"NOT converged again within {args.timeout:g} s (run `lab check`)"
    print(f"lab restore: {', '.join(restored)}; {again}")
    return 0 if converged is not None else 1


def _down(args: argparse.Namespace) -> int:
    from cluster.lab import runtime

    removed = runtime.down(runtime.state_dir(args.state_dir))
    if removed is None:
        print("lab down: no lab is up")
        return 0
    print(f"lab down: removed {removed['namespaces']} namespaces and stopped {removed['processes']} processes")
    return 0


def _status(args: argparse.Namespace) -> int:
    from cluster.lab import runtime

    lab = runtime.load(runtime.state_dir(args.state_dir))
    if lab is None:
        print(json.dumps({"up": False}) if args.format == "json" else "lab status: no lab is up")
        return 0
    plan = lab.plan
    data = {"up": lab.state["phase"] == "up", "stack": lab.state["stack"], "slice": plan.slice,
            "switches": len(plan.switches), "hosts": len(plan.hosts), "cables": len(plan.cables),
            "failures": lab.state["failures"], "memory_mb": round(runtime.memory_kb(lab) / 1024, 1),
            "switch_memory_mb": round(runtime.memory_kb(lab, {s.name for s in plan.switches}) / 1024, 1),
            "host_memory_mb": round(runtime.memory_kb(lab, {h.name for h in plan.hosts}) / 1024, 1)}
    if args.format == "json":
        print(json.dumps(data, indent=2))
    else:
        print(printable(f"lab status: {data['stack']} ({'up' if data['up'] else lab.state['phase']}): {plan.slice}; "
                        f"failed: {', '.join(f['name'] for f in data['failures']) or 'nothing'}; {data['memory_mb']} MB"))
    return 0


def _export(args: argparse.Namespace) -> int:
    from cluster.lab.containerlab import topology_files
    from cluster.lab.model import Slice
    from cluster.lab.runtime import LabError

    result = _design(args, "export")
    if result is None:
        return 2
    tell(result)
    args.source = None  # export has no --from: it renders the design
    try:
        chosen = Slice.parse(args.slice)
    except ValueError as error:
        raise LabError(str(error)) from None
    _within_limit("export", result, chosen)
    # Two checkpoints: the rendered tree, then what containerlab takes of the plan built from it.
    planned = _plan(args, result, chosen)
    if planned.plan is None:
        return _refused(args, result.stack, planned.findings, "the lab cannot be built from the rendered tree",
                        "nothing written")
    plan = planned.plan
    exported = topology_files(plan)
    if exported.findings:
        return _refused(args, result.stack, exported.findings, "containerlab cannot take this lab",
                        "nothing written")
    files = exported.files
    out = args.out if args.out is not None else str(Path("build") / "lab" / result.stack)
    where = out_target("lab export", result.stack, out)
    if where is None:
        return 2
    code = publish_tree("lab export", result.stack, files, where)
    if code:
        return code
    print(printable(f"lab export: {result.stack}: containerlab topology of {plan.slice} in {out} ({len(files)} files); "
                    f"run it with `containerlab deploy -t {Path(out) / f'{result.stack}.clab.yml'}`"))
    return 0


def _lldp(args: argparse.Namespace) -> int:
    from cluster.lab.observe import lldp_files

    lab = _running(args)
    stack = lab.state["stack"]
    where = out_target("lab lldp", stack, args.out)  # a folder gpu-cluster wrote, or none: never the user's files
    if where is None:
        return 2
    files = lldp_files(lab)
    code = publish_tree("lab lldp", stack, files, where)
    if code:
        return code
    print(printable(f"lab lldp: {stack}: {len(files)} neighbor files (lldpctl -f json) in {args.out}, for "
                    "`verify --lldp` and `import --lldp`"))
    return 0


ACTION_RUN = {"up": _up, "check": _check, "fail": _fail, "restore": _restore, "down": _down, "status": _status,
              "export": _export, "lldp": _lldp}
