"""What `pulumi up` leaves behind on a cloud target, and what the user must still do.

`plan` prints this beside the resource tree: the resources say what is registered, these lines
say what it amounts to (nodes, placement, the way in and out) and what no stack can do for you
(quota, the reservation, the image, the login key). Worked out from the validated spec and the
instance catalog only, so it reads the same offline and live.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import Protocol, cast, runtime_checkable

from cluster import clouds
from cluster import scheduler as k8s
from cluster.catalog import load_catalog
from cluster.clouds import cloud as cloud_target
from cluster.resolve import access_of
from cluster.spec import ClusterSpec, PoolSpec


@runtime_checkable
class CloudPlan(Protocol):
    """A cloud's `plan` module (cluster/clouds/<cloud>/plan.py): what `plan` says of its stacks
    that needs the spec, beside the facts of its CLOUD. "Managed" means its managed Kubernetes
    (scheduler.kind), "bare" its bare nodes."""

    RESERVATION_WORDS: str | None  # what to get for pools without a reservation (None: reservations unused)
    GPU_TAINT: str | None  # the managed pools' own GPU taint, in words (None: the scheduler's)
    NODE_IMAGE: str | None  # the image managed pools boot regardless of cloud.image (None: the stack's)
    RUNS_BOOT_SCRIPT: bool  # managed nodes run the stack's boot script (file systems mounted at boot)
    SCHEDULER_EXTRA: str  # what the managed pools keep, after the scheduler line

    def managed_cluster_where(self, spec: ClusterSpec) -> str: ...

    def control_plane(self, spec: ClusterSpec, cluster: str) -> str: ...

    def kubernetes_network(self, spec: ClusterSpec) -> str | None: ...

    def kubernetes_way_in(self, spec: ClusterSpec) -> str | None: ...

    def joined_todo(self, spec: ClusterSpec) -> list[str]: ...

    def created_todo(self, spec: ClusterSpec) -> list[str]: ...

    def home_volume_note(self, spec: ClusterSpec) -> str: ...

    def storage_subnet_ready(self, spec: ClusterSpec) -> bool: ...

    def identity(self, spec: ClusterSpec) -> str: ...

    def named_image_note(self, spec: ClusterSpec) -> str: ...

    def default_image_line(self, spec: ClusterSpec) -> str | None: ...

    def placement(self, spec: ClusterSpec, pool: PoolSpec) -> str: ...

    def own_routes(self, spec: ClusterSpec) -> str | None: ...

    def reservations(self, spec: ClusterSpec) -> list[str] | None: ...

    def reservation_kind(self, pool: PoolSpec) -> str: ...


# What a cloud's plan module says where the cloud has nothing of its own to say; its plan.py imports
# those it keeps as they are.


def home_volume_note(spec: ClusterSpec) -> str:
    """Where pods reach the /home share from: nothing to add."""
    return ""


def storage_subnet_ready(spec: ClusterSpec) -> bool:
    """The stack's network holds the file systems' subnets as it does for bare nodes."""
    return True


def named_image_note(spec: ClusterSpec) -> str:
    """What an image a pool names must also do: nothing beyond what the cloud's record says."""
    return ""


def default_image_line(spec: ClusterSpec) -> str | None:
    """The default image's line: the cloud's record's, unchanged by its managed Kubernetes."""
    return None


def cloud_plan(target: str) -> CloudPlan:
    """The `plan` module of the cloud target `target` (tests/test_clouds.py holds each to CloudPlan)."""
    return cast("CloudPlan", importlib.import_module(f"cluster.clouds.{clouds.cloud(target).name}.plan"))


@dataclass(frozen=True)
class Deployment:
    creates: tuple[str, ...]  # what exists after `pulumi up`
    todo: tuple[str, ...]  # what the user must still do


