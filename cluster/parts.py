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

The settings that choose a part (`gpu-cluster:part`, `design`, `core_stack`) are cluster.settings.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from cluster.findings import Finding, schema
from cluster.naming import number
from cluster.settings import ALL, CORE, PART_KEY, core_stack
from cluster.spec import ClusterSpec
from cluster.topology import FABRIC, Topology


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


def design_findings(settings: Mapping[str, Any], spec: ClusterSpec, topology: Topology) -> list[Finding]:
    """What `plan` and the Pulumi program refuse in a stack's part settings once its design is
    known (a part the design does not have, a pod part that names no core stack), as `validate`
    reports it. The settings have passed `check_settings`."""
    part, found = choose(settings.get("part"), spec, topology)
    if found:
        return found
    return core_stack(part, settings.get("design"), settings.get("core_stack"), "organization", "project")[1]


