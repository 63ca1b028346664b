"""Each target's implementation of the concerns, imported only when that target is used.

A target is a package, `components/<target>/`, with a `network` module and a `node_pool` module,
imported here by the target's name. Each package's `__init__.py` binds its two modules to the
protocols here for mypy, so a target that misses a concern or takes other arguments fails the type
check, not a deployment.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Protocol, cast

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

    def kubernetes_networks(self, spec: ClusterSpec, storage: NetworkAttachment, fabric: FabricAttachments
                            ) -> pulumi.Output[str] | None: ...


class NodePools(Protocol):
    """A target's `node_pool` module: one pool's nodes; returns the provider's group id."""

    def node_pool(self, parent: pulumi.Resource, name: str, args: GpuNodePoolArgs) -> pulumi.Output[str]: ...


def _module(target: str, concern: str) -> object:
    """`components.<target>.<concern>`, imported now; a target with no folder is a defect of the
    caller (the resolver checks `target`)."""
    try:
        return importlib.import_module(f"components.{target}.{concern}")
    except ModuleNotFoundError as error:
        if error.name in (f"components.{target}", f"components.{target}.{concern}"):
            raise ValueError(f"unknown target {target!r}") from None
        raise


def networks(target: str) -> Networks:
    """The `network` module of `target` (its folder checks it against `Networks`)."""
    return cast("Networks", _module(target, "network"))


def node_pools(target: str) -> NodePools:
    """The `node_pool` module of `target` (its folder checks it against `NodePools`)."""
    return cast("NodePools", _module(target, "node_pool"))
