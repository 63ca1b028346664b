"""StorageNetwork: the network that carries storage traffic, apart from the GPU fabric."""

from __future__ import annotations

from dataclasses import dataclass

import pulumi

from components.base import ConcernArgs, NetworkAttachment
from components.targets import networks


@dataclass(frozen=True, kw_only=True)
class StorageNetworkArgs(ConcernArgs):
    """The design, plus the management attachment (its VPC / VNet holds the storage subnet)."""

    management: NetworkAttachment


class StorageNetwork(pulumi.ComponentResource):
    """Storage network of one cluster; `attachment` is what node pools plug into."""

    attachment: NetworkAttachment

    def __init__(self, name: str, args: StorageNetworkArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__("gpu-cluster:storage:StorageNetwork", name, None, opts)
        self.attachment = networks(args.spec.target).storage(self, name, args)
        self.register_outputs({
            "subnet_ids": list(self.attachment.subnet_ids),
            "security_group_ids": list(self.attachment.security_group_ids),
            "artifacts": sorted(args.artifacts),
        })
