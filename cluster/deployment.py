"""What `pulumi up` leaves behind on a cloud target, and what the user must still do.

`plan` prints this beside the resource tree: the resources say what is registered, these lines
say what it amounts to (nodes, placement, the way in and out) and what no stack can do for you
(quota, the reservation, the image, the login key). Worked out from the validated spec and the
instance catalog only, so it reads the same offline and live.
"""

from __future__ import annotations

from dataclasses import dataclass

from cluster import scheduler as k8s
from cluster.catalog import load_catalog
from cluster.clouds import cloud as cloud_target
from cluster.resolve import access_of
from cluster.spec import ClusterSpec, PoolSpec


@dataclass(frozen=True)
class Deployment:
    creates: tuple[str, ...]  # what exists after `pulumi up`
    todo: tuple[str, ...]  # what the user must still do


def deployment(spec: ClusterSpec) -> Deployment | None:
    """The cloud target's summary; None on premises (the plan there is files on disk)."""
    if not spec.is_cloud or spec.cloud is None:
        return None
    cloud, target = spec.cloud, spec.target
    provider = cloud_target(target)
    catalog = load_catalog()
    creates: list[str] = []
    todo: list[str] = []
    access = access_of(cloud, target)
    for pool in spec.pools:
        instance = catalog.instance(target, pool.instance_type or "")
        assert instance is not None  # the resolver rejects unknown instance types
        where = (pool.capacity.zone if pool.capacity else None) or cloud.region
        group = (f"{k8s.managed(spec.scheduler.kind).kubernetes_pool} {k8s.pool_name(spec, pool)} of {_cluster(spec)}"
                 if spec.kubernetes else f"one {provider.group}")
        creates.append(f"pool {pool.name}: {pool.nodes} x {pool.instance_type} ({pool.gpus} {pool.gpu} GPUs) in "
                       f"{group} in {where}, {_placement(spec, pool)}; no public IP on any node")
        todo.append(provider.quota.format(vcpus=pool.nodes * instance.vcpus, gpus=pool.gpus, gpu=pool.gpu,
                                          region=cloud.region, pool=pool.name, nodes=pool.nodes,
                                          vcpus_per_node=instance.vcpus, instance_type=pool.instance_type))
    if spec.scheduler.create:
        creates.append(_control_plane(spec))
    if spec.kubernetes:
        creates.append(_scheduler(spec))
    aks = spec.scheduler.kind == "aks"
    if aks and spec.scheduler.create:
        creates.append("network: a resource group and a VNet (10.0.0.0/16) whose management subnet holds every node "
                       "of the AKS cluster; the file systems' subnets are in the same VNet, so no peering; no NSG, NAT "
                       "gateway, Bastion or node identity of the stack's: the cluster's own")
    elif aks:
        creates.append("network: " + (
            "a resource group and a VNet holding only the file systems' own subnets; no management subnet, NSG, NAT "
            "gateway, Bastion or node identity: the node pools use the AKS cluster's" if _file_systems(spec) else
            "none: the node pools join the AKS cluster's VNet, identity and outbound path, so the stack creates no "
            "resource group, VNet, NAT gateway, Bastion or node identity"))
    else:
        creates.append(_egress(spec))
        creates.append(_identity(spec))
    if spec.filesystem is not None:
        creates.append(_filesystem(spec))
    if spec.home is not None:
        creates.append(_home(spec))
    if aks and spec.scheduler.create:
        creates.append("way in: the AKS cluster's private API server (`az aks command invoke --resource-group <group> "
                       f"--name {spec.scheduler.cluster} --command 'kubectl get nodes'`, the group from `pulumi stack "
                       "output network`: resource_group), or kubectl from inside the VNet")
    elif aks:
        creates.append("way in: the AKS cluster's own (`az aks get-credentials --resource-group "
                       f"{spec.scheduler.resource_group} --name {spec.scheduler.cluster}`, then kubectl)")
    else:
        creates.append(f"way in: {provider.access[access]}" if access in provider.access else
                       f"way in: none created (cloud.access none): SSH from cloud.ssh_cidrs "
                       f"({', '.join(cloud.ssh_cidrs) or 'none given'}) over a VPN or peering of your own")
    todo.extend(_reservations(spec))
    todo.extend(_images(spec))
    if provider.key_todo is not None and not spec.kubernetes:
        todo.append(provider.key_todo)
    if any(catalog.instance(target, pool.instance_type or "").layout == "rdma-vpc"  # type: ignore[union-attr]
           for pool in spec.pools):
        todo.append(f"network profile: {cloud.zone}-vpc-roce must exist in the project (RoCE zones of A3 Ultra / A4 "
                    "only)")
    if access in provider.client_todo:
        todo.append(provider.client_todo[access])
    if not cloud.data_buckets and not aks:
        todo.append("data: the nodes' identity reads no bucket; name the training data's in cloud.data_buckets")
    if provider.kubelet_todo is not None and spec.kubernetes:
        todo.append(provider.kubelet_todo)
    elif provider.registry_todo is not None and not cloud.registries:
        todo.append(provider.registry_todo)
    if provider.os_login_todo is not None and not cloud.ssh_public_key and not spec.kubernetes:
        todo.append(provider.os_login_todo)
    if provider.named_image_todo is not None and any(pool.capacity is not None and not pool.capacity.default_image
                                                     for pool in spec.pools):
        todo.append(provider.named_image_todo)
    todo.extend(_not_created(spec))
    return Deployment(tuple(creates), tuple(todo))


