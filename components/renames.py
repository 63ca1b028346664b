"""Renaming a cluster or a pool renames its resources in place instead of replacing them.

Every resource of a cluster is named after the cluster, and a pool's after the pool
(`<cluster>-<pool>-group`), so a new name is a new URN, and Pulumi would delete the old GPU group
and create a new one. With `previous_names` in the stack file, every resource gets an alias: the
full URN it had under each earlier name, cluster and pool names substituted (Pulumi "Aliases":
a resource whose URN changed keeps its state and physical resource). The aliases are exact URNs,
computed from the parent's URN (the type chain does not change with a name), so they do not rely
on how an engine derives children's aliases from a parent's.
"""

from __future__ import annotations

import functools
import itertools
from collections.abc import Mapping, Sequence

import pulumi

STACK_TYPE = "pulumi:pulumi:Stack"


def old_names(name: str, cluster: str, cluster_before: Sequence[str], pool: str | None,
              pool_before: Sequence[str]) -> list[str]:
    """The names a resource called `name` had: its cluster prefix replaced by each earlier cluster
    name, and within a pool (`pool`, the resource's own or its ancestor's) the pool part by each
    earlier pool name; every combination but today's."""
    if name != cluster and not name.startswith(f"{cluster}-"):
        return []
    rest = name[len(cluster):]
    pool_part = f"-{pool}" if pool is not None else None
    rests = [rest]
    if pool_part is not None and (rest == pool_part or rest.startswith(f"{pool_part}-")):
        rests += [f"-{old}{rest[len(pool_part):]}" for old in pool_before]
    names = [f"{prefix}{tail}" for prefix, tail in itertools.product([cluster, *cluster_before], rests)]
    return [candidate for candidate in dict.fromkeys(names) if candidate != name]


def _pool_of(resource: pulumi.Resource, parent: pulumi.Resource | None) -> str | None:
    """The pool a resource belongs to: its own name if it is a GpuNodePool, else its nearest
    GpuNodePool ancestor's (the pool's name is recorded on the component before it registers)."""
    for candidate in (resource, parent):
        while candidate is not None:
            pool = getattr(candidate, "pool_name", None)
            if isinstance(pool, str):
                return pool
            candidate = getattr(candidate, "_parent_of_renames", None)
    return None


def aliases(cluster: str, cluster_before: Sequence[str], pools_before: Mapping[str, Sequence[str]]
            ) -> pulumi.ResourceTransformation:
    """A transformation (set on the GpuCluster, inherited by every descendant) that adds, to each
    resource, its URN under every earlier cluster and pool name."""
    stack, project = pulumi.get_stack(), pulumi.get_project()

    def transformation(args: pulumi.ResourceTransformationArgs) -> pulumi.ResourceTransformationResult | None:
        parent = args.opts.parent
        # Remember the parent, so a descendant can find its pool (Resource keeps no public link).
        object.__setattr__(args.resource, "_parent_of_renames", parent)
        pool = _pool_of(args.resource, parent)
        names = old_names(args.name, cluster, cluster_before, pool, pools_before.get(pool or "", ()))
        if not names:
            return None
        type_ = args.type_

        def urn_under(parent_urn: str | None, old: str) -> str:
            chain = type_ if parent_urn is None else f"{parent_urn.split('::')[2]}${type_}"
            return f"urn:pulumi:{stack}::{project}::{chain}::{old}"

        def under(parent_urn: str, old: str) -> str:
            return urn_under(parent_urn, old)

        extra: list[pulumi.Input[str | pulumi.Alias]] = []
        for old in names:
            if parent is None or parent.urn is None or getattr(parent, "_type", "") == STACK_TYPE:
                extra.append(urn_under(None, old))
            else:
                extra.append(parent.urn.apply(functools.partial(under, old=old)))
        opts = pulumi.ResourceOptions.merge(args.opts, pulumi.ResourceOptions(aliases=extra))
        return pulumi.ResourceTransformationResult(args.props, opts)

    return transformation
