"""GpuFabric: the GPU-to-GPU network. On premises the fabric switches' configs; on AWS the
EFA subnet and security group; on GCP the RDMA VPC or the GPU VPCs; on Azure the platform's
InfiniBand (nothing to create: it comes with the scale set)."""

from __future__ import annotations

from dataclasses import dataclass

import pulumi

from components.base import ConcernArgs, FabricAttachments, NetworkAttachment
from components.targets import networks


@dataclass(frozen=True, kw_only=True)
class GpuFabricArgs(ConcernArgs):
    """The design, plus the management attachment (its VPC holds the fabric subnet on AWS)."""

    management: NetworkAttachment


class GpuFabric(pulumi.ComponentResource):
    """The GPU fabric of one cluster; `attachments` has one entry per NIC layout in use."""

    attachments: FabricAttachments

    def __init__(self, name: str, args: GpuFabricArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__("gpu-cluster:fabric:GpuFabric", name, None, opts)
        self.attachments = networks(args.spec.target).fabric(self, name, args)
        self.register_outputs({
            "layouts": {layout: list(attachment.subnet_ids) for layout, attachment in self.attachments.layouts.items()},
            "artifacts": sorted(args.artifacts),
        })
