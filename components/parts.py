"""A pod part's check of its core stack (cluster.parts): read through a StackReference."""

from __future__ import annotations

from typing import Any

import pulumi

from cluster import settings
from components.base import child


class CoreStackMismatch(pulumi.RunError):
    """The core stack is not up with this design: the pod part writes nothing."""


def core_gate(parent: pulumi.Resource, part: str, core_stack: str, design_sha256: str) -> pulumi.Output[str]:
    """The design fingerprint, once the core stack's outputs show the same design deployed as
    part `core`; an error otherwise, which fails every file resource that takes it."""
    reference = pulumi.StackReference(f"{part}-core", stack_name=core_stack, opts=child(parent))

    def same(outputs: dict[str, Any] | None) -> str:
        problem = settings.core_mismatch(part, core_stack, design_sha256, outputs or {})
        if problem is not None:
            raise CoreStackMismatch(problem)
        return design_sha256

    return reference.outputs.apply(same)