def _cluster(spec: ClusterSpec) -> str:
    """The existing managed cluster the node pools join, in words."""
    scheduler = spec.scheduler
    service = k8s.managed(scheduler.kind).kubernetes_service
    if scheduler.create:
        where = {"gke": scheduler.location or "", "eks": spec.cloud.region if spec.cloud else "",
                 "aks": "the stack's resource group"}[scheduler.kind]
        return f"{service} cluster {scheduler.cluster} ({where}, created by the stack)"
    where = {"eks": spec.cloud.region if spec.cloud else "", "gke": scheduler.location or "",
             "aks": f"resource group {scheduler.resource_group}"}[scheduler.kind]
    return f"{service} cluster {scheduler.cluster} ({where})"


def _control_plane(spec: ClusterSpec) -> str:
    """The control plane a stack with scheduler.create builds, in words."""
    scheduler = spec.scheduler
    if scheduler.kind == "gke":
        return (f"control plane: {_cluster(spec)}, Kubernetes {scheduler.version} on the {k8s.GKE_RELEASE_CHANNEL} "
                "channel, on the management VPC: VPC-native, multi-networking with GKE Dataplane V2, private nodes and "
                "a private endpoint only, Workload Identity, no default node pool; deletion protection on")
    if scheduler.kind == "eks":
        return (f"control plane: {_cluster(spec)}, Kubernetes {scheduler.version}, a private endpoint only, in "
                f"/28 subnets of {', '.join(scheduler.zones or [])}; its IAM role (AmazonEKSClusterPolicy); access "
                "entries (EKS adds the node role's, you as cluster admin); a system node group of "
                "2 x m5.xlarge in the management subnet; the GPU nodes carry the cluster security group; "
                "deletion protection on")
    return (f"control plane: {_cluster(spec)}, Kubernetes {scheduler.version}, a private cluster (no public API "
            "server), Azure CNI Overlay (pods 10.4.0.0/14, services 10.8.0.0/20), a system-assigned managed "
            "identity, a system node pool of 3 x Standard_DS4_v2 tainted CriticalAddonsOnly")


def _scheduler(spec: ClusterSpec) -> str:
    """What the node pools give the scheduler: labels, taints, and the nodes' Kubernetes."""
    kind = spec.scheduler.kind
    taint = ("GKE's own nvidia.com/gpu=present:NoSchedule taint" if kind == "gke" else
             f"the taint {k8s.GPU_TAINT_KEY}={k8s.GPU_TAINT_VALUE}:NoSchedule")
    extra = {"eks": "; the node group's launch template keeps every EFA interface, the placement and the reservation",
             "gke": "; the storage VPC and every RDMA subnet attached as additional node networks",
             "aks": "; one node pool, one scale set, so one InfiniBand network per pool"}[kind]
    return (f"scheduler: the GPU nodes join {_cluster(spec)} as {k8s.managed(kind).kubernetes_pool}s, each node labelled "
            f"{k8s.POOL_LABEL}=<pool> and carrying {taint}, which the exported Kueue flavors select and "
            f"tolerate{extra}")


