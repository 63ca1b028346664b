"""What `plan` says of a Google Cloud stack beyond the record's facts (cluster.deployment asks it)."""

from __future__ import annotations

from cluster.clouds.gcp import GKE_RELEASE_CHANNEL
from cluster.deployment import default_image_line as default_image_line
from cluster.deployment import home_volume_note as home_volume_note  # the defaults, kept
from cluster.deployment import named_image_note as named_image_note
from cluster.deployment import storage_subnet_ready as storage_subnet_ready
from cluster.spec import ClusterSpec, PoolSpec

# The unreserved pools' line names what to get here.
RESERVATION_WORDS = "a reservation (GCP)"
GPU_TAINT = "GKE's own nvidia.com/gpu=present:NoSchedule taint"
# GKE node pools boot the service's own node image (cloud.image is SPEC-IGNORED there).
NODE_IMAGE = ("GKE's node image (Container-Optimized OS) with the NVIDIA driver GKE installs for the node "
              "pool's accelerator (gpu_driver_version LATEST); cloud.image is not used")
RUNS_BOOT_SCRIPT = False  # GKE nodes do not run the stack's boot script
SCHEDULER_EXTRA = "; the storage VPC and every RDMA subnet attached as additional node networks"


def managed_cluster_where(spec: ClusterSpec) -> str:
    """Where the GKE cluster the node pools join is."""
    return spec.scheduler.location or ""


def control_plane(spec: ClusterSpec, cluster: str) -> str:
    """The GKE control plane a stack with scheduler.create builds, `cluster` as words name it."""
    return (f"control plane: {cluster}, Kubernetes {spec.scheduler.version} on the {GKE_RELEASE_CHANNEL} "
            "channel, on the management VPC: VPC-native, multi-networking with GKE Dataplane V2, private nodes and "
            "a private endpoint only, Workload Identity, no default node pool; deletion protection on")


def kubernetes_network(spec: ClusterSpec) -> str | None:
    return None  # the stack's own networks; GKE's nodes are on the cluster's VPC (joined_todo says so)


def kubernetes_way_in(spec: ClusterSpec) -> str | None:
    return None  # the stack's own (cloud.access)


def joined_todo(spec: ClusterSpec) -> list[str]:
    """What joining an existing GKE cluster leaves to the user (the add-ons the pools need to train)."""
    return ["scheduler: the GKE cluster must have multi-networking and GKE Dataplane V2 on; apply `pulumi stack output "
            "kubernetes_networks` (the Network objects the Jobs' interface annotations name), then install Kueue "
            "v0.16+ and the gIB NCCL plugin (Cluster Toolkit's gke-a3-ultragpu nccl-installer)",
            "way in: GKE nodes are on the cluster's own VPC, not the management VPC: reach them with kubectl (the "
            "stack's IAP rule and Cloud NAT serve the management VPC only; cloud.access / egress none drop them); "
            "private nodes reach the internet through the cluster VPC's Cloud NAT"]


def created_todo(spec: ClusterSpec) -> list[str]:
    """What a GKE cluster the stack created (scheduler.create) leaves to the user."""
    return [
        "scheduler: the control plane has only a private endpoint: run kubectl from inside the management VPC (a VM "
        "reached through IAP, or a VPN); apply `pulumi stack output kubernetes_networks` (the Network objects the "
        "Jobs' interface annotations name), then install Kueue v0.16+ and the gIB NCCL plugin (Cluster Toolkit's "
        "gke-a3-ultragpu nccl-installer)",
        "upgrades: the REGULAR channel upgrades the control plane in GKE's maintenance windows; the GPU node pools "
        "have auto-upgrade off",
    ]


def identity(spec: ClusterSpec) -> str:
    """What the nodes are allowed to do, in one line."""
    assert spec.cloud is not None
    data = ", ".join(spec.cloud.data_buckets) or "none"
    return ("identity: a service account with Artifact Registry read, log and metric write, and storage read on "
            f"the buckets in cloud.data_buckets ({data}); Shielded VM (vTPM, integrity monitoring)"
            + ("" if spec.cloud.ssh_public_key else "; OS Login"))


def placement(spec: ClusterSpec, pool: PoolSpec) -> str:
    if spec.kubernetes:
        return "placed by its reservation" if pool.capacity is not None and pool.capacity.reservation else "on demand"
    if pool.capacity is not None and pool.capacity.reservation is not None:
        return ("placed by its reservation (no workload policy), template updates applied only when a VM is "
                "recreated; `pulumi up` waits until every VM runs")
    return "placed by a HIGH_THROUGHPUT workload policy; `pulumi up` waits until every VM runs"


def own_routes(spec: ClusterSpec) -> str | None:
    return None


def reservations(spec: ClusterSpec) -> list[str] | None:
    return None  # the pools' reservations (cluster.deployment)


def reservation_kind(pool: PoolSpec) -> str:
    return "reservation"
