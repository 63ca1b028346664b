"""What `plan` says of an Azure stack beyond the record's facts (cluster.deployment asks it)."""

from __future__ import annotations

from cluster.deployment import default_image_line as default_image_line
from cluster.deployment import named_image_note as named_image_note  # the defaults, kept
from cluster.spec import ClusterSpec, PoolSpec

RESERVATION_WORDS = None  # reservations are not used on Azure
GPU_TAINT = None  # an AKS node pool carries the scheduler's GPU taint (cluster.scheduler)
# AKS node pools boot the service's own node image (cloud.image is SPEC-IGNORED there).
NODE_IMAGE = ("AKS's Ubuntu node image; the InfiniBand and GPU drivers come from NVIDIA's Network Operator and "
              "GPU Operator; cloud.image is not used")
RUNS_BOOT_SCRIPT = False  # AKS nodes do not run the stack's boot script
SCHEDULER_EXTRA = "; one node pool, one scale set, so one InfiniBand network per pool"


def _file_systems(spec: ClusterSpec) -> bool:
    return spec.filesystem is not None or spec.home is not None


def managed_cluster_where(spec: ClusterSpec) -> str:
    """Where the AKS cluster the node pools join is."""
    if spec.scheduler.create:
        return "the stack's resource group"
    return f"resource group {spec.scheduler.resource_group}"


def control_plane(spec: ClusterSpec, cluster: str) -> str:
    """The AKS control plane a stack with scheduler.create builds, `cluster` as words name it."""
    return (f"control plane: {cluster}, Kubernetes {spec.scheduler.version}, a private cluster (no public API "
            "server), Azure CNI Overlay (pods 10.4.0.0/14, services 10.8.0.0/20), a system-assigned managed "
            "identity, a system node pool of 3 x Standard_DS4_v2 tainted CriticalAddonsOnly")


def kubernetes_network(spec: ClusterSpec) -> str | None:
    """With AKS, the node pools use the AKS cluster's VNet, identity and way out: what the stack creates."""
    if not spec.kubernetes:
        return None
    if spec.scheduler.create:
        return ("network: a resource group and a VNet (10.0.0.0/16) whose management subnet holds every node "
                "of the AKS cluster; the file systems' subnets are in the same VNet, so no peering; no NSG, NAT "
                "gateway, Bastion or node identity of the stack's: the cluster's own")
    return "network: " + (
        "a resource group and a VNet holding only the file systems' own subnets; no management subnet, NSG, NAT "
        "gateway, Bastion or node identity: the node pools use the AKS cluster's" if _file_systems(spec) else
        "none: the node pools join the AKS cluster's VNet, identity and outbound path, so the stack creates no "
        "resource group, VNet, NAT gateway, Bastion or node identity")


def kubernetes_way_in(spec: ClusterSpec) -> str | None:
    """With AKS, the AKS cluster's API server is the way in."""
    if not spec.kubernetes:
        return None
    if spec.scheduler.create:
        return ("way in: the AKS cluster's private API server (`az aks command invoke --resource-group <group> "
                f"--name {spec.scheduler.cluster} --command 'kubectl get nodes'`, the group from `pulumi stack "
                "output network`: resource_group), or kubectl from inside the VNet")
    return ("way in: the AKS cluster's own (`az aks get-credentials --resource-group "
            f"{spec.scheduler.resource_group} --name {spec.scheduler.cluster}`, then kubectl)")


def joined_todo(spec: ClusterSpec) -> list[str]:
    """What joining an existing AKS cluster leaves to the user (the add-ons the pools need to train)."""
    lines = ["scheduler: register the subscription's AKSInfinibandSupport feature (nodes of a pool on one "
             "InfiniBand network), install NVIDIA's Network Operator and GPU Operator as Azure's aks-rdma-infiniband "
             "guide does, and Kueue v0.16+"]
    if _file_systems(spec):
        lines.append("network: the node pools are on the AKS cluster's VNet, the stack's file systems on the "
                     "stack's VNet (10.0.0.0/16): peer the two (their address spaces must not overlap) for the "
                     "nodes to reach them")
    return lines


def created_todo(spec: ClusterSpec) -> list[str]:
    """What an AKS cluster the stack created (scheduler.create) leaves to the user."""
    return [
        "scheduler: register the subscription's AKSInfinibandSupport feature before `pulumi up` (nodes of a pool on "
        "one InfiniBand network), install NVIDIA's Network Operator and GPU Operator as Azure's aks-rdma-infiniband "
        "guide does, and Kueue v0.16+; the API server is private: kubectl from inside the VNet or `az aks command "
        "invoke`",
    ]


def home_volume_note(spec: ClusterSpec) -> str:
    """Where pods reach the /home share from, with AKS."""
    return ", from a VNet peered with the stack's" if spec.kubernetes and not spec.scheduler.create else ""


def storage_subnet_ready(spec: ClusterSpec) -> bool:
    """With AKS the stack's VNet holds the file systems' subnets only."""
    return not spec.kubernetes


def identity(spec: ClusterSpec) -> str:
    """What the nodes are allowed to do, in one line."""
    assert spec.cloud is not None
    data = ", ".join(spec.cloud.data_buckets) or "none"
    registries = ", ".join(registry.rsplit("/", 1)[-1] for registry in spec.cloud.registries) or "none"
    return ("identity: a user-assigned managed identity on every scale set: Storage Blob Data Reader on the "
            f"accounts in cloud.data_buckets ({data.count('/subscriptions/') or 'none'}), AcrPull on the registries "
            f"in cloud.registries ({registries}); managed disks encrypted at rest by the platform")


def placement(spec: ClusterSpec, pool: PoolSpec) -> str:
    if spec.kubernetes:
        return "on demand"
    return "in one placement group (one InfiniBand fabric)"


def own_routes(spec: ClusterSpec) -> str | None:
    return None


def reservations(spec: ClusterSpec) -> list[str] | None:
    """Reservations are not used: what to arrange instead."""
    assert spec.cloud is not None
    return [f"capacity: {spec.nodes} ND VMs in {spec.cloud.region}: the scale set asks for them on demand "
            "(reservations are not used on Azure); arrange capacity with Azure ahead of time"]


def reservation_kind(pool: PoolSpec) -> str:
    return "reservation"