# What joining an existing cluster leaves to the user, per kind (the add-ons the pools need to train).
KUBERNETES_TODO = {
    "eks": ["scheduler: the EKS cluster must exist in the VPC cloud.vpc_id names; install the EFA device plugin "
            "(vpc.amazonaws.com/efa), the NVIDIA device plugin or GPU Operator, and Kueue v0.16+ (then `kubectl "
            "apply -f kubernetes/kueue.yaml`); EKS gives the node role its access entry itself"],
    "gke": ["scheduler: the GKE cluster must have multi-networking and GKE Dataplane V2 on; apply `pulumi stack output "
            "kubernetes_networks` (the Network objects the Jobs' interface annotations name), then install Kueue "
            "v0.16+ and the gIB NCCL plugin (Cluster Toolkit's gke-a3-ultragpu nccl-installer)",
            "way in: GKE nodes are on the cluster's own VPC, not the management VPC: reach them with kubectl (the "
            "stack's IAP rule and Cloud NAT serve the management VPC only; cloud.access / egress none drop them); "
            "private nodes reach the internet through the cluster VPC's Cloud NAT"],
    "aks": ["scheduler: register the subscription's AKSInfinibandSupport feature (nodes of a pool on one "
            "InfiniBand network), install NVIDIA's Network Operator and GPU Operator as Azure's aks-rdma-infiniband "
            "guide does, and Kueue v0.16+"],
}


# What a GKE cluster the stack created (scheduler.create) leaves to the user.
GKE_CREATED_TODO = [
    "scheduler: the control plane has only a private endpoint: run kubectl from inside the management VPC (a VM "
    "reached through IAP, or a VPN); apply `pulumi stack output kubernetes_networks` (the Network objects the Jobs' "
    "interface annotations name), then install Kueue v0.16+ and the gIB NCCL plugin (Cluster Toolkit's "
    "gke-a3-ultragpu nccl-installer)",
    "upgrades: the REGULAR channel upgrades the control plane in GKE's maintenance windows; the GPU node pools "
    "have auto-upgrade off",
]


# What an EKS or AKS cluster the stack created (scheduler.create) leaves to the user.
EKS_CREATED_TODO = [
    "scheduler: the control plane has only a private endpoint: run kubectl from inside the VPC (a node through "
    "Session Manager, or a VPN); install the EFA device plugin (vpc.amazonaws.com/efa), the NVIDIA device plugin or "
    "GPU Operator, and Kueue v0.16+ (then `kubectl apply -f kubernetes/kueue.yaml`); with cloud.vpc_id the VPC "
    "must have DNS support and DNS hostnames on (the private endpoint's name resolves only so)",
    "upgrades: the control plane stays at its version until you raise scheduler.version (one minor at a time); "
    "the node groups follow their launch template",
]
AKS_CREATED_TODO = [
    "scheduler: register the subscription's AKSInfinibandSupport feature before `pulumi up` (nodes of a pool on "
    "one InfiniBand network), install NVIDIA's Network Operator and GPU Operator as Azure's aks-rdma-infiniband "
    "guide does, and Kueue v0.16+; the API server is private: kubectl from inside the VNet or `az aks command "
    "invoke`",
]
CREATED_TODO = {"gke": GKE_CREATED_TODO, "eks": EKS_CREATED_TODO, "aks": AKS_CREATED_TODO}


