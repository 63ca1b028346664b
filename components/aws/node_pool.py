"""AWS node pool: a cluster placement group (only without a reservation: see `reserved`), a
launch template whose interfaces follow the instance's network cards, and an auto scaling group
of `nodes` instances.

Interface layout (AWS EC2 guide "Maximize network bandwidth ... multiple network cards",
current wording, FACTS.md 1.1): the primary ENA (`interface`) on card 0 device 0; an
`efa-only` on card 0 device 1 when card 0 supports EFA; `efa-only` at device 0 on every
other card. EFA-only interfaces take no IP, so 32 of them do not exhaust a subnet.
"""

from __future__ import annotations

import base64
from collections.abc import Sequence
from typing import TYPE_CHECKING

import pulumi
import pulumi_aws as aws

from cluster import scheduler as k8s
from cluster.catalog import Instance, load_catalog
from cluster.spec import PoolCapacity
from components.base import child

if TYPE_CHECKING:
    from components.node_pool import GpuNodePoolArgs



def network_interfaces(instance: Instance, subnet: pulumi.Input[str] | None, primary_groups: Sequence[pulumi.Input[str]],
                       fabric_groups: Sequence[pulumi.Input[str]]) -> list[aws.ec2.LaunchTemplateNetworkInterfaceArgsDict]:
    """The launch template's interfaces for `instance`, one EFA per EFA-capable card, all in
    `subnet` (the auto scaling group's; None for an EKS node group, whose template may not name a
    subnet). The two flags are strings: the provider takes them as three-state booleans ("true",
    "false" or unset)."""
    interfaces: list[aws.ec2.LaunchTemplateNetworkInterfaceArgsDict] = [{
        "network_card_index": 0, "device_index": 0, "interface_type": "interface",
        "security_groups": primary_groups,
        "associate_public_ip_address": "false", "delete_on_termination": "true",
    }]
    efa_cards = [(0, 1)] if instance.efa_on_card0 else []
    efa_cards += [(card, 0) for card in range(1, instance.network_cards)]
    for card, device in efa_cards:
        interfaces.append({
            "network_card_index": card, "device_index": device, "interface_type": "efa-only",
            "security_groups": fabric_groups, "delete_on_termination": "true",
        })
    if subnet is not None:
        for interface in interfaces:
            interface["subnet_id"] = subnet
    return interfaces


def _market(capacity: PoolCapacity, eks: bool) -> aws.ec2.LaunchTemplateInstanceMarketOptionsArgsDict | None:
    """The launch template's market options: a capacity block or spot; none on demand. An EKS node
    group's template may not request Spot (its capacity_type does)."""
    markets = ("capacity-block",) if eks else ("capacity-block", "spot")
    return {"market_type": capacity.market} if capacity.market in markets else None


def _reservation(capacity: PoolCapacity) -> aws.ec2.LaunchTemplateCapacityReservationSpecificationArgsDict | None:
    """The launch template's target: the pool's capacity block or ODCR id."""
    if not capacity.reservation:
        return None
    return {"capacity_reservation_target": {"capacity_reservation_id": capacity.reservation}}


# The default image's root device (Ubuntu AMIs boot from /dev/sda1): encrypted with the account's
# default EBS key, 200 GiB of gp3 for drivers, containers and checkpoints.
ROOT_DEVICE = "/dev/sda1"


def _root_volume(capacity: PoolCapacity) -> list[aws.ec2.LaunchTemplateBlockDeviceMappingArgsDict] | None:
    """An encrypted root volume for the default (Ubuntu) image. A custom image's root device name
    is its own, so its encryption is the AMI's snapshot's or the account's EBS default (the plan
    says so)."""
    if not capacity.default_image:
        return None
    return [{"device_name": ROOT_DEVICE, "ebs": {"encrypted": "true", "volume_type": "gp3", "volume_size": 200,
                                                 "delete_on_termination": "true"}}]