def deployment(spec: ClusterSpec) -> Deployment | None:
    """The cloud target's summary; None on premises (the plan there is files on disk)."""
    if not spec.is_cloud or spec.cloud is None:
        return None
    cloud, target = spec.cloud, spec.target
    provider, plan = cloud_target(target), cloud_plan(target)
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
                       f"{group} in {where}, {plan.placement(spec, pool)}; no public IP on any node")
        todo.append(provider.quota.format(vcpus=pool.nodes * instance.vcpus, gpus=pool.gpus, gpu=pool.gpu,
                                          region=cloud.region, pool=pool.name, nodes=pool.nodes,
                                          vcpus_per_node=instance.vcpus, instance_type=pool.instance_type))
    if spec.scheduler.create:
        creates.append(_control_plane(spec))
    if spec.kubernetes:
        creates.append(_scheduler(spec))
    managed_network = plan.kubernetes_network(spec)  # None: the stack's own networks, way out and identity
    if managed_network is not None:
        creates.append(managed_network)
    else:
        creates.append(_egress(spec))
        creates.append(plan.identity(spec))
    if spec.filesystem is not None:
        creates.append(_filesystem(spec))
    if spec.home is not None:
        creates.append(_home(spec))
    way_in = plan.kubernetes_way_in(spec)
    if way_in is not None:
        creates.append(way_in)
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
    if not cloud.data_buckets and managed_network is None:
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
    """The managed cluster the node pools join, in words."""
    scheduler = spec.scheduler
    service = k8s.managed(scheduler.kind).kubernetes_service
    where = cloud_plan(spec.target).managed_cluster_where(spec)
    if scheduler.create:
        return f"{service} cluster {scheduler.cluster} ({where}, created by the stack)"
    return f"{service} cluster {scheduler.cluster} ({where})"


def _control_plane(spec: ClusterSpec) -> str:
    """The control plane a stack with scheduler.create builds, in words."""
    return cloud_plan(spec.target).control_plane(spec, _cluster(spec))


def _scheduler(spec: ClusterSpec) -> str:
    """What the node pools give the scheduler: labels, taints, and the nodes' Kubernetes."""
    kind, plan = spec.scheduler.kind, cloud_plan(spec.target)
    taint = plan.GPU_TAINT or f"the taint {k8s.GPU_TAINT_KEY}={k8s.GPU_TAINT_VALUE}:NoSchedule"
    return (f"scheduler: the GPU nodes join {_cluster(spec)} as {k8s.managed(kind).kubernetes_pool}s, each node labelled "
            f"{k8s.POOL_LABEL}=<pool> and carrying {taint}, which the exported Kueue flavors select and "
            f"tolerate{plan.SCHEDULER_EXTRA}")


def _not_created(spec: ClusterSpec) -> list[str]:
    """What a training cluster needs that this stack does not create, said plainly."""
    provider, plan = cloud_target(spec.target), cloud_plan(spec.target)
    # managed nodes that do not run the stack's boot script mount nothing it creates
    unmounted = spec.kubernetes and not plan.RUNS_BOOT_SCRIPT
    if spec.scheduler.create:
        lines = plan.created_todo(spec)
    elif spec.kubernetes:
        lines = plan.joined_todo(spec)
    else:
        lines = [
            f"scheduler: none created (scheduler.kind none): the nodes boot as bare VMs in their {provider.group}s, "
            f"joined to no Slurm controller and no Kubernetes cluster; the exported Kueue objects select the labels "
            f"{provider.provider}'s managed Kubernetes sets and schedule nothing until these nodes join "
            f"{provider.kubernetes_pools} of yours (scheduler.kind {provider.kubernetes} builds them)"]
    if spec.filesystem is not None and unmounted:
        lines.append(f"shared storage: {k8s.managed(spec.scheduler.kind).kubernetes_service} nodes do not run the "
                     "stack's boot script, so "
                     f"nothing mounts {spec.filesystem.mount}: mount the file system through the provider's Lustre CSI "
                     "driver")
    if spec.home is not None and unmounted:
        lines.append(f"home: {k8s.managed(spec.scheduler.kind).kubernetes_service} nodes do not run the stack's boot "
                     "script, so nothing "
                     f"mounts {spec.home.mount}: give pods the share as an NFS volume (`pulumi stack output network`: "
                     "home.source)" + plan.home_volume_note(spec))
    if spec.filesystem is None:
        lines.append(f"shared storage: none created ({provider.lustre.short}; storage.filesystem creates one)"
                     + (": the storage network's subnet is ready for it (`pulumi stack output network`: "
                        "subnets.storage)" if plan.storage_subnet_ready(spec) else ""))
    else:
        lines.append(f"shared storage: the node image must carry the Lustre client, or the boot script leaves "
                     f"{spec.filesystem.mount} unmounted (it says so in the boot log); the file system is protected, so "
                     "`pulumi destroy` stops at it until you unprotect it (`pulumi state unprotect`) to delete the data")
    if spec.home is None:
        lines.append(f"home: none created ({provider.home.short}; storage.home creates one): users' "
                     "homes stay on each node's root volume")
    elif not unmounted:
        lines.append(f"home: the NFS share covers each node's {spec.home.mount} at boot, after the image's own "
                     f"{spec.home.mount} is copied onto it without overwriting; the share is protected like the "
                     "shared file system")
    return lines