def _not_created(spec: ClusterSpec) -> list[str]:
    """What a training cluster needs that this stack does not create, said plainly."""
    target = spec.target
    provider = cloud_target(target)
    if spec.scheduler.create:
        lines = list(CREATED_TODO[spec.scheduler.kind])
    elif spec.kubernetes:
        lines = list(KUBERNETES_TODO[spec.scheduler.kind])
        if spec.scheduler.kind == "aks" and _file_systems(spec):
            lines.append("network: the node pools are on the AKS cluster's VNet, the stack's file systems on the "
                         "stack's VNet (10.0.0.0/16): peer the two (their address spaces must not overlap) for the "
                         "nodes to reach them")
    else:
        lines = [
            f"scheduler: none created (scheduler.kind none): the nodes boot as bare VMs in their {provider.group}s, "
            f"joined to no Slurm controller and no Kubernetes cluster; the exported Kueue objects select the labels "
            f"{provider.provider}'s managed Kubernetes sets and schedule nothing until these nodes join "
            f"{provider.kubernetes_pools} of yours (scheduler.kind {provider.kubernetes} builds them)"]
    if spec.filesystem is not None and spec.scheduler.kind in ("gke", "aks"):
        lines.append(f"shared storage: {k8s.managed(spec.scheduler.kind).kubernetes_service} nodes do not run the "
                     "stack's boot script, so "
                     f"nothing mounts {spec.filesystem.mount}: mount the file system through the provider's Lustre CSI "
                     "driver")
    if spec.home is not None and spec.scheduler.kind in ("gke", "aks"):
        lines.append(f"home: {k8s.managed(spec.scheduler.kind).kubernetes_service} nodes do not run the stack's boot "
                     "script, so nothing "
                     f"mounts {spec.home.mount}: give pods the share as an NFS volume (`pulumi stack output network`: "
                     "home.source)" + (", from a VNet peered with the stack's" if spec.scheduler.kind == "aks"
                                          and not spec.scheduler.create else ""))
    if spec.filesystem is None:
        lines.append(f"shared storage: none created ({provider.lustre.short}; storage.filesystem creates one)"
                     + ("" if spec.scheduler.kind == "aks" else ": the storage network's subnet is ready for it "
                        "(`pulumi stack output network`: subnets.storage)"))
    else:
        lines.append(f"shared storage: the node image must carry the Lustre client, or the boot script leaves "
                     f"{spec.filesystem.mount} unmounted (it says so in the boot log); the file system is protected, so "
                     "`pulumi destroy` stops at it until you unprotect it (`pulumi state unprotect`) to delete the data")
    if spec.home is None:
        lines.append(f"home: none created ({provider.home.short}; storage.home creates one): users' "
                     "homes stay on each node's root volume")
    elif spec.scheduler.kind not in ("gke", "aks"):
        lines.append(f"home: the NFS share covers each node's {spec.home.mount} at boot, after the image's own "
                     f"{spec.home.mount} is copied onto it without overwriting; the share is protected like the "
                     "shared file system")
    return lines


def _home(spec: ClusterSpec) -> str:
    home = spec.home
    assert home is not None
    where = cloud_target(spec.target).home.where
    mounted = ("mounted at /home on every node at boot" if spec.scheduler.kind in ("none", "eks")
               else "not mounted by the node pools")
    return f"home: {home.service}, {home.capacity_gib:,} GiB, {where}, {mounted}; protected"


def _file_systems(spec: ClusterSpec) -> bool:
    return spec.filesystem is not None or spec.home is not None


def _filesystem(spec: ClusterSpec) -> str:
    fs = spec.filesystem
    assert fs is not None
    asked = (f", for {fs.gpus:,} GPUs at {fs.mbps_per_gpu:,} MB/s each" if fs.mbps_per_gpu else "")
    return (f"shared storage: {fs.service}, {fs.capacity_gib:,} GiB at {fs.tier} MB/s per TiB = "
            f"{fs.throughput_mbps:,} MB/s{asked}, on the storage network, mounted at {fs.mount} on every node at boot; "
            "protected")


def _identity(spec: ClusterSpec) -> str:
    """What the nodes are allowed to do, in one line."""
    assert spec.cloud is not None
    data = ", ".join(spec.cloud.data_buckets) or "none"
    if spec.target == "aws":
        return ("identity: an instance profile reading the account's ECR images and the S3 buckets in "
                f"cloud.data_buckets ({data}); IMDSv2 only, hop limit 2; encrypted root volumes; an S3 gateway "
                "endpoint on the private route table" + ("" if spec.cloud.vpc_id is None else " (new VPCs only)"))
    if spec.target == "gcp":
        return ("identity: a service account with Artifact Registry read, log and metric write, and storage read on "
                f"the buckets in cloud.data_buckets ({data}); Shielded VM (vTPM, integrity monitoring)"
                + ("" if spec.cloud.ssh_public_key else "; OS Login"))
    registries = ", ".join(registry.rsplit("/", 1)[-1] for registry in spec.cloud.registries) or "none"
    return ("identity: a user-assigned managed identity on every scale set: Storage Blob Data Reader on the "
            f"accounts in cloud.data_buckets ({data.count('/subscriptions/') or 'none'}), AcrPull on the registries "
            f"in cloud.registries ({registries}); managed disks encrypted at rest by the platform")


