"""AWS: what the design side knows of it (the Pulumi side is components/aws/)."""

from __future__ import annotations

from cluster.clouds import Cloud, Home, Lustre, Managed, round_up

# FSx for Lustre PERSISTENT_2 (SSD, 125 / 250 / 500 / 1000 MB/s/TiB): 1,200 GiB or a multiple of
# 2,400 GiB (FSx API reference, CreateFileSystem StorageCapacity, as pulumi-aws's
# LustreFileSystem.storage_capacity links it).
LUSTRE_FIRST_GIB, LUSTRE_STEP_GIB = 1_200, 2_400


def lustre_size(tier: int, needed_gib: float) -> tuple[int, int | None]:
    """FSx for Lustre's size for at least `needed_gib` (no largest: the quota bounds it)."""
    return (LUSTRE_FIRST_GIB if needed_gib <= LUSTRE_FIRST_GIB else round_up(needed_gib, LUSTRE_STEP_GIB)), None


# /home: FSx for OpenZFS, SINGLE_AZ_HA_2 at 320 MB/s, 512 GiB by default, as awsome-distributed-training's
# ParallelCluster prerequisites give /home (1.architectures/2.aws-parallelcluster/templates/
# parallelcluster-prerequisites.yaml at 0e68c545: OpenZFSFileSystem, HomeCapacity 512, HomeThroughput 320);
# 64 to 524,288 GiB (FSx API CreateFileSystem StorageCapacity for OPENZFS); NFS 4.1 (FSx for OpenZFS
# User Guide, "Mounting file systems": `mount -t nfs -o nfsvers=4.1`).
HOME_THROUGHPUT = 320  # MB/s (awsome-distributed-training's HomeThroughput)

# EKS: a node group's name is 1-63 characters (CreateNodegroup nodegroupName). scheduler.create: the
# control plane's version when the stack file gives none is 1.35, in EKS standard support (Amazon EKS User
# Guide, "Understand the Kubernetes version lifecycle on EKS": a minor is in standard support for 14 months,
# and "we recommend that you create your cluster with the latest available Kubernetes version"; the Pulumi
# AWS registry's aws.eks.Cluster example creates version "1.35"). EKS takes a minor only. Its control plane
# needs subnets in at least two Availability Zones (EKS API VpcConfigRequest subnetIds; pulumi-aws
# ClusterVpcConfig subnet_ids: "Must be in at least two different availability zones").
EKS_DEFAULT_VERSION = "1.35"
EKS = Managed(
    pool_name_limit=63,
    default_version=EKS_DEFAULT_VERSION,
    version_form=(r"^1\.[0-9]{2}$", "a Kubernetes minor version", f"give the minor only, as {EKS_DEFAULT_VERSION}"),
    control_plane_zones=2,
    # a node group's subnets are in its cluster's VPC (Amazon EKS User Guide, "View Amazon EKS networking
    # requirements for VPC and subnets"); the stack's own VPC is not it
    joined_needs=("cloud.vpc_id", "an EKS managed node group's subnets must be in its cluster's VPC, and without "
                  "cloud.vpc_id the stack creates a VPC of its own", "set cloud.vpc_id to the VPC of EKS cluster {cluster}"),
)

CLOUD = Cloud(
    name="aws",
    provider="AWS",
    group="auto scaling group",
    kubernetes="eks",
    kubernetes_service="Amazon EKS",
    kubernetes_pool="managed node group",
    kubernetes_pools="EKS managed node groups",
    managed=EKS,
    lustre=Lustre(service="FSx for Lustre (PERSISTENT_2)", short="FSx for Lustre", tiers=(125, 250, 500, 1000),
                  size=lustre_size),
    home=Home(service="FSx for OpenZFS (SINGLE_AZ_HA_2, 320 MB/s)", short="FSx for OpenZFS", default_gib=512,
              smallest_gib=64, largest_gib=524_288, options="nfsvers=4.1,_netdev",
              where="in the storage subnet behind the storage security group (NFS between its members)"),
    # AWS's Deep Learning Base OSS AMI (NVIDIA driver, EFA installer), resolved by EC2 from its SSM
    # parameter. No default for an arm64 type: the stack file names the image.
    default_images={"amd64": "resolve:ssm:/aws/service/deeplearning/ami/x86_64/base-oss-nvidia-driver-gpu-ubuntu-22.04/"
                             "latest/ami-id"},
    default_image_words="the Deep Learning Base OSS Nvidia Driver GPU AMI (Ubuntu 22.04), resolved from its SSM parameter",
    image_needs="the NVIDIA driver, the EFA installer (libfabric) and aws-ofi-nccl",
    quota="quota: {vcpus:,} vCPUs of EC2 'Running On-Demand P instances' in {region} for pool {pool} ({nodes} x "
          "{vcpus_per_node}; Service Quotas says how your reservation counts against it)",
    # EKS: the EC2 instance topology's network nodes (docs.aws.amazon.com/eks/latest/userguide/
    # ml-workload-topology.html; layer-3 is the one nearest the instance); an instance type whose
    # EC2 topology has four layers (p6-b200, p6-b300) adds network-node-layer-4.
    egress="a NAT gateway in a public subnet; every private subnet routes through it",
    topology_labels=("topology.k8s.aws/network-node-layer-1", "topology.k8s.aws/network-node-layer-2",
                     "topology.k8s.aws/network-node-layer-3"),
    topology_layer="topology.k8s.aws/network-node-layer-",
    # EFA's OS-bypass traffic stays within one subnet (AWS EC2 guide, "Elastic Fabric Adapter",
    # limitations; across subnets it is plain IP), and the fabric subnet is per zone.
    fabrics=("EFA fabrics (one per zone's subnet)", "put the pools that train together in one zone "
             "(node_pools[i].cloud.zone)"),
    fabric_resource="vpc.amazonaws.com/efa",  # the EFA device plugin's resource (one per EFA interface)
    provider_settings={"aws:region": "region"},
    access={"ssm": "Session Manager: an instance profile with AmazonSSMManagedInstanceCore on every node "
                   "(`aws ssm start-session --target <instance id>`)"},
    # A zone's name is its region's and a letter: "us-east-1" + "a" (Availability Zone names, EC2
    # User Guide "Regions and Zones"; the letters of today's regions stop at f, and gpu-cluster carves a
    # fabric subnet per letter a-k, the block after them holding EKS control-plane subnets:
    # components/addressing.py zone_cidr, control_plane_cidr).
    access_commands={"ssm": "aws ssm start-session --target <instance id>"},
    zone_suffix=r"[a-k]",
    zone_form="the region's name and a letter, as {region}a",
    capacity_blocks=True,
    client_todo={"ssm": "client: the AWS CLI with the Session Manager plugin on your machine"},
    # An S3 bucket name: 3-63 lower-case letters, digits, dots and hyphens (S3 User Guide, "General
    # purpose bucket naming rules"); the nodes read the account's ECR, so no registries.
    data_buckets=(r"[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]",
                  "an S3 bucket name: 3-63 lower-case letters, digits, dots, hyphens"),
    own_registry="account",
    named_image_todo="encryption: a named AMI's root volume is encrypted only if its snapshot is or the account's "
                     "EBS encryption by default is on",
)
