"""Cloud targets: one folder per provider, `cluster/clouds/<name>/`, found by this registry.

A cloud's folder holds what the design side knows of that provider, and nothing outside it (in
`cluster/`) names the provider: its `__init__.py` defines `CLOUD` (a `Cloud`), the facts capacity,
file systems, the scheduler, the NCCL and Kubernetes exports and `plan`'s summary look up. The
Pulumi side of the same provider is `components/<name>/` (its networks and node pools), which
`components/targets.py` imports by the target's name. Adding a cloud is those two folders and its
instance types in `cluster/catalog/instances.yaml`.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import cache

from cluster.folders import registered
from cluster.sshkeys import LoginKey


def round_up(value: float, step: int) -> int:
    """`value` rounded up to a whole number of `step`s, one step at least."""
    return max(step, math.ceil(value / step) * step)


@dataclass(frozen=True)
class Lustre:
    """The provider's managed Lustre (storage.filesystem): throughput scales with capacity."""

    service: str  # as the plan names it: `FSx for Lustre (PERSISTENT_2)`
    short: str  # as `plan` names the kind of file system: `FSx for Lustre`
    tiers: tuple[int, ...]  # MB/s per TiB it offers
    size: Callable[[int, float], tuple[int, int | None]]  # (tier, GiB needed) -> (its size, its largest or None)


@dataclass(frozen=True)
class Home:
    """The provider's NFS service for /home (storage.home)."""

    service: str  # as the plan names it
    short: str  # as `plan` names the kind of share
    default_gib: int
    smallest_gib: int
    largest_gib: int
    options: str  # the NFS mount options
    where: str  # where the share sits, in `plan`'s words
    step_gib: int = 1  # sizes it takes: multiples of this


def joined_name(cluster: str, pool: str) -> str:
    """A node pool's name in a shared managed cluster: `<cluster>-<pool>` (other stacks' pools are there too)."""
    return f"{cluster}-{pool}"


@dataclass(frozen=True)
class Managed:
    """What a cloud's managed Kubernetes takes from a stack's `scheduler`, as the resolver checks it."""

    # (cluster's oldest name, pool's oldest name) -> the node pool's name (oldest names: a provider
    # cannot rename a node pool in place)
    pool_name: Callable[[str, str], str] = joined_name
    pool_name_limit: int | None = None  # characters at most, where a length is all it checks
    # the node pool name's form, where it is more than a length: a regular expression and the
    # message's words for a name off it (`{name}` the name)
    pool_name_form: tuple[str, str] | None = None
    cluster_name_form: tuple[str, str] | None = None  # scheduler.create: the cluster's name, as regex and words
    default_version: str | None = None  # scheduler.create without scheduler.version
    # scheduler.version given: its form as a regular expression, what the service takes in words, the hint
    version_form: tuple[str, str, str] | None = None
    version_required: tuple[str, str] | None = None  # with no default: the message and the hint
    control_plane_zones: int = 0  # scheduler.create: the zones its control plane's subnets must span (0: none asked)
    own_keys: tuple[str, ...] = ()  # `scheduler` keys only this Kubernetes uses
    # joining an existing cluster: a key that must then be given (`cloud.vpc_id`, `scheduler.resource_group`),
    # the message and the hint (`{cluster}` the cluster's name)
    joined_needs: tuple[str, str, str] | None = None
    created_ignores: Mapping[str, tuple[str, str]] = field(default_factory=dict)  # created: key -> message, hint
    own_node_image: bool = False  # its node pools boot the service's node image (cloud.image is ignored)
    location_is_region: bool = False  # scheduler.location defaults to cloud.region
    one_rdma_zone: bool = False  # its node pools share the RDMA network objects of cloud.zone's VPC
    # an instance type whose catalog entry lacks this key gets no node pool here, and why (`{type}` the type)
    instance_needs: tuple[str, str] | None = None