def _images(spec: ClusterSpec) -> list[str]:
    """The default image once, then each image the stack names, with the pools that boot it."""
    assert spec.cloud is not None
    if spec.scheduler.kind in NODE_IMAGE:
        return [f"image: {NODE_IMAGE[spec.scheduler.kind]}"]
    lines = []
    if any(pool.capacity is not None and pool.capacity.default_image for pool in spec.pools):
        lines.append(f"image: the default is {cloud_target(spec.target).default_image_words}; check it is published "
                     f"in {spec.cloud.region} for your project or account")
    named: dict[str, list[str]] = {}
    for pool in spec.pools:
        if pool.capacity is not None and not pool.capacity.default_image:
            named.setdefault(pool.capacity.image, []).append(pool.name)
    lines += [f"image: {image} (pool(s) {', '.join(pools)}) must carry {cloud_target(spec.target).image_needs}"
              + (" and join the EKS cluster itself (nodeadm; EKS bootstraps only its own AMIs)"
                 if spec.scheduler.kind == "eks" else "")
              for image, pools in named.items()]
    if spec.scheduler.kind == "eks" and any(pool.capacity is not None and pool.capacity.default_image
                                            for pool in spec.pools):
        lines[0] = ("image: the node group's EKS-optimized Amazon Linux 2023 NVIDIA AMI (ami_type AL2023_*_NVIDIA): "
                    "add the EFA installer and a Lustre client to it, or name an EKS-ready AMI in cloud.image")
    return lines


# GKE and AKS node pools boot the service's own node image (cloud.image is SPEC-IGNORED there).
NODE_IMAGE = {"gke": "GKE's node image (Container-Optimized OS) with the NVIDIA driver GKE installs for the node "
                     "pool's accelerator (gpu_driver_version LATEST); cloud.image is not used",
              "aks": "AKS's Ubuntu node image; the InfiniBand and GPU drivers come from NVIDIA's Network Operator and "
                     "GPU Operator; cloud.image is not used"}


def _placement(spec: ClusterSpec, pool: PoolSpec) -> str:
    assert spec.cloud is not None
    if spec.scheduler.kind == "gke":
        return "placed by its reservation" if pool.capacity is not None and pool.capacity.reservation else "on demand"
    if spec.scheduler.kind == "aks":
        return "on demand"
    if spec.target == "aws":
        if pool.capacity is not None and pool.capacity.reserved:
            return "placed by its reservation (no new placement group)"
        return "in a new cluster placement group"
    if spec.target == "gcp":
        if pool.capacity is not None and pool.capacity.reservation is not None:
            return ("placed by its reservation (no workload policy), template updates applied only when a VM is "
                    "recreated; `pulumi up` waits until every VM runs")
        return "placed by a HIGH_THROUGHPUT workload policy; `pulumi up` waits until every VM runs"
    return "in one placement group (one InfiniBand fabric)"


def _egress(spec: ClusterSpec) -> str:
    assert spec.cloud is not None
    if spec.cloud.egress == "none":
        return "way out: none (cloud.egress none): nodes cannot pull images or packages without a proxy of yours"
    if spec.target == "aws" and spec.cloud.vpc_id is not None:
        return f"way out: the existing VPC {spec.cloud.vpc_id}'s own routes (no NAT gateway created)"
    return f"way out: {cloud_target(spec.target).egress}"


def _reservations(spec: ClusterSpec) -> list[str]:
    """What each reservation must hold (type, zone, nodes of every pool that draws on it), or why
    pools without one may not start."""
    assert spec.cloud is not None
    cloud = spec.cloud
    if spec.target == "azure":
        return [f"capacity: {spec.nodes} ND VMs in {cloud.region}: the scale set asks for them on demand "
                "(reservations are not used on Azure); arrange capacity with Azure ahead of time"]
    lines = []
    unreserved = [pool for pool in spec.pools if pool.capacity is None or pool.capacity.reservation is None]
    if unreserved:
        nodes = sum(pool.nodes for pool in unreserved)
        names = ", ".join(pool.name for pool in unreserved)
        lines.append(f"reservation: none: pool(s) {names}, {nodes} GPU nodes on demand in one zone are rarely "
                     "available at once; get a Capacity Block / ODCR (AWS) or a reservation (GCP) and name it in "
                     "cloud.reservation or the pool's cloud.reservation")
    sharing: dict[str, list[PoolSpec]] = {}
    for pool in spec.pools:
        if pool.capacity is not None and pool.capacity.reservation is not None:
            sharing.setdefault(pool.capacity.reservation, []).append(pool)
    for reservation, pools in sharing.items():
        first = pools[0]
        assert first.capacity is not None
        kind = ("reservation" if spec.target == "gcp" else
                "Capacity Block" if first.capacity.market == "capacity-block" else "ODCR")
        lines.append(f"reservation: {kind} {reservation} must exist in {first.capacity.zone or cloud.region} with room "
                     f"for {sum(pool.nodes for pool in pools)} x {first.instance_type} (pool(s) "
                     f"{', '.join(pool.name for pool in pools)}), and be active whenever the group launches")
    return lines