def _user_data(args: GpuNodePoolArgs) -> pulumi.Output[str] | None:
    """The boot script (base64, as a launch template takes it) that mounts the shared file system.
    An EKS node group merges it with its own bootstrap, which takes only MIME multi-part user data
    (Amazon EKS User Guide, "Customize managed nodes with launch templates", user data)."""
    script = args.storage.boot_script(args.spec)
    if script is None:
        return None
    eks = args.spec.scheduler.kind == "eks"
    return script.apply(lambda text: base64.b64encode((mime_multipart(text) if eks else text).encode()).decode())


MIME_BOUNDARY = "==gpu-cluster=="


def mime_multipart(script: str) -> str:
    """`script` as the one part of a MIME multi-part document (cloud-init runs a text/x-shellscript part)."""
    return (f'MIME-Version: 1.0\nContent-Type: multipart/mixed; boundary="{MIME_BOUNDARY}"\n\n'
            f'--{MIME_BOUNDARY}\nContent-Type: text/x-shellscript; charset="us-ascii"\n\n{script}\n--{MIME_BOUNDARY}--\n')


def reserved(capacity: PoolCapacity) -> bool:
    """Capacity from a Capacity Block or a targeted ODCR: then no new cluster placement group.

    The reservation's capacity is not in a group made for the pool, so launches fail for
    capacity while the reservation has room. AWS ParallelCluster refuses the combination
    (aws/aws-parallelcluster cli/src/pcluster/validators/ec2_validators.py,
    PlacementGroupCapacityTypeValidator: "When using a capacity block reservation, a placement
    group constraint should not be set", and PlacementGroupCapacityReservationValidator for an
    open or targeted ODCR with an unrelated placement group; cluster_validators.py
    EfaPlacementGroupValidator: "Capacity Blocks do not require the configuration of a
    Placement Group"; commit 451cc5320d5d8a9318075990ead7f76f74372f85). An ODCR that was itself made in a cluster
    placement group needs that existing group named instead, which the stack file does not
    offer yet.
    """
    return capacity.reserved


def node_pool(parent: pulumi.Resource, name: str, args: GpuNodePoolArgs) -> pulumi.Output[str]:
    """Placement group, launch template, and an auto scaling group (scheduler none) or an EKS managed
    node group on the template (scheduler eks); returns the group's name or the node group's id."""
    spec, pool, capacity = args.spec, args.pool, args.pool.capacity
    assert pool.instance_type is not None and spec.cloud is not None and capacity is not None
    instance = load_catalog().instance("aws", pool.instance_type)
    assert instance is not None
    eks = spec.scheduler.kind == "eks"
    efa = args.fabric.layouts["efa"]
    subnet = efa.subnets_in(capacity.zone)[0]  # the pool's zone's fabric subnet
    tags = {"gpu-cluster": spec.name, "gpu-cluster/pool": pool.name}
    placement = None if reserved(capacity) else aws.ec2.PlacementGroup(
        f"{name}-placement", strategy="cluster", tags=tags, opts=child(parent))
    primary_groups: list[pulumi.Input[str]] = [*args.management.security_group_ids, *args.storage.security_group_ids,
                                               *efa.security_group_ids]
    if eks:
        # Security groups in the template replace the cluster security group EKS would add, so the
        # primary interface carries it too, or the node cannot reach its control plane (EKS User
        # Guide, "Customize managed nodes with launch templates", security groups).
        assert spec.scheduler.cluster is not None
        if args.management.kubernetes_security_group is not None:  # the cluster the stack created
            primary_groups.append(args.management.kubernetes_security_group)
        else:
            found = aws.eks.get_cluster_output(name=spec.scheduler.cluster,
                                               opts=pulumi.InvokeOutputOptions(parent=parent))
            primary_groups.append(found.vpc_config.apply(lambda config: config.cluster_security_group_id))
    template = aws.ec2.LaunchTemplate(
        f"{name}-template",
        instance_type=pool.instance_type,
        # EKS: a template naming no image gets the node group's EKS-optimized NVIDIA AMI (ami_type)
        image_id=None if eks and capacity.default_image else capacity.image,
        network_interfaces=network_interfaces(instance, None if eks else subnet, primary_groups,
                                              list(efa.security_group_ids)),
        # IMDSv2 only, and a hop limit of 2: a container's request crosses one more hop, and "In a
        # container environment, we recommend setting the hop limit to 2" (AWS EC2 User Guide,
        # "Configure the Instance Metadata Service options").
        metadata_options={"http_tokens": "required", "http_endpoint": "enabled", "http_put_response_hop_limit": 2},
        # An EKS node group's template may not name a subnet, an instance profile or Spot (EKS API
        # LaunchTemplateSpecification: "can't include SubnetId, IamInstanceProfile,
        # RequestSpotInstances, ..."): the node group takes the subnet, the role and the capacity type.
        iam_instance_profile=({"name": args.management.instance_profile}
                              if args.management.instance_profile is not None and not eks else None),
        placement={"group_name": placement.name} if eks and placement is not None else None,
        block_device_mappings=_root_volume(capacity),
        user_data=_user_data(args),
        tag_specifications=[{"resource_type": "instance", "tags": tags}],
        tags=tags,
        instance_market_options=_market(capacity, eks),
        capacity_reservation_specification=_reservation(capacity),
        opts=child(parent),
    )
    if eks:
        return _node_group(parent, name, args, template, subnet, tags)
    group = aws.autoscaling.Group(
        f"{name}-group",
        min_size=pool.nodes, max_size=pool.nodes, desired_capacity=pool.nodes,
        vpc_zone_identifiers=[subnet],
        placement_group=placement.id if placement is not None else None,
        launch_template={"id": template.id, "version": "$Latest"},
        tags=[{"key": key, "value": value, "propagate_at_launch": True} for key, value in sorted(tags.items())],
        opts=child(parent),
    )
    return group.id