@dataclass(frozen=True)
class Cloud:
    """What the design side may know of one cloud target."""

    name: str  # the stack file's `target`
    provider: str  # as a person names it: `Google Cloud`
    group: str  # what holds a bare pool's nodes: `managed instance group`
    kubernetes: str  # the scheduler.kind of its managed Kubernetes
    kubernetes_service: str  # that Kubernetes as a person names it: `Amazon EKS`
    kubernetes_pool: str  # what it calls a node pool: `managed node group`
    kubernetes_pools: str  # the same, plural and with its name: `EKS managed node groups`
    lustre: Lustre
    home: Home
    default_images: Mapping[str, str]  # CPU architecture -> the image a pool boots when the stack file names none
    default_image_words: str  # that image, as `plan` describes it
    image_needs: str  # what any image a pool boots must carry
    quota: str  # the quota a pool needs, with {vcpus} {gpus} {gpu} {region} {pool} {nodes} {vcpus_per_node} {instance_type}
    egress: str  # the way out it creates, in `plan`'s words
    topology_labels: tuple[str, ...]  # the node labels of its network topology, widest first (Kueue levels)
    data_buckets: tuple[str, str]  # cloud.data_buckets: the form of one, as a regular expression and in words
    # the prefix of numbered topology labels, one per layer of an instance type's topology (catalog
    # topology_layers), which replace topology_labels where given
    topology_layer: str | None = None
    managed: Managed = Managed()  # what its managed Kubernetes takes from `scheduler` (default: names only)
    close_level: int = 2  # the Kueue level nearest a host, counted from the end of the levels (the host is 1)
    one_fabric_per_pool: bool = False  # a pool's nodes share one fabric: a job's topology is required, not preferred
    fabric_per_layout: bool = False  # pools share a GPU fabric only in one zone with one NIC layout (else: one zone)
    fabrics: tuple[str, str] = ("", "")  # CLOUD-FABRICS: its GPU fabrics, in words, and the hint
    placement_group_vms: int | None = None  # most VMs of a pool, one placement group (None: no such limit)
    # (cluster's oldest name, pool's oldest name) -> the prefix of a pool's host names, where the
    # provider names VMs by one (None: it names them itself); two pools must not share one
    host_prefix: Callable[[str, str], str] | None = None
    fabric_resource: str | None = None  # the device plugin's resource for a fabric interface, one per interface
    gpu_taint_tolerated: bool = False  # its GPU nodes carry the GPU taint even as bare nodes
    # the provider's settings a stack may set beside the design (`<package>:<key>`), each -> the
    # `cloud` key it must agree with (cluster.resolve)
    provider_settings: Mapping[str, str] = field(default_factory=dict)
    own_keys: tuple[str, ...] = ()  # `cloud` keys only this target uses
    access: Mapping[str, str] = field(default_factory=dict)  # cloud.access mode -> the way in it creates, in words
    # cloud.access mode -> how to use that way in (the stack's `access` output), <...> what the user picks
    access_commands: Mapping[str, str] = field(default_factory=dict)
    # with its managed Kubernetes, whose API server is then the way in: the command that reaches it,
    # {resource_group} and {cluster} from `scheduler` (None: cloud.access stays the way in)
    kubernetes_access: str | None = None
    zone_suffix: str | None = None  # a zone's name after its region's, as a regular expression (None: no zones used)
    zone_form: str = ""  # that form in words, `{region}` the region
    capacity_unused: str | None = None  # why zone, market and reservation are not used there (None: they are)
    capacity_blocks: bool = False  # offers market capacity-block
    client_todo: Mapping[str, str] = field(default_factory=dict)  # cloud.access mode -> what the user's machine needs
    key_todo: str | None = None  # bare nodes: what their login key must be
    os_login_todo: str | None = None  # bare nodes without cloud.ssh_public_key: how users log in
    registry_todo: str | None = None  # when cloud.registries is empty on bare nodes
    kubelet_todo: str | None = None  # what its managed Kubernetes nodes run as, when the user must grant it
    named_image_todo: str | None = None  # when a pool names its own image
    login_key: LoginKey = field(default_factory=LoginKey)  # cloud.ssh_public_key as it takes it
    # cloud.registries: the form of one as a regular expression and in words, where its nodes'
    # identity is granted the registries it names; None where they read the registry of `own_registry`
    registries: tuple[str, str] | None = None
    own_registry: str = ""  # what holds the registry its nodes read: `account`
    # with its managed Kubernetes: `cloud` keys that configure what the stack creates for bare nodes
    # only, each -> what it does there
    bare_only_keys: Mapping[str, str] = field(default_factory=dict)


@cache
def clouds() -> Mapping[str, Cloud]:
    """Every cloud folder's CLOUD, by name."""
    return registered(__name__, __path__, "CLOUD", Cloud)


def cloud(name: str) -> Cloud:
    """The cloud target `name`; a name no folder has is a defect of the caller (the stack file's
    `target` is checked against `names()`)."""
    try:
        return clouds()[name]
    except KeyError:
        raise ValueError(f"no cloud target {name!r}: cluster/clouds/ has {', '.join(clouds())}") from None


def names() -> tuple[str, ...]:
    """The cloud targets a stack file may name."""
    return tuple(clouds())
