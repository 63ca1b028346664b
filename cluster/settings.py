"""A stack's settings beside its design (Pulumi config keys next to `gpu-cluster:cluster`), for one
design deployed by several stacks (cluster.parts splits the design itself):
- `gpu-cluster:part`: `all` | `core` | `pod-NNN`;
- `gpu-cluster:design`: the stack whose `gpu-cluster:cluster` this stack deploys (so that 32
  pod stacks do not carry 32 copies of one design);
- `gpu-cluster:core_stack`: the stack a pod part checks (default: the `design` stack, in this
  organization and project).
Here: their names and shapes, the fingerprint of a design, and what a pod stack checks of its
core stack's outputs; nothing needs the design's graph.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping
from typing import Any

from cluster.findings import Finding, schema

ALL = "all"
CORE = "core"
POD = re.compile(r"pod-\d{3,}")
STACK = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,99}")
QUALIFIED_STACK = re.compile(r"(?:[A-Za-z0-9][A-Za-z0-9_.-]{0,99}/){0,2}[A-Za-z0-9][A-Za-z0-9_.-]{0,99}")
SETTINGS = ("part", "design", "core_stack")
PART_KEY = "config.gpu-cluster:part"
CORE_KEY = "config.gpu-cluster:core_stack"


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