# EKS node group capacity types (EKS API CreateNodegroup capacityType: ON_DEMAND | SPOT | CAPACITY_BLOCK).
CAPACITY_TYPE = {"on-demand": "ON_DEMAND", "spot": "SPOT", "capacity-block": "CAPACITY_BLOCK"}
# The EKS-optimized Amazon Linux 2023 NVIDIA AMI per architecture (EKS API Nodegroup amiType).
NVIDIA_AMI_TYPE = {"amd64": "AL2023_x86_64_NVIDIA", "arm64": "AL2023_ARM_64_NVIDIA"}


def _node_group(parent: pulumi.Resource, name: str, args: GpuNodePoolArgs, template: aws.ec2.LaunchTemplate,
                subnet: pulumi.Input[str], tags: dict[str, str]) -> pulumi.Output[str]:
    """The EKS managed node group of the pool on its launch template: `nodes` nodes in the pool's
    fabric subnet, labelled for the pool's Kueue flavor and tainted for GPU pods only."""
    spec, pool, capacity = args.spec, args.pool, args.pool.capacity
    assert capacity is not None and spec.scheduler.cluster is not None and args.management.node_role is not None
    instance = load_catalog().instance("aws", pool.instance_type or "")
    assert instance is not None
    group = aws.eks.NodeGroup(
        f"{name}-nodegroup",
        cluster_name=args.management.kubernetes_cluster or spec.scheduler.cluster,  # the stack's own when it made one
        node_group_name=k8s.pool_name(spec, pool),
        node_role_arn=args.management.node_role,
        subnet_ids=[subnet],
        scaling_config={"min_size": pool.nodes, "max_size": pool.nodes, "desired_size": pool.nodes},
        launch_template={"id": template.id, "version": template.latest_version.apply(str)},
        ami_type=NVIDIA_AMI_TYPE[instance.arch] if capacity.default_image else None,
        capacity_type=CAPACITY_TYPE[capacity.market],
        labels=k8s.node_labels(pool),
        taints=[{"key": k8s.GPU_TAINT_KEY, "value": k8s.GPU_TAINT_VALUE, "effect": "NO_SCHEDULE"}],
        # one node at a time: a reservation has no room for a surge node
        update_config={"max_unavailable": 1},
        tags=tags,
        opts=child(parent),
    )
    return group.id  # `<cluster>:<node group>`
