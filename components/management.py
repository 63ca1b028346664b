"""ManagementNetwork: the network nodes are reached and managed over (and on premises the
out-of-band network). Clouds: the VPC / VNet, the management subnet and its firewall."""

from __future__ import annotations

from dataclasses import dataclass

import pulumi

from components.base import ConcernArgs, NetworkAttachment
from components.targets import networks


@dataclass(frozen=True, kw_only=True)
class ManagementNetworkArgs(ConcernArgs):
    """The design; SSH sources come from cloud.ssh_cidrs."""


class ManagementNetwork(pulumi.ComponentResource):
    """Management network of one cluster; `attachment` is what node pools plug into."""

    attachment: NetworkAttachment

    def __init__(self, name: str, args: ManagementNetworkArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__("gpu-cluster:management:ManagementNetwork", name, None, opts)
        self.attachment = networks(args.spec.target).management(self, name, args)
        self.register_outputs({
            "subnet_ids": list(self.attachment.subnet_ids),
            "security_group_ids": list(self.attachment.security_group_ids),
            "artifacts": sorted(args.artifacts),
        })
