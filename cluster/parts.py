"""One design, several Pulumi stacks: the on-prem state of a very large cluster split by pod.

A stack deploys `all` of its design (the default), or one part of it:
- `core`: the core switches, storage, management and out-of-band networks, every node pool's
  host files and the cluster-wide files (scheduler topology, cabling plan, inventory);
- `pod-NNN`: the fabric leaves and spines of pod NNN (a two-tier fabric is one pod), with
  their expected-neighbor files.
Every rendered bundle belongs to exactly one part, so the parts together write the same files
as `all`. Each part validates the *whole* design (a design that fails as a whole deploys no
part), and a pod stack reads the core stack's `design_sha256` and `part` through a Pulumi
StackReference: it writes nothing unless the core stack is up with the very same design.

Pulumi config keys beside `gpu-cluster:cluster` (stack settings, not part of the design):
- `gpu-cluster:part`: `all` | `core` | `pod-NNN`;
- `gpu-cluster:design`: the stack whose `gpu-cluster:cluster` this stack deploys (so that 32
  pod stacks do not carry 32 copies of one design);
- `gpu-cluster:core_stack`: the stack a pod part checks (default: the `design` stack, in this
  organization and project).
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping
from typing import Any

from cluster.findings import Finding, schema
from cluster.naming import number
from cluster.spec import ClusterSpec
from cluster.topology import FABRIC, Topology

ALL = "all"
CORE = "core"
POD = re.compile(r"pod-\d{3,}")
STACK = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,99}")
QUALIFIED_STACK = re.compile(r"(?:[A-Za-z0-9][A-Za-z0-9_.-]{0,99}/){0,2}[A-Za-z0-9][A-Za-z0-9_.-]{0,99}")
SETTINGS = ("part", "design", "core_stack")


def pod_part(pod: int) -> str:
    """0-based pod -> `pod-001`."""
    return f"pod-{number(pod)}"


def names(spec: ClusterSpec, topology: Topology) -> list[str]:
    """The parts a design splits into: `core`, then one per pod; nothing for cloud targets."""
    if spec.is_cloud or topology.fabric_plan is None:
        return []
    return [CORE, *(pod_part(pod) for pod in range(topology.fabric_plan.pods))]


def of_bundle(topology: Topology, bundle: str) -> str:
    """The part of one rendered bundle (named after its device, pool or directory): the files of
    a fabric leaf or spine go with its pod, everything else with the core."""
    data = topology.switch_nodes.get(bundle)
    if data is not None and data["network"] == FABRIC and data["tier"] in ("leaf", "spine"):
        return pod_part(data["pod"] or 0)
    return CORE


PART_KEY = "config.gpu-cluster:part"
CORE_KEY = "config.gpu-cluster:core_stack"


def choose(part: str | None, spec: ClusterSpec, topology: Topology) -> tuple[str, list[Finding]]:
    """`part` checked against the design (None -> `all`), with a SCHEMA finding naming the fix
    when this design has no such part."""
    if part is None or part == ALL:
        return ALL, []
    valid = names(spec, topology)
    if not valid:
        return part, [schema(PART_KEY, f"gpu-cluster:part is {part!r}, but a {spec.target} stack is not split: its "
                                       "resources do not grow with nodes", "remove gpu-cluster:part")]
    if part not in valid:
        shown = ", ".join(valid if len(valid) <= 6 else [*valid[:5], "...", valid[-1]])
        return part, [schema(PART_KEY, f"gpu-cluster:part is {part!r}; this design has the parts all, {shown}",
                             "set one of them")]
    return part, []


def core_stack(part: str, design: str | None, core: str | None, organization: str,
               project: str) -> tuple[str | None, list[Finding]]:
    """The fully qualified stack a pod part checks (None for `all` and `core`), with a SCHEMA
    finding when a pod part names none or names it in a shape Pulumi does not take."""
    if not POD.fullmatch(part):
        return None, []
    reference = core or design
    if reference is None:
        return None, [schema(CORE_KEY, f"gpu-cluster:part is {part!r} but no core stack is named",
                             "set gpu-cluster:design to the stack that holds the design (its part is core), "
                             "or gpu-cluster:core_stack")]
    if not QUALIFIED_STACK.fullmatch(reference):
        return None, [schema(CORE_KEY, f"gpu-cluster:core_stack {reference!r} is not a stack name",
                             "use stack, project/stack or org/project/stack")]
    parts = reference.split("/")
    if len(parts) == 1:
        return f"{organization}/{project}/{reference}", []
    if len(parts) == 2:
        return f"{organization}/{reference}", []
    return reference, []


def design_findings(settings: Mapping[str, Any], spec: ClusterSpec, topology: Topology) -> list[Finding]:
    """What `plan` and the Pulumi program refuse in a stack's part settings once its design is
    known (a part the design does not have, a pod part that names no core stack), as `validate`
    reports it. The settings have passed `check_settings`."""
    part, found = choose(settings.get("part"), spec, topology)
    if found:
        return found
    return core_stack(part, settings.get("design"), settings.get("core_stack"), "organization", "project")[1]


def check_settings(settings: Mapping[str, Any]) -> list[Finding]:
    """A SCHEMA finding at `config.gpu-cluster:<key>` for each part setting of the wrong shape
    (before the design is known)."""
    problems: list[Finding] = []
    for key in SETTINGS:
        value = settings.get(key)
        path = f"config.gpu-cluster:{key}"
        if value is None:
            continue
        if not isinstance(value, str):
            problems.append(schema(path, f"gpu-cluster:{key} is a {type(value).__name__}, not a string", "give a string"))
        elif key == "part" and value not in (ALL, CORE) and not POD.fullmatch(value):
            problems.append(schema(path, f"gpu-cluster:part is {value!r}",
                                   "use all, core or pod-NNN (pod-001 is the first pod)"))
        elif key == "design" and not STACK.fullmatch(value):
            problems.append(schema(path, f"gpu-cluster:design {value!r} is not a stack name",
                                   "name a stack under stacks/ (prod -> stacks/Pulumi.prod.yaml)"))
        elif key == "core_stack" and not QUALIFIED_STACK.fullmatch(value):
            problems.append(schema(path, f"gpu-cluster:core_stack {value!r} is not a stack name",
                                   "use stack, project/stack or org/project/stack"))
    return problems


def design_sha256(cluster: Mapping[str, Any]) -> str:
    """A fingerprint of a design: its `gpu-cluster:cluster` mapping as canonical JSON."""
    canonical = json.dumps(cluster, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def core_mismatch(part: str, core: str, own: str, outputs: Mapping[str, Any]) -> str | None:
    """Why pod part `part` must not deploy against the core stack's `outputs`, or None."""
    theirs_part, theirs = outputs.get("part"), outputs.get("design_sha256")
    if not outputs:  # a stack that exists but was never up (or was destroyed) exports nothing
        return f"{part}: the core stack {core} is not up (it has no outputs): run pulumi up on {core} first, then on the pods"
    if theirs_part != CORE:
        return (f"{part}: the core stack {core} deploys part {theirs_part!r}, not 'core' (set gpu-cluster:part core "
                f"there and run pulumi up on it first)")
    if theirs != own:
        return (f"{part}: the core stack {core} is up with design {str(theirs)[:12]}, this stack has {own[:12]}; "
                f"run pulumi up on {core} first, then on the pods")
    return None
