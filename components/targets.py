"""Each target's implementation of the concerns, imported only when that target is used.

A target is a package (`onprem`, `aws`, `gcp`, `azure`) with a `network` module and a
`node_pool` module; mypy checks each of them against the protocols here, so a target that
misses a concern or takes other arguments fails the type check, not a deployment.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

import pulumi

if TYPE_CHECKING:
    from cluster.spec import ClusterSpec
    from components.base import FabricAttachments, NetworkAttachment
    from components.fabric import GpuFabricArgs
    from components.management import ManagementNetworkArgs
    from components.node_pool import GpuNodePoolArgs
    from components.storage import StorageNetworkArgs


class Networks(Protocol):
    """A target's `network` module: the cluster's provider, and the management, storage and GPU
    networks of one cluster."""

    def provider(self, parent: pulumi.Resource, name: str, spec: ClusterSpec) -> pulumi.ProviderResource | None: ...

    def management(self, parent: pulumi.Resource, name: str, args: ManagementNetworkArgs) -> NetworkAttachment: ...

    def storage(self, parent: pulumi.Resource, name: str, args: StorageNetworkArgs) -> NetworkAttachment: ...

    def fabric(self, parent: pulumi.Resource, name: str, args: GpuFabricArgs) -> FabricAttachments: ...


class NodePools(Protocol):
    """A target's `node_pool` module: one pool's nodes; returns the provider's group id."""

    def node_pool(self, parent: pulumi.Resource, name: str, args: GpuNodePoolArgs) -> pulumi.Output[str]: ...


def networks(target: str) -> Networks:
    """The `network` module of `target`."""
    if target == "onprem":
        from components.onprem import network as onprem

        return onprem
    if target == "aws":
        from components.aws import network as aws

        return aws
    if target == "gcp":
        from components.gcp import network as gcp

        return gcp
    if target == "azure":
        from components.azure import network as azure

        return azure
    raise ValueError(f"unknown target {target!r}")


def node_pools(target: str) -> NodePools:
    """The `node_pool` module of `target`."""
    if target == "onprem":
        from components.onprem import node_pool as onprem

        return onprem
    if target == "aws":
        from components.aws import node_pool as aws

        return aws
    if target == "gcp":
        from components.gcp import node_pool as gcp

        return gcp
    if target == "azure":
        from components.azure import node_pool as azure

        return azure
    raise ValueError(f"unknown target {target!r}")
