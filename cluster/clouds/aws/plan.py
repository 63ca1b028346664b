"""What `plan` says of an AWS stack beyond the record's facts (cluster.deployment asks it)."""

from __future__ import annotations

from cluster.deployment import home_volume_note as home_volume_note  # the defaults, kept
from cluster.deployment import storage_subnet_ready as storage_subnet_ready
from cluster.spec import ClusterSpec, PoolSpec

# The unreserved pools' line names what to get here.
RESERVATION_WORDS = "a Capacity Block / ODCR (AWS)"
GPU_TAINT = None  # an EKS node group carries the scheduler's GPU taint (cluster.scheduler)
NODE_IMAGE = None  # an EKS node group boots the stack's launch template's image
# EKS nodes boot from the stack's launch template, so they run its boot script (mounts included).
RUNS_BOOT_SCRIPT = True
SCHEDULER_EXTRA = "; the node group's launch template keeps every EFA interface, the placement and the reservation"


def managed_cluster_where(spec: ClusterSpec) -> str:
    """Where the EKS cluster the node groups join is."""
    return spec.cloud.region if spec.cloud else ""


def control_plane(spec: ClusterSpec, cluster: str) -> str:
    """The EKS control plane a stack with scheduler.create builds, `cluster` as words name it."""
    scheduler = spec.scheduler
    return (f"control plane: {cluster}, Kubernetes {scheduler.version}, a private endpoint only, in "
            f"/28 subnets of {', '.join(scheduler.zones or [])}; its IAM role (AmazonEKSClusterPolicy); access "
            "entries (EKS adds the node role's, you as cluster admin); a system node group of "
            "2 x m5.xlarge in the management subnet; the GPU nodes carry the cluster security group; "
            "deletion protection on")


def kubernetes_network(spec: ClusterSpec) -> str | None:
    return None  # EKS node groups use the stack's own VPC, identity and way out


def kubernetes_way_in(spec: ClusterSpec) -> str | None:
    return None  # the stack's own (cloud.access)


def joined_todo(spec: ClusterSpec) -> list[str]:
    """What joining an existing EKS cluster leaves to the user (the add-ons the pools need to train)."""
    return ["scheduler: the EKS cluster must exist in the VPC cloud.vpc_id names; install the EFA device plugin "
            "(vpc.amazonaws.com/efa), the NVIDIA device plugin or GPU Operator, and Kueue v0.16+ (then `kubectl "
            "apply -f kubernetes/kueue.yaml`); EKS gives the node role its access entry itself"]


def created_todo(spec: ClusterSpec) -> list[str]:
    """What an EKS cluster the stack created (scheduler.create) leaves to the user."""
    return [
        "scheduler: the control plane has only a private endpoint: run kubectl from inside the VPC (a node through "
        "Session Manager, or a VPN); install the EFA device plugin (vpc.amazonaws.com/efa), the NVIDIA device plugin "
        "or GPU Operator, and Kueue v0.16+ (then `kubectl apply -f kubernetes/kueue.yaml`); with cloud.vpc_id the VPC "
        "must have DNS support and DNS hostnames on (the private endpoint's name resolves only so)",
        "upgrades: the control plane stays at its version until you raise scheduler.version (one minor at a time); "
        "the node groups follow their launch template",
    ]


def identity(spec: ClusterSpec) -> str:
    """What the nodes are allowed to do, in one line."""
    assert spec.cloud is not None
    data = ", ".join(spec.cloud.data_buckets) or "none"
    return ("identity: an instance profile reading the account's ECR images and the S3 buckets in "
            f"cloud.data_buckets ({data}); IMDSv2 only, hop limit 2; encrypted root volumes; an S3 gateway "
            "endpoint on the private route table" + ("" if spec.cloud.vpc_id is None else " (new VPCs only)"))


def named_image_note(spec: ClusterSpec) -> str:
    """What an image a pool names must also do."""
    return (" and join the EKS cluster itself (nodeadm; EKS bootstraps only its own AMIs)"
            if spec.kubernetes else "")


def default_image_line(spec: ClusterSpec) -> str | None:
    """The default image's line where the managed Kubernetes changes it."""
    if not spec.kubernetes:
        return None
    return ("image: the node group's EKS-optimized Amazon Linux 2023 NVIDIA AMI (ami_type AL2023_*_NVIDIA): "
            "add the EFA installer and a Lustre client to it, or name an EKS-ready AMI in cloud.image")


def placement(spec: ClusterSpec, pool: PoolSpec) -> str:
    if pool.capacity is not None and pool.capacity.reserved:
        return "placed by its reservation (no new placement group)"
    return "in a new cluster placement group"


def own_routes(spec: ClusterSpec) -> str | None:
    """The way out of an existing VPC (cloud.vpc_id): its own routes."""
    assert spec.cloud is not None
    if spec.cloud.vpc_id is None:
        return None
    return f"way out: the existing VPC {spec.cloud.vpc_id}'s own routes (no NAT gateway created)"


def reservations(spec: ClusterSpec) -> list[str] | None:
    return None  # the pools' reservations (cluster.deployment)


def reservation_kind(pool: PoolSpec) -> str:
    assert pool.capacity is not None
    return "Capacity Block" if pool.capacity.market == "capacity-block" else "ODCR"
