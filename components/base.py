"""What the concern components hand to each other: typed, target-neutral attachments."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

import pulumi

from cluster.spec import ClusterSpec
from cluster.topology import Topology


@dataclass(frozen=True)
class NetworkAttachment:
    """Where a node pool plugs into one network.

    `subnet_ids` are in NIC order (GCP's RDMA VPC: one subnet per GPU NIC). `network_id` is the
    VPC id on AWS and the VNet name on Azure; `scope` the Azure resource group name.
    """

    network: str  # management | storage | fabric
    subnet_ids: tuple[pulumi.Output[str], ...] = ()
    security_group_ids: tuple[pulumi.Output[str], ...] = ()
    network_id: pulumi.Output[str] | None = None
    scope: pulumi.Output[str] | None = None
    # The way out that every subnet created for the cluster joins: AWS the private route table
    # (its default route is the NAT gateway), Azure the NAT gateway. And on AWS the nodes'
    # instance profile (Session Manager access).
    egress_id: pulumi.Output[str] | None = None
    instance_profile: pulumi.Output[str] | None = None
    # The way in the stack created: Azure's Bastion host, GCP's IAP firewall rule (names).
    access_id: pulumi.Output[str] | None = None
    # The nodes' identity: GCP's service account email, Azure's user-assigned identity id (AWS:
    # instance_profile).
    identity: pulumi.Output[str] | None = None
    # AWS: the nodes' IAM role (ARN), which an EKS managed node group takes instead of a profile.
    node_role: pulumi.Output[str] | None = None
    # scheduler.create: the managed Kubernetes cluster the stack created (its name), which node pools join.
    kubernetes_cluster: pulumi.Output[str] | None = None
    # AWS: the security group EKS made for the cluster it created (its nodes carry it to reach the control plane).
    kubernetes_security_group: pulumi.Output[str] | None = None
    # The shared file system's Lustre mount source (`<server>@tcp:/<fs>`) and its id (storage).
    filesystem: pulumi.Output[str] | None = None
    filesystem_id: pulumi.Output[str] | None = None
    # The /home file system's NFS mount source (`<server>:/<export>`) and its id (storage).
    home: pulumi.Output[str] | None = None
    home_id: pulumi.Output[str] | None = None

    def boot_script(self, spec: ClusterSpec) -> pulumi.Output[str] | None:
        """The node boot script that mounts the shared file system and /home, when there is either."""
        lustre = self.filesystem if spec.filesystem is not None else None
        home = self.home if spec.home is not None else None
        if lustre is None and home is None:
            return None
        from cluster.filesystems import boot_script

        fs, home_plan = spec.filesystem, spec.home

        def script(sources: list[str]) -> str:
            found = iter(sources)
            return boot_script((next(found), fs.mount) if lustre is not None and fs is not None else None,
                               (next(found), home_plan.options, home_plan.mount)
                               if home is not None and home_plan is not None else None)

        return pulumi.Output.all(*[source for source in (lustre, home) if source is not None]).apply(script)
    # Zonal networks per zone the pools use (AWS: the fabric subnet of each zone; GCP: the RDMA
    # VPC's subnets of each zone's RoCE profile), when pools sit in more than one zone. A pool in
    # the cluster's own zone uses `subnet_ids`.
    zones: Mapping[str, tuple[pulumi.Output[str], ...]] = field(default_factory=dict)

    def subnets_in(self, zone: str | None) -> tuple[pulumi.Output[str], ...]:
        """The subnets of `zone` (the cluster's zone: `subnet_ids`)."""
        return self.zones.get(zone, self.subnet_ids) if zone is not None else self.subnet_ids


@dataclass(frozen=True)
class FabricAttachments:
    """The GPU fabric as node pools see it: one attachment per layout (efa, rdma-vpc, multi-vpc)."""

    layouts: dict[str, NetworkAttachment] = field(default_factory=dict)


def child(parent: pulumi.Resource, depends_on: list[pulumi.Resource] | None = None,
          provider: pulumi.ProviderResource | None = None) -> pulumi.ResourceOptions:
    """Options for a child of `parent` (every child gets parent=self). `provider`: the cluster's
    explicit provider, which the child's own children inherit through their parent."""
    return pulumi.ResourceOptions(parent=parent, depends_on=depends_on,
                                  providers=[provider] if provider is not None else None)


@dataclass(frozen=True, kw_only=True)
class ConcernArgs:
    """What every concern component gets: the validated design, and on premises the rendered
    files it owns ({bundle: {relative path: content}}) and where they go."""

    spec: ClusterSpec
    topology: Topology
    artifacts_dir: str = ""
    artifacts: Mapping[str, Mapping[str, str]] = field(default_factory=dict)
    # A pod part's check of its core stack (components.parts.core_gate): every file resource
    # takes it as an input, so none is written unless it resolves. None when not split by pod.
    gate: pulumi.Output[str] | None = None
