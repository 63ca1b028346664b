"""On-prem node pool: the pool's host files (inventory, NIC and QoS scripts)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pulumi

from components.onprem.network import write_bundles

if TYPE_CHECKING:
    from components.node_pool import GpuNodePoolArgs


def node_pool(parent: pulumi.Resource, name: str, args: GpuNodePoolArgs) -> pulumi.Output[str]:
    """Write the pool's host files; the group id is the bundle's resource id."""
    written = write_bundles(parent, args.artifacts_dir, args.artifacts, args.gate)
    if not written:
        return pulumi.Output.from_input("")
    return pulumi.Output.all(*[resource.id for resource in written]).apply(lambda ids: ",".join(ids))
