"""`plan STACK [--format text|json]`: the resources `pulumi up` would register, offline.

Validates first (exit 1 / 2 as `validate`), then runs the Pulumi program itself (the package's
components/program.py, which a project's __main__.py calls, so plan runs from any directory)
under the SDK's mock runtime and prints the recorded resource tree with counts. Pulumi is
reached only here, through components.offline imported inside run(): cluster/ never imports
pulumi itself, and no other verb loads it (tests/test_layers.py).
"""

from __future__ import annotations

import argparse
import json
from collections import Counter
from collections.abc import Mapping
from typing import Any

from cluster import parts, settings
from cluster.cli import VERBS
from cluster.commands import tell
from cluster.commands.progress import Progress, progress
from cluster.deployment import deployment
from cluster.findings import printable
from cluster.pipeline import Valid, validate
from cluster.report import to_json, to_text
from cluster.words import counted

FORMATS = ("text", "json")
HIDDEN_INPUTS = {"__provider", "tags", "tagSpecifications", "tagsAll", "labels", "hashes"}
MAX_VALUE = 60
MAX_LEAVES = 3
FILES_TYPE = "pulumi-python:dynamic/gpu-cluster:RenderedFiles"


def add_parser(verbs: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    parser = verbs.add_parser("plan", help=VERBS["plan"])
    parser.add_argument("stack", help="stack name (dev -> stacks/Pulumi.dev.yaml) or path")
    parser.add_argument("--format", choices=FORMATS, default="text")
    parser.add_argument("--artifacts-dir", default=None,
                        help="on-prem: where rendered files would go (default build/<stack>, or build/<design> for a "
                             "stack that deploys another stack's design)")
    split = parser.add_mutually_exclusive_group()
    split.add_argument("--part", help="plan one part of the design (core, pod-001, ...) instead of the stack's "
                                      "gpu-cluster:part; a pod part checks this stack as its core")
    split.add_argument("--parts", action="store_true", help="how the design splits into a core and one stack per pod")


def run(args: argparse.Namespace) -> int:
    with progress("plan", args.stack) as stage:
        return _run(args, stage)


def _run(args: argparse.Namespace, stage: Progress) -> int:
    result = validate(args.stack, stage)
    if not isinstance(result, Valid) or not result.ok or result.loaded.data is None:
        print(to_json(result) if args.format == "json" else to_text(result))
        return result.exit_code
    tell(result, findings=False)  # the program logs every finding itself: plan lists them as warnings
    stage("loading the Pulumi SDK")
    import components.offline as offline  # the Pulumi program's offline runner: only this verb loads the SDK

    stack_settings = {key: str(value) for key, value in result.loaded.settings.items()}
    if args.part or args.parts:
        stack_settings["part"] = args.part or settings.ALL
        if not stack_settings.get("design") and not stack_settings.get("core_stack"):
            stack_settings["core_stack"] = result.stack  # the design's own stack is its core
    part, part_findings = parts.choose(stack_settings.get("part"), result.spec, result.topology)
    core, core_findings = settings.core_stack(part, stack_settings.get("design"), stack_settings.get("core_stack"),
                                           offline.ORGANIZATION, offline.PROJECT)
    part_problems = part_findings or core_findings
    for finding in part_problems:
        print(f"{result.stack}: {finding.message} ({finding.path}); {finding.hint}")
    if part_problems:
        return 2
    # Offline there is no state to read: a pod part's core stack is taken to be up with this design.
    sha = settings.design_sha256(result.loaded.data)
    references = {core: {"part": settings.CORE, "design_sha256": sha}} if core else {}
    stage("running the Pulumi program")
    outcome = offline.run(result.stack, None if result.loaded.design else result.loaded.data,
                          artifacts_dir=args.artifacts_dir, program=offline.program(), part_settings=stack_settings,
                          references=references, provider_config=result.loaded.provider_config,
                          registered=lambda count: stage(f"running the Pulumi program: {counted(count, 'resource')}"))
    plan = as_dict(outcome)
    summary = deployment(result.spec)
    if summary is not None:
        plan["deployment"] = {"creates": list(summary.creates), "todo": list(summary.todo)}
    if core:
        plan["assumes"] = [f"the core stack {core} is up as part core with this design ({sha[:12]})"]
    if args.parts:
        plan = split_summary(plan, result.spec, result.topology)
        print(json.dumps(plan, indent=2, default=str) if args.format == "json" else split_text(plan))
    else:
        print(json.dumps(plan, indent=2, sort_keys=False, default=str) if args.format == "json" else as_text(plan))
    return 0 if outcome.ok else 1


def split_summary(plan: Mapping[str, Any], spec: Any, topology: Any) -> dict[str, Any]:
    """The whole design's registrations counted per part: what each stack of the split holds."""
    names = parts.names(spec, topology)
    rows: dict[str, dict[str, Any]] = {name: {"part": name, "file_resources": 0, "files": 0} for name in names}
    components = plan["counts"]["components"]
    for resource in plan["resources"]:
        if resource["type"] == FILES_TYPE:
            row = rows[parts.of_bundle(topology, resource["name"])]
            row["file_resources"] += 1
            row["files"] += len(resource["inputs"].get("files") or [])
    for name, row in rows.items():  # every stack holds the components; a pod also reads its core
        row["resources"] = row["file_resources"] + components + (0 if name == settings.CORE else 1)
    return {"stack": plan["stack"], "ok": plan["ok"], "errors": plan["errors"],
            "all_resources": plan["counts"]["resources"], "parts": list(rows.values())}


def split_text(summary: Mapping[str, Any]) -> str:
    if not summary["parts"]:
        return f"{summary['stack']}: a cloud stack is not split: its resources do not grow with nodes"
    lines = [f"{summary['stack']}: {counted(summary['all_resources'], 'resource')} in one stack, or "
             f"{counted(len(summary['parts']), 'stack')} (gpu-cluster:part):", "",
             f"  {'part':<10} {'resources':>9} {'file resources':>14} {'files':>7}"]
    for row in summary["parts"]:
        lines.append(f"  {row['part']:<10} {row['resources']:>9,} {row['file_resources']:>14,} {row['files']:>7,}")
    lines += ["", "Each stack holds the cluster's components; a pod stack also reads its core stack "
                  "(StackReference) and writes nothing unless the core is up with the same design."]
    lines += [f"  error: {error}" for error in summary["errors"]]
    return "\n".join(lines)


def as_dict(outcome: Any) -> dict[str, Any]:
    """The offline run as plain data: resources in tree order, counts, outputs, errors."""
    names = {outcome.stack_urn: None}
    names.update({registration.urn: registration.name for registration in outcome.resources})
    resources = [
        {
            "type": registration.type,
            "name": registration.name,
            "parent": names.get(registration.parent),
            "component": not registration.custom,
            "urn": registration.urn,
            "inputs": _visible_inputs(registration.inputs),
        }
        for registration in tree_order(outcome.resources, outcome.stack_urn)
    ]
    by_type = Counter(resource["type"] for resource in resources)
    return {
        "stack": outcome.stack,
        "ok": outcome.ok,
        "errors": list(outcome.errors),
        "warnings": list(outcome.warnings),
        "counts": {
            "resources": len(resources),
            "components": sum(1 for resource in resources if resource["component"]),
            "by_type": dict(sorted(by_type.items())),
        },
        "resources": resources,
        "outputs": outcome.outputs,
    }


def tree_order(registrations: list[Any], root: str) -> list[Any]:
    """Depth-first from the stack, children sorted by (type, name)."""
    children: dict[str, list[Any]] = {}
    for registration in registrations:
        children.setdefault(registration.parent, []).append(registration)
    ordered: list[Any] = []

    def visit(urn: str) -> None:
        for registration in sorted(children.get(urn, []), key=lambda item: (item.custom, item.type, item.name)):
            ordered.append(registration)
            visit(registration.urn)

    visit(root)
    return ordered


def _wire_numbers(value: Any) -> Any:
    """The Pulumi wire format carries every number as a float: give whole numbers back as ints."""
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, Mapping):
        return {key: _wire_numbers(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_wire_numbers(item) for item in value]
    return value


def _visible_inputs(inputs: Mapping[str, Any]) -> dict[str, Any]:
    visible = {key: _wire_numbers(value) for key, value in sorted(inputs.items()) if key not in HIDDEN_INPUTS}
    if isinstance(visible.get("files"), dict):  # rendered files: paths, not content
        visible["files"] = sorted(visible["files"])
    return visible


def as_text(plan: Mapping[str, Any]) -> str:
    counts = plan["counts"]
    lines = [f"{plan['stack']}: {counted(counts['resources'], 'resource')} ({counted(counts['components'], 'component')})"]
    for error in plan["errors"]:
        lines.append(f"  error: {error}")
    for warning in plan["warnings"]:
        lines.append(f"  warning: {warning}")
    for assumption in plan.get("assumes", []):
        lines.append(f"  assumes: {assumption}")
    lines.append("")
    depth: dict[str | None, int] = {None: 0}
    for resource in plan["resources"]:
        level = depth.get(resource["parent"], 0)
        depth[resource["name"]] = level + 1
        summary = key_inputs(resource["inputs"])
        lines.append(f"{'  ' * level}{resource['type']}  {resource['name']}" + (f"  [{summary}]" if summary else ""))
    lines.append("")
    lines.append("COUNTS")
    for type_, count in counts["by_type"].items():
        lines.append(f"  {count:4d}  {type_}")
    if plan["outputs"]:
        lines.append("")
        lines.append("OUTPUTS")
        for key, value in plan["outputs"].items():
            lines.append(f"  {key}: {json.dumps(value, sort_keys=True, default=str)}")
    if "deployment" in plan:
        lines += ["", "AFTER pulumi up", *(f"  {line}" for line in plan["deployment"]["creates"])]
        lines += ["", "STILL YOURS", *(f"  {line}" for line in plan["deployment"]["todo"])]
    return "\n".join(lines)


def key_inputs(inputs: Mapping[str, Any]) -> str:
    """A one-line summary: scalars as key=value, lists as counts, NIC lists by type and card."""
    parts = []
    for key, value in inputs.items():
        if key in {"networkInterfaces", "networkInterfaceConfigurations"} and isinstance(value, list):
            parts.append(f"{key}={_nics(value)}")
        elif key == "files" and isinstance(value, list):
            parts.append(f"files={len(value)}" + (f" ({value[0]})" if len(value) == 1 else ""))
        elif isinstance(value, (bool, int, float, str)):
            parts.append(f"{key}={_scalar(value)}")
        elif isinstance(value, list):
            parts.append(f"{key}=[{len(value)}]")
        elif isinstance(value, dict) and isinstance(value.get("name"), str):  # e.g. an Azure sku
            capacity = value.get("capacity")
            parts.append(f"{key}={value['name']}" + (f" x{capacity:g}" if isinstance(capacity, (int, float)) else ""))
        elif isinstance(value, dict):  # small settings blocks: their leaves, dotted
            leaves = _leaves(value, key)
            if len(leaves) <= MAX_LEAVES:
                parts.extend(f"{path}={_scalar(leaf)}" for path, leaf in leaves)
    return ", ".join(parts)


def _scalar(value: object) -> str:
    """One input value as the tree shows it: escaped (a path from --artifacts-dir may hold a newline
    or a terminal escape) and cut at MAX_VALUE characters."""
    text = printable(f"{value:g}" if isinstance(value, float) else str(value))
    return text if len(text) <= MAX_VALUE else text[:MAX_VALUE - 3] + "..."


def _leaves(value: Mapping[str, Any], prefix: str, depth: int = 0) -> list[tuple[str, Any]]:
    """Scalar leaves of a nested mapping as (dotted path, value), two levels deep at most."""
    leaves: list[tuple[str, Any]] = []
    for key, item in sorted(value.items()):
        if isinstance(item, (bool, int, float, str)):
            leaves.append((f"{prefix}.{key}", item))
        elif isinstance(item, Mapping) and depth < 1:
            leaves.extend(_leaves(item, f"{prefix}.{key}", depth + 1))
        else:
            leaves.append((f"{prefix}.{key}", f"[{len(item)}]" if isinstance(item, list) else "{...}"))
    return leaves


def _nics(interfaces: list[Any]) -> str:
    kinds = Counter(str(nic.get("interfaceType") or nic.get("nicType") or "default") for nic in interfaces
                    if isinstance(nic, dict))
    cards = sorted({int(nic["networkCardIndex"]) for nic in interfaces if isinstance(nic, dict)
                    and "networkCardIndex" in nic})
    text = f"{len(interfaces)} (" + ", ".join(f"{kind} x{count}" for kind, count in sorted(kinds.items())) + ")"
    return text + (f" on cards {cards[0]}-{cards[-1]}" if cards else "")