def _home(spec: ClusterSpec) -> str:
    home = spec.home
    assert home is not None
    where = cloud_target(spec.target).home.where
    unmounted = spec.kubernetes and not cloud_plan(spec.target).RUNS_BOOT_SCRIPT
    mounted = "not mounted by the node pools" if unmounted else "mounted at /home on every node at boot"
    return f"home: {home.service}, {home.capacity_gib:,} GiB, {where}, {mounted}; protected"


def _filesystem(spec: ClusterSpec) -> str:
    fs = spec.filesystem
    assert fs is not None
    asked = (f", for {fs.gpus:,} GPUs at {fs.mbps_per_gpu:,} MB/s each" if fs.mbps_per_gpu else "")
    return (f"shared storage: {fs.service}, {fs.capacity_gib:,} GiB at {fs.tier} MB/s per TiB = "
            f"{fs.throughput_mbps:,} MB/s{asked}, on the storage network, mounted at {fs.mount} on every node at boot; "
            "protected")


def _images(spec: ClusterSpec) -> list[str]:
    """The default image once, then each image the stack names, with the pools that boot it."""
    assert spec.cloud is not None
    plan = cloud_plan(spec.target)
    if spec.kubernetes and plan.NODE_IMAGE is not None:
        return [f"image: {plan.NODE_IMAGE}"]
    lines = []
    if any(pool.capacity is not None and pool.capacity.default_image for pool in spec.pools):
        lines.append(f"image: the default is {cloud_target(spec.target).default_image_words}; check it is published "
                     f"in {spec.cloud.region} for your project or account")
    named: dict[str, list[str]] = {}
    for pool in spec.pools:
        if pool.capacity is not None and not pool.capacity.default_image:
            named.setdefault(pool.capacity.image, []).append(pool.name)
    lines += [f"image: {image} (pool(s) {', '.join(pools)}) must carry {cloud_target(spec.target).image_needs}"
              + plan.named_image_note(spec) for image, pools in named.items()]
    default_line = plan.default_image_line(spec)
    if default_line is not None and any(pool.capacity is not None and pool.capacity.default_image
                                        for pool in spec.pools):
        lines[0] = default_line
    return lines


def _egress(spec: ClusterSpec) -> str:
    assert spec.cloud is not None
    if spec.cloud.egress == "none":
        return "way out: none (cloud.egress none): nodes cannot pull images or packages without a proxy of yours"
    return cloud_plan(spec.target).own_routes(spec) or f"way out: {cloud_target(spec.target).egress}"


def _reservations(spec: ClusterSpec) -> list[str]:
    """What each reservation must hold (type, zone, nodes of every pool that draws on it), or why
    pools without one may not start."""
    assert spec.cloud is not None
    cloud, plan = spec.cloud, cloud_plan(spec.target)
    instead = plan.reservations(spec)
    if instead is not None:
        return instead
    lines = []
    unreserved = [pool for pool in spec.pools if pool.capacity is None or pool.capacity.reservation is None]
    if unreserved:
        nodes = sum(pool.nodes for pool in unreserved)
        names = ", ".join(pool.name for pool in unreserved)
        lines.append(f"reservation: none: pool(s) {names}, {nodes} GPU nodes on demand in one zone are rarely "
                     f"available at once; get {_reservation_words()} and name it in cloud.reservation or the pool's "
                     "cloud.reservation")
    sharing: dict[str, list[PoolSpec]] = {}
    for pool in spec.pools:
        if pool.capacity is not None and pool.capacity.reservation is not None:
            sharing.setdefault(pool.capacity.reservation, []).append(pool)
    for reservation, pools in sharing.items():
        first = pools[0]
        assert first.capacity is not None
        kind = plan.reservation_kind(first)
        lines.append(f"reservation: {kind} {reservation} must exist in {first.capacity.zone or cloud.region} with room "
                     f"for {sum(pool.nodes for pool in pools)} x {first.instance_type} (pool(s) "
                     f"{', '.join(pool.name for pool in pools)}), and be active whenever the group launches")
    return lines


def _reservation_words() -> str:
    """What the clouds that use reservations call one, for pools that have none."""
    words = [plan.RESERVATION_WORDS for plan in map(cloud_plan, clouds.names()) if plan.RESERVATION_WORDS]
    return " or ".join(words)
