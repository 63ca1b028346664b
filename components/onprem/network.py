"""On-prem networks: each owned bundle of rendered files becomes one RenderedFiles resource."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

import pulumi

from components.base import ConcernArgs, FabricAttachments, NetworkAttachment, child
from components.onprem.files import RenderedFiles

if TYPE_CHECKING:
    from cluster.spec import ClusterSpec
    from components.fabric import GpuFabricArgs
    from components.management import ManagementNetworkArgs
    from components.storage import StorageNetworkArgs


def write_bundles(parent: pulumi.Resource, directory: str, bundles: Mapping[str, Mapping[str, str]],
                  gate: pulumi.Output[str] | None = None) -> list[RenderedFiles]:
    """One RenderedFiles child of `parent` per bundle, named after the bundle (a device or pool)."""
    return [RenderedFiles(bundle, directory, bundles[bundle], child(parent), gate) for bundle in sorted(bundles)]


def _write(parent: pulumi.Resource, args: ConcernArgs) -> None:
    write_bundles(parent, args.artifacts_dir, args.artifacts, args.gate)


def provider(parent: pulumi.Resource, name: str, spec: ClusterSpec) -> pulumi.ProviderResource | None:
    """No cloud provider: the files' dynamic provider comes with the resources."""
    return None


def management(parent: pulumi.Resource, name: str, args: ManagementNetworkArgs) -> NetworkAttachment:
    """Management and out-of-band switch files."""
    _write(parent, args)
    return NetworkAttachment("management")


def storage(parent: pulumi.Resource, name: str, args: StorageNetworkArgs) -> NetworkAttachment:
    """Storage switch files."""
    _write(parent, args)
    return NetworkAttachment("storage")


def fabric(parent: pulumi.Resource, name: str, args: GpuFabricArgs) -> FabricAttachments:
    """GPU fabric switch files (leaves, spines, cores)."""
    _write(parent, args)
    return FabricAttachments()


def kubernetes_networks(spec: ClusterSpec, storage: NetworkAttachment, fabric: FabricAttachments
                        ) -> pulumi.Output[str] | None:
    """No objects to apply: no managed Kubernetes on premises."""
    return None
