"""AWS networks: one VPC, a subnet per network in the stack's zone, and the security groups.

Every interface of a GPU node (primary ENA and EFA-only) sits in the fabric subnet, the subnet
of the auto scaling group: one subnet keeps EFA traffic within a subnet, and EFA-only
interfaces take no IP address, so a /20 holds thousands of nodes. The management subnet is for
login and head nodes and bastions; the storage subnet for file systems (FSx for Lustre).
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

import pulumi
import pulumi_aws as aws
from pulumi_aws import provider as aws_provider

from cluster.resolve import access_of
from components.addressing import CLOUD_BLOCK, network_cidr, zone_cidr
from components.base import FabricAttachments, NetworkAttachment, child

if TYPE_CHECKING:
    from cluster.spec import ClusterSpec
    from components.base import ConcernArgs
    from components.fabric import GpuFabricArgs
    from components.management import ManagementNetworkArgs
    from components.storage import StorageNetworkArgs

ALL_TRAFFIC: aws.ec2.SecurityGroupIngressArgsDict = {"protocol": "-1", "from_port": 0, "to_port": 0}
SSM_POLICY = "arn:aws:iam::aws:policy/AmazonSSMManagedInstanceCore"
ECR_READ_POLICY = "arn:aws:iam::aws:policy/AmazonEC2ContainerRegistryReadOnly"
# FSx for Lustre: LNet on TCP 988 and 1018-1023 between clients and file servers.
LUSTRE_PORTS = ((988, 988), (1018, 1023))
# FSx for OpenZFS: NFS on TCP and UDP 111, 2049 and 20001-20003 (FSx for OpenZFS User Guide, "File
# system access control with Amazon VPC", security group rules).
NFS_PORTS = ((111, 111), (2049, 2049), (20001, 20003))


def _tags(args: ConcernArgs, name: str, network: str) -> dict[str, str]:
    return {"Name": name, "gpu-cluster": args.spec.name, "gpu-cluster/network": network}


def _subnet(parent: pulumi.Resource, name: str, args: ConcernArgs, network: str, vpc_id: pulumi.Input[str],
            route_table_id: pulumi.Output[str] | None = None, zone: str | None = None) -> pulumi.Output[str]:
    """The id of the network's subnet: cloud.subnet_ids.<network> if given, else a new private
    one on `route_table_id` (the NAT route) when there is one. `zone`: a fabric subnet for pools in
    another zone than cloud.zone."""
    cloud = args.spec.cloud
    assert cloud is not None
    existing = getattr(cloud.subnet_ids, network, None) if cloud.subnet_ids and zone is None else None
    if existing is not None:
        return pulumi.Output.from_input(existing)
    subnet = aws.ec2.Subnet(
        name, vpc_id=vpc_id, cidr_block=network_cidr(network) if zone is None else zone_cidr(zone),
        availability_zone=zone or cloud.zone, map_public_ip_on_launch=False, tags=_tags(args, name, network),
        opts=child(parent))
    if route_table_id is not None:
        aws.ec2.RouteTableAssociation(f"{name}-routes", subnet_id=subnet.id, route_table_id=route_table_id,
                                      opts=child(parent))
    return subnet.id


def _egress(parent: pulumi.Resource, name: str, args: ConcernArgs, vpc_id: pulumi.Output[str]) -> pulumi.Output[str]:
    """Private subnets with a way out (the AWS VPC guide's "VPC with servers in private subnets and
    NAT"): an internet gateway, a public subnet holding only the NAT gateway and its Elastic IP,
    and the private route table whose default route is the NAT gateway. Returns that table's id."""
    assert args.spec.cloud is not None
    gateway = aws.ec2.InternetGateway(f"{name}-igw", vpc_id=vpc_id, tags=_tags(args, f"{name}-igw", "egress"),
                                      opts=child(parent))
    public = aws.ec2.Subnet(
        f"{name}-public", vpc_id=vpc_id, cidr_block=network_cidr("public"), availability_zone=args.spec.cloud.zone,
        map_public_ip_on_launch=False, tags=_tags(args, f"{name}-public", "egress"), opts=child(parent))
    public_routes = aws.ec2.RouteTable(
        f"{name}-public-routes", vpc_id=vpc_id, routes=[{"cidr_block": "0.0.0.0/0", "gateway_id": gateway.id}],
        tags=_tags(args, f"{name}-public-routes", "egress"), opts=child(parent))
    aws.ec2.RouteTableAssociation(f"{name}-public-routes", subnet_id=public.id, route_table_id=public_routes.id,
                                  opts=child(parent))
    address = aws.ec2.Eip(f"{name}-nat-ip", domain="vpc", tags=_tags(args, f"{name}-nat-ip", "egress"),
                          opts=child(parent))
    nat = aws.ec2.NatGateway(f"{name}-nat", allocation_id=address.id, subnet_id=public.id,
                             connectivity_type="public", tags=_tags(args, f"{name}-nat", "egress"),
                             opts=child(parent, depends_on=[gateway]))
    private = aws.ec2.RouteTable(
        f"{name}-private-routes", vpc_id=vpc_id, routes=[{"cidr_block": "0.0.0.0/0", "nat_gateway_id": nat.id}],
        tags=_tags(args, f"{name}-private-routes", "egress"), opts=child(parent))
    return private.id


def _node_identity(parent: pulumi.Resource, name: str, args: ConcernArgs) -> tuple[pulumi.Output[str], pulumi.Output[str]]:
    """The nodes' instance profile: a role that reads the account's container images (AWS's managed
    AmazonEC2ContainerRegistryReadOnly, the policy EKS gives worker nodes: Amazon EKS User Guide,
    "Amazon EKS node IAM role"), reads the S3 buckets in cloud.data_buckets and nothing else (an
    inline policy: s3:ListBucket on the buckets, s3:GetObject on their objects), and with
    access: ssm carries AmazonSSMManagedInstanceCore, so the SSM agent of the Deep Learning AMI
    registers the node for Session Manager (AWS Systems Manager guide: "Configure instance
    permissions required for Systems Manager"). With scheduler eks the role also carries the two
    other policies of the EKS node IAM role, AmazonEKSWorkerNodePolicy and AmazonEKS_CNI_Policy
    (Amazon EKS User Guide, "Amazon EKS node IAM role"). Returns the profile's name and the role's ARN."""
    cloud = args.spec.cloud
    assert cloud is not None
    role = aws.iam.Role(f"{name}-node-role", assume_role_policy=json.dumps({
        "Version": "2012-10-17",
        "Statement": [{"Effect": "Allow", "Principal": {"Service": "ec2.amazonaws.com"}, "Action": "sts:AssumeRole"}],
    }), tags=_tags(args, f"{name}-node-role", "management"), opts=child(parent))
    aws.iam.RolePolicyAttachment(f"{name}-node-images", role=role.name, policy_arn=ECR_READ_POLICY, opts=child(parent))
    if access_of(cloud, "aws") == "ssm":
        aws.iam.RolePolicyAttachment(f"{name}-node-ssm", role=role.name, policy_arn=SSM_POLICY, opts=child(parent))
    if cloud.data_buckets:
        aws.iam.RolePolicy(f"{name}-node-data", role=role.id, policy=json.dumps(data_read_policy(cloud.data_buckets)),
                           opts=child(parent))
    if args.spec.scheduler.kind == "eks":
        for suffix, policy in EKS_NODE_POLICIES.items():
            aws.iam.RolePolicyAttachment(f"{name}-node-{suffix}", role=role.name, policy_arn=policy, opts=child(parent))
    profile = aws.iam.InstanceProfile(f"{name}-node-profile", role=role.name,
                                      tags=_tags(args, f"{name}-node-profile", "management"), opts=child(parent))
    return profile.name, role.arn


EKS_NODE_POLICIES = {"eks-worker": "arn:aws:iam::aws:policy/AmazonEKSWorkerNodePolicy",
                     "eks-cni": "arn:aws:iam::aws:policy/AmazonEKS_CNI_Policy"}


def data_read_policy(buckets: list[str]) -> dict[str, object]:
    """Read-only access to `buckets`: list them, get their objects."""
    return {"Version": "2012-10-17", "Statement": [
        {"Effect": "Allow", "Action": ["s3:ListBucket", "s3:GetBucketLocation"],
         "Resource": [f"arn:aws:s3:::{bucket}" for bucket in buckets]},
        {"Effect": "Allow", "Action": ["s3:GetObject"], "Resource": [f"arn:aws:s3:::{bucket}/*" for bucket in buckets]},
    ]}


def _s3_endpoint(parent: pulumi.Resource, name: str, args: ConcernArgs, vpc_id: pulumi.Output[str],
                 route_table_id: pulumi.Output[str]) -> None:
    """An S3 gateway endpoint on the private route table: data and ECR's image layers (stored in
    S3) reach S3 inside the VPC, not through the NAT gateway (AWS PrivateLink guide, "Gateway
    endpoints for Amazon S3"; Amazon ECR User Guide, interface VPC endpoints: "Amazon ECR uses
    Amazon S3 to store your image layers")."""
    assert args.spec.cloud is not None
    aws.ec2.VpcEndpoint(f"{name}-s3", vpc_id=vpc_id, service_name=f"com.amazonaws.{args.spec.cloud.region}.s3",
                        vpc_endpoint_type="Gateway", route_table_ids=[route_table_id],
                        tags=_tags(args, f"{name}-s3", "management"), opts=child(parent))


def provider(parent: pulumi.Resource, name: str, spec: ClusterSpec) -> pulumi.ProviderResource | None:
    """The cluster's AWS provider, in cloud.region (credentials from the environment)."""
    assert spec.cloud is not None
    return aws_provider.Provider(name, region=spec.cloud.region, opts=pulumi.ResourceOptions(parent=parent))


def management(parent: pulumi.Resource, name: str, args: ManagementNetworkArgs) -> NetworkAttachment:
    """VPC (or cloud.vpc_id), management subnet, and a security group that admits SSH only from
    cloud.ssh_cidrs."""
    assert args.spec.cloud is not None
    vpc_id = pulumi.Output.from_input(args.spec.cloud.vpc_id) if args.spec.cloud.vpc_id else aws.ec2.Vpc(
        f"{name}-vpc", cidr_block=CLOUD_BLOCK, enable_dns_support=True, enable_dns_hostnames=True,
        tags=_tags(args, f"{name}-vpc", "management"), opts=child(parent)).id
    cloud = args.spec.cloud
    vpc_id = pulumi.Output.from_input(vpc_id)
    routes = _egress(parent, name, args, vpc_id) if cloud.vpc_id is None and cloud.egress == "nat" else None
    if routes is not None:
        _s3_endpoint(parent, name, args, vpc_id, routes)
    subnet = _subnet(parent, f"{name}-subnet", args, "management", vpc_id, routes)
    profile, role = _node_identity(parent, name, args)
    scheduler = args.spec.scheduler
    cluster, cluster_group = (_eks_cluster(parent, name, args, vpc_id, routes, subnet, role)
                              if scheduler.kind == "eks" and scheduler.create else (None, None))
    ssh: list[aws.ec2.SecurityGroupIngressArgsDict] = [
        {"protocol": "tcp", "from_port": 22, "to_port": 22, "cidr_blocks": list(args.spec.cloud.ssh_cidrs),
         "description": "SSH from cloud.ssh_cidrs"}] if args.spec.cloud.ssh_cidrs else []
    group = aws.ec2.SecurityGroup(
        f"{name}-sg", vpc_id=vpc_id, description="gpu-cluster management: SSH from cloud.ssh_cidrs only",
        ingress=ssh, egress=[{**ALL_TRAFFIC, "cidr_blocks": ["0.0.0.0/0"]}],
        tags=_tags(args, f"{name}-sg", "management"), opts=child(parent))
    return NetworkAttachment("management", (subnet,), (group.id,), network_id=vpc_id, egress_id=routes,
                             instance_profile=profile, node_role=role, kubernetes_cluster=cluster,
                             kubernetes_security_group=cluster_group)


EKS_CLUSTER_POLICY = "arn:aws:iam::aws:policy/AmazonEKSClusterPolicy"
# The system node group's CPU size and count: the default node group of awsome-distributed-training's EKS
# reference (1.architectures/4.amazon-eks/terraform/variables.tf at c28a950f11fc: default_instance_types
# m5.large / m5.xlarge, for "addons and components that do not require GPUs"), two nodes so CoreDNS keeps a
# replica through a node's replacement.
EKS_SYSTEM_INSTANCE, EKS_SYSTEM_NODES = "m5.xlarge", 2


def _eks_cluster(parent: pulumi.Resource, name: str, args: ManagementNetworkArgs, vpc_id: pulumi.Output[str],
                 routes: pulumi.Output[str] | None, management_subnet: pulumi.Output[str],
                 node_role: pulumi.Output[str]) -> tuple[pulumi.Output[str], pulumi.Output[str]]:
    """The EKS cluster the node groups join (scheduler.create), in the stack's VPC (or cloud.vpc_id):
    its IAM role (AmazonEKSClusterPolicy, trusted by eks.amazonaws.com: the Pulumi AWS registry's
    aws.eks.Cluster example), a /28 control-plane subnet in each of scheduler.zones (EKS needs two zones),
    a private endpoint only (kubectl from inside the VPC), access entries as the authentication mode (EKS
    creates the EC2_LINUX entry of a managed node group's role itself: EKS API CreateAccessEntry, "It's
    unnecessary to create access entries for IAM roles used with ... managed Amazon EC2 nodes"; the
    deploying principal is made cluster admin), deletion protection on, and a managed node group of CPU
    nodes in the management subnet for system pods (the GPU nodes are tainted). Returns the cluster's
    name and the security group EKS creates for it, which the GPU nodes carry."""
    spec = args.spec
    scheduler = spec.scheduler
    assert scheduler.cluster is not None and scheduler.zones is not None
    from components.addressing import control_plane_cidr

    role = aws.iam.Role(f"{name}-eks-role", assume_role_policy=json.dumps({
        "Version": "2012-10-17",
        "Statement": [{"Effect": "Allow", "Principal": {"Service": "eks.amazonaws.com"},
                       "Action": ["sts:AssumeRole", "sts:TagSession"]}],
    }), tags=_tags(args, f"{name}-eks-role", "management"), opts=child(parent))
    policy = aws.iam.RolePolicyAttachment(f"{name}-eks-cluster", role=role.name, policy_arn=EKS_CLUSTER_POLICY,
                                          opts=child(parent))
    subnets = []
    for zone in scheduler.zones:
        subnet = aws.ec2.Subnet(f"{name}-eks-{zone}", vpc_id=vpc_id, cidr_block=control_plane_cidr(zone),
                                availability_zone=zone, map_public_ip_on_launch=False,
                                tags=_tags(args, f"{name}-eks-{zone}", "control-plane"), opts=child(parent))
        if routes is not None:
            aws.ec2.RouteTableAssociation(f"{name}-eks-{zone}-routes", subnet_id=subnet.id, route_table_id=routes,
                                          opts=child(parent))
        subnets.append(subnet.id)
    cluster = aws.eks.Cluster(
        f"{name}-eks", name=scheduler.cluster, role_arn=role.arn, version=scheduler.version,
        vpc_config={"subnet_ids": subnets, "endpoint_private_access": True, "endpoint_public_access": False},
        access_config={"authentication_mode": "API", "bootstrap_cluster_creator_admin_permissions": True},
        deletion_protection=True, tags=_tags(args, f"{name}-eks", "management"),
        opts=child(parent, depends_on=[policy]))
    aws.eks.NodeGroup(
        f"{name}-eks-system", cluster_name=cluster.name, node_group_name="system", node_role_arn=node_role,
        subnet_ids=[management_subnet], instance_types=[EKS_SYSTEM_INSTANCE], ami_type="AL2023_x86_64_STANDARD",
        scaling_config={"min_size": EKS_SYSTEM_NODES, "max_size": EKS_SYSTEM_NODES,
                        "desired_size": EKS_SYSTEM_NODES},
        tags=_tags(args, f"{name}-eks-system", "management"), opts=child(parent))
    return cluster.name, cluster.vpc_config.apply(lambda config: config.cluster_security_group_id or "")


def storage(parent: pulumi.Resource, name: str, args: StorageNetworkArgs) -> NetworkAttachment:
    """Storage subnet (file servers, FSx) and a self-referencing Lustre security group."""
    vpc_id = args.management.network_id
    assert vpc_id is not None
    subnet = _subnet(parent, f"{name}-subnet", args, "storage", vpc_id, args.management.egress_id)
    lustre: list[aws.ec2.SecurityGroupIngressArgsDict] = [
        {"protocol": "tcp", "from_port": low, "to_port": high, "self": True, "description": "Lustre"}
        for low, high in LUSTRE_PORTS]
    nfs: list[aws.ec2.SecurityGroupIngressArgsDict] = [
        {"protocol": protocol, "from_port": low, "to_port": high, "self": True, "description": "NFS (/home)"}
        for protocol in ("tcp", "udp") for low, high in NFS_PORTS] if args.spec.home is not None else []
    group = aws.ec2.SecurityGroup(
        f"{name}-sg", vpc_id=vpc_id,
        description="gpu-cluster storage: Lustre" + (" and NFS" if nfs else "") + " between its members",
        ingress=lustre + nfs, egress=[{**ALL_TRAFFIC, "self": True}],
        tags=_tags(args, f"{name}-sg", "storage"), opts=child(parent))
    home, home_id = _home(parent, name, args, subnet, group.id) if args.spec.home is not None else (None, None)
    fs = args.spec.filesystem
    if fs is None:
        return NetworkAttachment("storage", (subnet,), (group.id,), network_id=vpc_id, home=home, home_id=home_id)
    # FSx for Lustre PERSISTENT_2 in the storage subnet, behind the storage group the nodes' primary
    # interface also carries (LNet ports between members); LZ4 compression as ParallelCluster's
    # examples set it. Protected: `pulumi destroy` stops at it instead of deleting the data.
    lustre_fs = aws.fsx.LustreFileSystem(
        f"{name}-lustre", deployment_type="PERSISTENT_2", storage_type="SSD", storage_capacity=fs.capacity_gib,
        per_unit_storage_throughput=fs.tier, subnet_ids=subnet, security_group_ids=[group.id],
        data_compression_type="LZ4", tags=_tags(args, f"{name}-lustre", "storage"),
        opts=pulumi.ResourceOptions(parent=parent, protect=True))
    source = pulumi.Output.all(lustre_fs.dns_name, lustre_fs.mount_name).apply(
        lambda parts: f"{parts[0]}@tcp:/{parts[1]}")
    return NetworkAttachment("storage", (subnet,), (group.id,), network_id=vpc_id, filesystem=source,
                             filesystem_id=lustre_fs.id, home=home, home_id=home_id)


def _home(parent: pulumi.Resource, name: str, args: StorageNetworkArgs, subnet: pulumi.Input[str],
          group: pulumi.Output[str]) -> tuple[pulumi.Output[str], pulumi.Output[str]]:
    """FSx for OpenZFS for /home in the storage subnet, behind the storage group (NFS between its
    members), as awsome-distributed-training's ParallelCluster prerequisites create it (SINGLE_AZ_HA_2,
    320 MB/s, the root volume exported rw, no_root_squash, crossmnt; 30 days of daily backups). The
    export admits any client: the security group admits only its members. Protected. Returns the
    mount source (`<dns name>:/fsx`, the root volume's path) and the file system's id."""
    home = args.spec.home
    assert home is not None
    from cluster.clouds.aws import HOME_THROUGHPUT

    openzfs = aws.fsx.OpenZfsFileSystem(
        f"{name}-home", deployment_type="SINGLE_AZ_HA_2", storage_type="SSD", storage_capacity=home.capacity_gib,
        throughput_capacity=HOME_THROUGHPUT, subnet_ids=[subnet], security_group_ids=[group],
        root_volume_configuration={"nfs_exports": {"client_configurations": [
            {"clients": "*", "options": ["rw", "crossmnt", "no_root_squash"]}]}},
        automatic_backup_retention_days=30, copy_tags_to_backups=True,
        tags=_tags(args, f"{name}-home", "storage"), opts=pulumi.ResourceOptions(parent=parent, protect=True))
    return openzfs.dns_name.apply(lambda dns: f"{dns}:/fsx"), openzfs.id


def fabric(parent: pulumi.Resource, name: str, args: GpuFabricArgs) -> FabricAttachments:
    """Fabric subnet for the EFA-only interfaces (one more in each other zone a pool sits in) and the
    EFA security group: all traffic to and from itself, nothing else (what EFA requires)."""
    vpc_id = args.management.network_id
    assert vpc_id is not None and args.spec.cloud is not None
    subnet = _subnet(parent, f"{name}-subnet", args, "fabric", vpc_id, args.management.egress_id)
    others = sorted({pool.capacity.zone for pool in args.spec.pools if pool.capacity is not None
                     and pool.capacity.zone not in (None, args.spec.cloud.zone)} - {None})
    zones = {zone: (_subnet(parent, f"{name}-{zone}-subnet", args, "fabric", vpc_id, args.management.egress_id,
                            zone=zone),) for zone in others if zone is not None}
    group = aws.ec2.SecurityGroup(
        f"{name}-efa-sg", vpc_id=vpc_id, description="gpu-cluster EFA: all traffic to and from itself",
        ingress=[{**ALL_TRAFFIC, "self": True, "description": "EFA"}],
        egress=[{**ALL_TRAFFIC, "self": True, "description": "EFA"}],
        tags=_tags(args, f"{name}-efa-sg", "fabric"), opts=child(parent))
    return FabricAttachments({"efa": NetworkAttachment("fabric", (subnet,), (group.id,), network_id=vpc_id, zones=zones)})


def kubernetes_networks(spec: ClusterSpec, storage: NetworkAttachment, fabric: FabricAttachments
                        ) -> pulumi.Output[str] | None:
    """No objects to apply: EKS attaches the EFA interfaces through the launch template."""
    return None
