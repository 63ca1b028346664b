"""`estimate STACK`: predicted collective times (--collective) or a training step's communication
(--step) on a design, side by side with other designs (--compare). Designs with rule findings
are estimated anyway (comparing a bad design is the point) after their findings are printed;
only unreadable or SCHEMA-failing input, and impossible requests, stop it (exit 2)."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from cluster.cli import VERBS
from cluster.estimate.design import collective_on, pick_pool
from cluster.estimate.model import ALGORITHMS, COLLECTIVES
from cluster.estimate.placement import PLACEMENTS, Kind, NoFabricPath
from cluster.estimate.step import GLOBAL_BATCH, StepEstimate, Workload, default_global_batch, step_estimate
from cluster.estimate.units import format_size, parse_size
from cluster.pipeline import Valid, validate
from cluster.spec import PoolSpec
from cluster.words import counted

SWEEP = (*(2**power for power in range(20, 34, 2)), 2**33)  # 1 MiB, 4 MiB, .. 4 GiB, 8 GiB


class UsageError(Exception):
    """A request that cannot be answered: message for the user, exit 2."""


def add_parser(verbs: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    parser = verbs.add_parser("estimate", help=VERBS["estimate"])
    parser.add_argument("stack", help="stack name (prod -> stacks/Pulumi.prod.yaml) or path")
    parser.add_argument("--compare", nargs="+", default=[], metavar="STACK", help="more designs, side by side")
    parser.add_argument("--format", choices=("text", "json"), default="text")
    parser.add_argument("--pool", help="node pool (default: the one with the most GPUs)")
    parser.add_argument("--placement", choices=PLACEMENTS, default="packed",
                        help="packed: fewest leaves (default); worst: spread over leaves that are busy")
    single = parser.add_argument_group("one collective")
    single.add_argument("--collective", choices=COLLECTIVES, default="all_reduce")
    single.add_argument("--nodes", type=int, help="nodes taking part (default: the whole pool)")
    single.add_argument("--size", help="bytes per rank: 8GiB, 256MB, 4096 (default: a table from 1 MiB to 8 GiB)")
    single.add_argument("--algorithm", choices=ALGORITHMS, help="force an algorithm (default: NCCL-like choice)")
    step = parser.add_argument_group("training step (--step)")
    step.add_argument("--step", action="store_true", help="estimate a training step instead of one collective")
    step.add_argument("--params", type=float, help="model parameters, e.g. 70e9")
    step.add_argument("--dp", type=int, help="data-parallel size")
    step.add_argument("--tp", type=int, default=1, help="tensor-parallel size")
    step.add_argument("--pp", type=int, default=1, help="pipeline-parallel size")
    step.add_argument("--ep", type=int, default=1, help="expert-parallel size (MoE)")
    step.add_argument("--experts", type=int, default=0, help="experts per MoE layer")
    step.add_argument("--top-k", type=int, default=2, help="experts per token (MoE)")
    step.add_argument("--step-compute-s", type=float, help="compute seconds per step, communication excluded")
    step.add_argument("--layers", type=int, default=80, help="transformer layers (default 80, Llama-2-70B)")
    step.add_argument("--hidden", type=int, default=8192, help="hidden size (default 8192)")
    step.add_argument("--seq-len", type=int, default=4096, help="tokens per sequence (default 4096)")
    step.add_argument("--micro-batch", type=int, default=1, help="sequences per micro-batch (default 1)")
    step.add_argument("--global-batch", type=int, default=None,
                      help=f"sequences per step, a multiple of dp x micro-batch (default: the multiple nearest "
                           f"{GLOBAL_BATCH})")
    step.add_argument("--grad-bytes", type=int, default=2, help="bytes per gradient element (default 2, bf16)")
    step.add_argument("--dp-comm", choices=("all_reduce", "zero"), default="all_reduce",
                      help="all_reduce of gradients, or zero: reduce-scatter + all-gather")


def run(args: argparse.Namespace) -> int:
    try:
        designs = [_design(ref) for ref in [args.stack, *args.compare]]
        if args.step:
            return _run_step(args, designs)
        return _run_collective(args, designs)
    except UsageError as problem:
        print(f"estimate: {problem}", file=sys.stderr)
        return 2
    except NoFabricPath as problem:  # the design's fault, as FAB-CONNECTED reports it: exit 1 like validate
        print(f"estimate: {problem}", file=sys.stderr)
        return 1


def _design(ref: str) -> Valid:
    result = validate(ref)
    if not isinstance(result, Valid) or result.schema_failed:
        print(f"{result.stack}: cannot estimate, the stack does not load:", file=sys.stderr)
        for finding in result.findings:
            if finding.rule == "SCHEMA" or not isinstance(result, Valid):
                print(f"  {finding.rule} at {finding.path}: {finding.message}\n      hint: {finding.hint}",
                      file=sys.stderr)
        raise UsageError(f"stack {ref!r} is unreadable or fails SCHEMA (run `validate {ref}` for every finding)")
    return result


def _pool(result: Valid, name: str | None) -> PoolSpec:
    try:
        return pick_pool(result.spec, name)
    except ValueError as problem:
        raise UsageError(f"--pool: {problem} in {result.stack}") from None


def _findings_lines(result: Valid) -> list[str]:
    active = [finding for finding in result.findings if not finding.suppressed]
    if not active:
        return [f"{result.stack}: no findings"]
    lines = [f"{result.stack}: {counted(len(active), 'finding')} - estimating the design as written anyway"]
    for finding in active:
        lines.append(f"  {str(finding.severity).upper():7} {finding.rule} at {finding.path}: {finding.message}")
    return lines


def _nodes(args: argparse.Namespace, pool: PoolSpec, stack: str) -> int:
    nodes = pool.nodes if args.nodes is None else args.nodes
    if nodes < 1:
        raise UsageError(f"--nodes must be at least 1, got {nodes}")
    if nodes > pool.nodes:
        raise UsageError(f"--nodes {nodes} is more than pool {pool.name!r} of {stack} has "
                         f"({pool.nodes} at {pool.path}.nodes): ask for at most {pool.nodes}")
    return nodes


def _run_collective(args: argparse.Namespace, designs: list[Valid]) -> int:
    try:
        sizes = (parse_size(args.size),) if args.size is not None else SWEEP
    except ValueError as problem:
        raise UsageError(f"--size: {problem}") from None
    reports = []
    for result in designs:
        pool = _pool(result, args.pool)
        nodes = _nodes(args, pool, result.stack)
        rows = []
        for size in sizes:
            try:
                by_placement = {kind: collective_on(result.spec, result.topology, args.collective, nodes, size, pool,
                                                    kind, args.algorithm).to_dict() for kind in PLACEMENTS}
            except NoFabricPath:
                raise
            except ValueError as problem:
                raise UsageError(f"--algorithm: {problem}") from None
            rows.append({**by_placement[args.placement], "placements": by_placement})
        reports.append((result, pool, rows))
    if args.format == "json":
        out = [{"stack": result.stack, "pool": pool.name,
                "findings": [finding.to_dict() for finding in result.findings],
                **(rows[0] if args.size is not None else {"rows": rows})} for result, pool, rows in reports]
        print(json.dumps(out[0] if len(out) == 1 else out, indent=2))
        return 0
    for result, _, _ in reports:
        print("\n".join(_findings_lines(result)))
    print()
    if len(reports) == 1:
        _print_collective(*reports[0], args.placement)
    else:
        _print_compare_collective(reports, args.placement)
    return 0


def _print_collective(result: Valid, pool: PoolSpec, rows: list[dict[str, Any]], placement: str) -> None:
    first = rows[0]
    print(f"{result.stack}: {first['collective']} on {counted(first['nodes'], 'node')} x {pool.gpus_per_node} {pool.gpu} = "
          f"{first['gpus']} GPUs (pool {pool.name})")
    print(f"  {'size':>7} {'placement':9} {'algorithm':10} {'proto':6} {'time':>11} {'algbw GB/s':>10} "
          f"{'busbw GB/s':>10}  bottleneck")
    for row in rows:
        for kind in PLACEMENTS:
            entry = row["placements"][kind]
            print(f"  {format_size(entry['size_bytes']):>7} {kind:9} {entry['algorithm']:10} {entry['protocol']:6} "
                  f"{_time(entry['time_s']):>11} {entry['algbw_GBps']:10.1f} {entry['busbw_GBps']:10.1f}  "
                  f"{entry['bottleneck']}")
    print("  busbw = algbw x " + _factor_text(first["collective"]) + " (nccl-tests convention)")


def _print_compare_collective(reports: list[tuple[Valid, PoolSpec, list[dict[str, Any]]]], placement: str) -> None:
    first = reports[0][2][0]
    print(f"{first['collective']}, busbw GB/s ({placement} / worst placement) and bottleneck at the largest size")
    header = f"  {'size':>7}" + "".join(f" {result.stack:>24}" for result, _, _ in reports)
    print(header)
    for index in range(len(reports[0][2])):
        line = f"  {format_size(reports[0][2][index]['size_bytes']):>7}"
        for _, _, rows in reports:
            entry = rows[index]["placements"]
            cell = f"{entry[placement]['busbw_GBps']:.1f} / {entry['worst']['busbw_GBps']:.1f}"
            line += f" {cell:>24}"
        print(line)
    for result, pool, rows in reports:
        last = rows[-1]["placements"]
        print(f"  {result.stack}: {rows[-1]['nodes']} x {pool.gpus_per_node} {pool.gpu}; {placement}: "
              f"{last[placement]['algorithm']}, {last[placement]['bottleneck']}; worst: {last['worst']['bottleneck']}")


def _factor_text(collective: str) -> str:
    return {"all_reduce": "2(n-1)/n", "broadcast": "1"}.get(collective, "(n-1)/n")


def _time(seconds: float) -> str:
    if seconds >= 1:
        return f"{seconds:.3f} s"
    if seconds >= 1e-3:
        return f"{seconds * 1e3:.3f} ms"
    return f"{seconds * 1e6:.1f} us"


def _workload(args: argparse.Namespace) -> Workload:
    missing = [flag for flag, value in (("--params", args.params), ("--dp", args.dp),
                                        ("--step-compute-s", args.step_compute_s)) if value is None]
    if missing:
        raise UsageError(f"--step needs {', '.join(missing)} (e.g. --params 70e9 --dp 16 --tp 8 --pp 4 "
                         "--step-compute-s 7)")
    workload = Workload(
        params=args.params, dp=args.dp, tp=args.tp, pp=args.pp, ep=args.ep, experts=args.experts, top_k=args.top_k,
        step_compute_s=args.step_compute_s, layers=args.layers, hidden=args.hidden, seq_len=args.seq_len,
        micro_batch=args.micro_batch, global_batch=_global_batch(args), grad_bytes=args.grad_bytes,
        dp_comm=args.dp_comm,
    )
    problems = workload.problems()
    if problems:
        raise UsageError("; ".join(problems))
    return workload


def _global_batch(args: argparse.Namespace) -> int:
    """--global-batch, or when left out the multiple of dp x micro-batch nearest GLOBAL_BATCH (a
    dp or micro-batch out of range keeps GLOBAL_BATCH, and the workload's check names the flag)."""
    if args.global_batch is not None:
        return int(args.global_batch)
    if 1 <= args.dp <= 10**9 and 1 <= args.micro_batch <= 10**9:
        return default_global_batch(args.dp, args.micro_batch)
    return GLOBAL_BATCH


def _run_step(args: argparse.Namespace, designs: list[Valid]) -> int:
    workload = _workload(args)
    estimates: list[tuple[Valid, dict[str, StepEstimate]]] = []
    for result in designs:
        pool = _pool(result, args.pool)
        if workload.gpus > pool.gpus:
            raise UsageError(f"dp x tp x pp = {workload.gpus} GPUs, but pool {pool.name!r} of {result.stack} has "
                             f"{pool.gpus} ({pool.nodes} nodes x {pool.gpus_per_node} at {pool.path}.nodes)")
        kinds: tuple[Kind, ...] = PLACEMENTS
        estimates.append((result, {kind: step_estimate(result.stack, result.spec, result.topology, workload, pool, kind)
                                   for kind in kinds}))
    if args.format == "json":
        out = [{**by_kind[args.placement].to_dict(), "findings": [f.to_dict() for f in result.findings],
                "placements": {kind: estimate.to_dict() for kind, estimate in by_kind.items()}}
               for result, by_kind in estimates]
        print(json.dumps(out[0] if len(out) == 1 else out, indent=2))
        return 0
    for result, _ in estimates:
        print("\n".join(_findings_lines(result)))
    print()
    if args.global_batch is None and workload.global_batch != GLOBAL_BATCH:
        print(f"global batch {workload.global_batch:,} sequences: the multiple of dp x micro-batch = "
              f"{workload.dp * workload.micro_batch:,} nearest {GLOBAL_BATCH:,} (--global-batch sets it)")
    _print_step([(result.stack, by_kind) for result, by_kind in estimates], args.placement, workload)
    return 0


def _print_step(estimates: list[tuple[str, dict[str, StepEstimate]]], placement: str, workload: Workload) -> None:
    print(f"training step: {workload.params / 1e9:g}B params, dp {workload.dp} x tp {workload.tp} x pp {workload.pp}"
          + (f" x ep {workload.ep} ({workload.experts} experts, top-{workload.top_k})" if workload.ep > 1 else "")
          + f" = {workload.gpus} GPUs, {workload.micro_batches} micro-batches of {workload.micro_batch} x "
          f"{workload.seq_len} tokens, compute {workload.step_compute_s:g} s")
    width = 26
    print(f"  {'(' + placement + ' placement)':34}" + "".join(f"{stack:>{width}}" for stack, _ in estimates))
    names = list(dict.fromkeys(item.name for _, by_kind in estimates for item in by_kind[placement].items))
    for name in names:
        line = f"  {name:34}"
        for _, by_kind in estimates:
            item = next((item for item in by_kind[placement].items if item.name == name), None)
            cell = "-" if item is None else f"{item.time_s:.3f} s ({item.exposed_s:.3f} exp.)"
            line += f"{cell:>{width}}"
        print(line)
    chosen = [by_kind[placement] for _, by_kind in estimates]
    totals = (("communication (total)", [f"{e.communication_s:.3f} s" for e in chosen]),
              ("exposed", [f"{e.exposed_s:.3f} s" for e in chosen]),
              ("step time", [f"{e.step_s:.3f} s" for e in chosen]),
              ("communication share", [f"{e.communication_share:.1%}" for e in chosen]))
    for label, cells in totals:
        print(f"  {label:34}" + "".join(f"{cell:>{width}}" for cell in cells))
    other = "worst" if placement == "packed" else "packed"
    print(f"  {'step time, ' + other + ' placement':34}"
          + "".join(f"{by_kind[other].step_s:.3f} s".rjust(width) for _, by_kind in estimates))
    print("  bottlenecks: " + "; ".join(
        f"{stack}: " + ", ".join(f"{item.name.split()[0]} {item.bottleneck}" for item in by_kind[placement].items)
        for stack, by_kind in estimates))
