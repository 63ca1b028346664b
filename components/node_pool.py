"""GpuNodePool: one pool of identical GPU nodes. Clouds: a group (ASG, MIG, scale set) sized
by `nodes`, so the resource count never grows with the node count; on premises the pool's
host files."""

from __future__ import annotations

from dataclasses import dataclass

import pulumi

from cluster.spec import PoolSpec
from components.base import ConcernArgs, FabricAttachments, NetworkAttachment
from components.targets import node_pools


@dataclass(frozen=True, kw_only=True)
class GpuNodePoolArgs(ConcernArgs):
    """The design, the pool, and the networks its nodes attach to."""

    pool: PoolSpec
    management: NetworkAttachment
    storage: NetworkAttachment
    fabric: FabricAttachments


class GpuNodePool(pulumi.ComponentResource):
    """One node pool; `group_id` is the provider's node-group id (or the host files on premises)."""

    group_id: pulumi.Output[str]
    pool_name: str

    def __init__(self, name: str, args: GpuNodePoolArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        self.pool_name = args.pool.name  # before registering: a rename's aliases look it up (components.renames)
        super().__init__("gpu-cluster:node_pool:GpuNodePool", name, None, opts)
        self.group_id = pulumi.Output.from_input(node_pools(args.spec.target).node_pool(self, name, args))
        self.register_outputs({"group_id": self.group_id, "nodes": args.pool.nodes, "artifacts": sorted(args.artifacts)})
