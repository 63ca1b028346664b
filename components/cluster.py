"""GpuCluster: the whole cluster, composed of one ManagementNetwork, StorageNetwork and
GpuFabric and one GpuNodePool per stack-file pool. Child names come from the stack file
(`<cluster>-management`, `<cluster>-<pool>`), so adding a pool never renames anything."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TypedDict

import pulumi

from cluster import clouds, parts, settings
from cluster.resolve import access_of
from cluster.spec import ClusterSpec
from cluster.topology import Topology
from components.base import FabricAttachments, NetworkAttachment, child
from components.fabric import GpuFabric, GpuFabricArgs
from components.management import ManagementNetwork, ManagementNetworkArgs
from components.node_pool import GpuNodePool, GpuNodePoolArgs
from components.renames import aliases
from components.storage import StorageNetwork, StorageNetworkArgs
from components.targets import networks


@dataclass(frozen=True)
class GpuClusterArgs:
    """The validated design and, on premises, the directory rendered files go to."""

    spec: ClusterSpec
    topology: Topology
    artifacts_dir: str = "build"
    # The stack's gpu-cluster:cluster as validated, as JSON: recorded in the stack (input and
    # output `validated_cluster`) so the CrossGuard stack policy can re-run the validator on it.
    validated_cluster: str = ""
    # Which part of the design this stack deploys (cluster.parts), and for a pod part the
    # core stack it checks (fully qualified) and the design's fingerprint.
    part: str = settings.ALL
    core_stack: str | None = None
    design_sha256: str = ""


class GpuCluster(pulumi.ComponentResource):
    """One GPU cluster. `node_group_ids` maps pool name -> the provider's group id."""

    management: ManagementNetwork
    storage: StorageNetwork
    fabric: GpuFabric
    node_pools: dict[str, GpuNodePool]
    node_group_ids: dict[str, pulumi.Output[str]]
    network: dict[str, object]
    access: dict[str, object]
    # the objects its managed Kubernetes needs for the node pools' additional networks, as YAML to
    # apply (GKE's Network objects), else None
    kubernetes_networks: pulumi.Output[str] | None

    def __init__(self, name: str, args: GpuClusterArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        recorded = {"validated_cluster": args.validated_cluster} if args.validated_cluster else None
        spec, topology, directory = args.spec, args.topology, args.artifacts_dir
        if spec.is_cloud and (spec.previous_names or any(pool.previous_names for pool in spec.pools)):
            # Renamed: every resource keeps its URN under the earlier names as an alias.
            renames = aliases(name, spec.previous_names, {pool.name: pool.previous_names for pool in spec.pools})
            opts = pulumi.ResourceOptions.merge(opts, pulumi.ResourceOptions(transformations=[renames]))
        super().__init__("gpu-cluster:cluster:GpuCluster", name, recorded, opts)
        owned = _owned_artifacts(spec, topology, args.part)
        gate = None
        if args.core_stack is not None:
            from components.parts import core_gate

            gate = core_gate(self, args.part, args.core_stack, args.design_sha256)
        common: _Common = {"spec": spec, "topology": topology, "artifacts_dir": directory, "gate": gate}
        # Clouds: one explicit provider built from `cloud` (region, zone, project, subscription), so
        # the stack's provider settings (region, project, location) cannot send the resources
        # elsewhere; every resource of the cluster inherits it through its parent.
        provider = networks(spec.target).provider(self, f"{name}-{spec.target}", spec)
        self.management = ManagementNetwork(
            f"{name}-management", ManagementNetworkArgs(**common, artifacts=owned.get("management", {})),
            child(self, provider=provider))
        management = self.management.attachment
        self.storage = StorageNetwork(
            f"{name}-storage", StorageNetworkArgs(**common, artifacts=owned.get("storage", {}), management=management),
            child(self, provider=provider))
        self.fabric = GpuFabric(
            f"{name}-fabric", GpuFabricArgs(**common, artifacts=owned.get("fabric", {}), management=management),
            child(self, provider=provider))
        self.node_pools = {
            pool.name: GpuNodePool(
                f"{name}-{pool.name}",
                GpuNodePoolArgs(**common, artifacts=owned.get(f"pool:{pool.name}", {}), pool=pool,
                                management=management, storage=self.storage.attachment,
                                fabric=self.fabric.attachments),
                child(self, provider=provider))
            for pool in spec.pools
        }
        if owned.get("cluster"):
            from components.onprem.network import write_bundles

            write_bundles(self, directory, owned["cluster"], gate)
        self.node_group_ids = {pool: component.group_id for pool, component in self.node_pools.items()}
        self.network = network_outputs(spec, self.management.attachment, self.storage.attachment,
                                       self.fabric.attachments)
        self.access = access_outputs(spec, self.management.attachment)
        self.kubernetes_networks = networks(spec.target).kubernetes_networks(spec, self.storage.attachment,
                                                                             self.fabric.attachments)
        self.register_outputs({"node_group_ids": self.node_group_ids, "target": spec.target, "network": self.network,
                               "access": self.access, **(recorded or {})})


def network_outputs(spec: ClusterSpec, management: NetworkAttachment, storage: NetworkAttachment,
                    fabric: FabricAttachments) -> dict[str, object]:
    """The ids a user needs next (login or head nodes, file systems, peering): the VPC / VNet and
    its resource group, each network's subnets and security groups. Clouds only."""
    if not spec.is_cloud:
        return {}
    return {
        "vpc": management.network_id,
        "resource_group": management.scope,
        "subnets": {"management": list(management.subnet_ids), "storage": list(storage.subnet_ids),
                    "fabric": {layout: list(attachment.subnet_ids) for layout, attachment in fabric.layouts.items()}},
        "filesystem": ({"id": storage.filesystem_id, "source": storage.filesystem,
                        "mount": spec.filesystem.mount, "capacity_gib": spec.filesystem.capacity_gib}
                       if spec.filesystem is not None else None),
        "home": ({"id": storage.home_id, "source": storage.home, "mount": spec.home.mount,
                  "capacity_gib": spec.home.capacity_gib, "options": spec.home.options}
                 if spec.home is not None else None),
        "kubernetes_cluster": management.kubernetes_cluster,  # scheduler.create: the cluster the stack made
        "security_groups": {"management": list(management.security_group_ids),
                            "storage": list(storage.security_group_ids),
                            "fabric": list(dict.fromkeys(group for attachment in fabric.layouts.values()
                                                         for group in attachment.security_group_ids))},
    }


def access_outputs(spec: ClusterSpec, management: NetworkAttachment) -> dict[str, object]:
    """The way in the stack created (cloud.access) and what to reach it with."""
    if not spec.is_cloud or spec.cloud is None:
        return {}
    cloud = clouds.cloud(spec.target)
    if spec.kubernetes and cloud.kubernetes_access is not None:  # the managed cluster's API server is the way in
        return {"method": "kubectl", "command": cloud.kubernetes_access.format(
            resource_group=spec.scheduler.resource_group, cluster=spec.scheduler.cluster)}
    method = access_of(spec.cloud, spec.target)
    found: dict[str, object] = {"method": method, "command": {**cloud.access_commands, "none": NO_ACCESS}.get(method, "")}
    if management.instance_profile is not None:
        found["instance_profile"] = management.instance_profile
    if management.access_id is not None:
        found["bastion" if method == "bastion" else "firewall_rule"] = management.access_id
    if management.scope is not None:  # the resource group the way in is in
        found["resource_group"] = management.scope
    return found


# How to use access none (docs/guides/cloud.md, "Reaching a node"); each cloud's CLOUD has its own ways in.
NO_ACCESS = "ssh over your own VPN or peering, from cloud.ssh_cidrs"


class _Common(TypedDict):
    """The ConcernArgs fields every concern component of one cluster shares."""

    spec: ClusterSpec
    topology: Topology
    artifacts_dir: str
    gate: pulumi.Output[str] | None


def _owned_artifacts(spec: ClusterSpec, topology: Topology, part: str) -> Mapping[str, Mapping[str, Mapping[str, str]]]:
    """On premises: rendered files by owning component and bundle, only the bundles of `part`
    (cluster.parts) when the stack deploys one; clouds render nothing."""
    if spec.target != "onprem":
        return {}
    from components.onprem import artifacts  # the renderers: only on premises

    owned = artifacts.split(artifacts.render(spec, topology, part), topology)
    if part == settings.ALL:
        return owned
    return {component: {bundle: files for bundle, files in bundles.items() if parts.of_bundle(topology, bundle) == part}
            for component, bundles in owned.items()}
