"""The resolved spec: the stack file with every default filled from the catalogs.

Frozen models that everything downstream reads; `cluster.resolve.resolve` builds them from a raw
mapping or reports SCHEMA findings. Nothing downstream re-reads the raw mapping.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import ClassVar, Literal, Self

from pydantic import BaseModel, ConfigDict

from cluster import clouds
from cluster import stackfile as sf
from cluster.findings import Severity

Target = sf.Target
CLOUD_TARGETS = clouds.names()  # every folder of cluster/clouds/
MAX_TOTAL_NODES = 200_000


class Spec(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    # A spec resolved from one stack-file model (`given_as`) shares some fields with it by name: the
    # ones resolution changes are `resolved`, each with why; `from_stack` copies the others as given.
    given_as: ClassVar[type[sf.Model] | None] = None
    resolved: ClassVar[Mapping[str, str]] = {}

    @classmethod
    def copied(cls, given: type[sf.Model]) -> tuple[str, ...]:
        """The fields this spec takes from `given` as the stack file gives them: both have them by
        name, and resolution changes none of them."""
        return tuple(name for name in cls.model_fields if name in given.model_fields and name not in cls.resolved)

    @classmethod
    def from_stack(cls, given: sf.Model, ignored: Iterable[str] = (), **decided: object) -> Self:
        """The spec of `given`: its copied fields as given, the ones in `ignored` (keys the resolver
        reports as ignored on this target) left at the spec's default, and what the resolver
        `decided`: the `resolved` fields and those the stack file does not have. Passing a copied
        field, or ignoring one without a default, is a defect of the caller."""
        if cls.given_as is None or not isinstance(given, cls.given_as):
            raise TypeError(f"{cls.__name__} is not resolved from a {type(given).__name__}")
        copied = cls.copied(type(given))
        skipped = set(ignored)
        if stray := sorted(skipped - set(copied)):
            raise TypeError(f"{cls.__name__}: {', '.join(stray)} are not copied from the stack file, so not ignored")
        if repeated := sorted(set(copied) & set(decided)):
            raise TypeError(f"{cls.__name__}: {', '.join(repeated)} are copied from the stack file, not decided")
        if no_default := sorted(name for name in skipped if cls.model_fields[name].is_required()):
            raise TypeError(f"{cls.__name__}: {', '.join(no_default)} have no default to leave them at")
        values = {name: getattr(given, name) for name in copied if name not in skipped}
        return cls.model_validate(values | decided)


class SwitchModel(Spec):
    """One switch as deployed: ports counted at `port_gbps` (breakouts included)."""

    model: str
    ports: int
    port_gbps: int
    os: str  # its dialect (cluster/dialects/<os>/)
    path: str
    uplink_ports: int = 0  # fixed uplink ports apart from `ports`
    uplink_gbps: int = 0
    transport: Literal["ethernet", "infiniband"] = "ethernet"
    chosen: str = ""  # why the resolver picked this model when the stack file names none (the BOM says it)
    # Where its OS comes from: the `os` key the stack file gives for this tier or, for a tier that
    # gives none, for another tier of its network (that network's OS); "" for the catalog's default.
    os_source: str = ""
    # When the network's OS is given elsewhere and this tier cannot run it: `sonic (storage.leaf.os)`
    # and why not (NET-OS-MIX reports it); both "" otherwise.
    os_wanted: str = ""
    os_mismatch: str = ""

    @property
    def capacity_gbps(self) -> int:
        return self.ports * self.port_gbps + self.uplink_ports * self.uplink_gbps


class Nics(Spec):
    count: int
    gbps: int
    ports_per_nic: int = 1
    devices: tuple[str, ...] = ()  # RDMA device per port, rail order; () = naming convention
    interfaces: tuple[str, ...] = ()  # netdev per port, rail order; () = naming convention

    @property
    def ports(self) -> int:
        return self.count * self.ports_per_nic

    @property
    def total_gbps(self) -> int:
        return self.ports * self.gbps


class PoolCapacity(Spec):
    """Where a cloud pool's nodes run and how they are bought: the pool's own `cloud` keys, else the
    cluster's. `*_path` name the stack-file key each value came from (findings point there)."""

    zone: str | None
    market: Literal["on-demand", "capacity-block", "spot"]
    reservation: str | None  # the Capacity Block / ODCR id, or the GCP reservation name
    image: str = ""  # the node image: the pool's, the cluster's, or the provider's default for the arch
    default_image: bool = False  # the provider's default (the plan says to check it is published)
    zone_path: str = "cloud.zone"
    market_path: str = "cloud.market"
    reservation_path: str = "cloud.reservation"

    @property
    def reserved(self) -> bool:
        """Capacity held for the pool: a Capacity Block or a reservation it targets."""
        return self.market == "capacity-block" or self.reservation is not None


class PoolSpec(Spec):
    given_as = sf.NodePool
    resolved = {
        "gpu": "the server's or the instance type's GPU where the stack file names none",
        "gpus_per_node": "the server's, the GPU board's or the instance type's count where the stack file gives none",
        "server": "the GPU's default server where the stack file names none; none on cloud targets",
        "fabric_nics": "the server's or the instance type's NICs where the stack file gives none, as Nics",
        "storage_nics": "the server's or the instance type's NICs where the stack file gives none, as Nics",
        "management_nics": "the server's or the instance type's NICs where the stack file gives none, as Nics",
    }

    name: str
    index: int
    nodes: int
    gpu: str
    gpus_per_node: int
    nvlink_domain: int
    server: str | None
    instance_type: str | None = None  # cloud targets: as the stack file gives it
    fabric_nics: Nics
    fabric_kind: str  # roce | infiniband | efa | rdma | gpudirect-tcpx(o)
    storage_nics: Nics
    management_nics: Nics
    address_block: int | None = None  # as the stack file gives it
    catalog_nics: tuple[str, ...] = ()  # NIC sets the server catalog filled in (the stack file gave none)
    capacity: PoolCapacity | None = None  # cloud targets: zone, market and reservation
    previous_names: tuple[str, ...] = ()  # cloud targets: the pool's earlier names, oldest first

    @property
    def first_name(self) -> str:
        """The pool's oldest name: what host names keep across renames."""
        return self.previous_names[0] if self.previous_names else self.name

    @property
    def path(self) -> str:
        return f"node_pools[{self.index}]"

    @property
    def host_block(self) -> int:
        """The block of the host address pools this pool takes: its address_block, else its position."""
        return self.index if self.address_block is None else self.address_block

    @property
    def gpus(self) -> int:
        return self.nodes * self.gpus_per_node

    def gpu_ports(self) -> list[set[tuple[int, int]]]:
        """The fabric (nic, port) pairs each GPU of a node uses: NICs shared evenly, in order (with
        fewer NICs than GPUs, consecutive GPUs share one). The one GPU-to-NIC map."""
        nics, gpus = self.fabric_nics, self.gpus_per_node
        result = []
        for gpu in range(gpus):
            first = gpu * nics.count // gpus
            last = max(first + 1, (gpu + 1) * nics.count // gpus) if nics.count >= gpus else first + 1
            result.append({(nic, port) for nic in range(first, last) for port in range(nics.ports_per_nic)})
        return result

    def nics(self, network: str) -> Nics:
        """The pool's NIC set on `network` (fabric, storage or management): the one place that maps
        a network to the NICs a node has on it."""
        sets = {"fabric": self.fabric_nics, "storage": self.storage_nics, "management": self.management_nics}
        if network not in sets:
            raise ValueError(f"no NIC set for network {network!r}: hosts reach it through their BMC")
        return sets[network]


class Oversubscription(Spec):
    leaf: float
    spine: float
    core: float


class FabricSpec(Spec):
    given_as = sf.Fabric
    resolved = {
        "transport": "the leaf switch's where the stack file gives none",
        "leaf": "the switch model as deployed, from the catalog",
        "spine": "the switch model as deployed, from the catalog",
        "core": "the switch model as deployed, from the catalog",
        "max_oversubscription": "one ratio becomes that ratio on every tier",
    }

    transport: Literal["roce", "infiniband"]
    design: Literal["rail-optimized", "rack-tor"]
    planes: int
    rails: int  # fabric ports per node per plane (the widest pool)
    leaf: SwitchModel
    spine: SwitchModel
    core: SwitchModel
    leaves: int | None
    spines: int | None
    cores: int | None
    pods: int | None
    leaf_uplinks: int | None
    spine_uplinks: int | None
    max_oversubscription: Oversubscription
    shared_with: tuple[str, ...]
    fill: Literal["even", "packed"] = "even"
    uplink_layout: Literal["blocks", "striped"] = "blocks"


class NetworkSpec(Spec):
    given_as = sf.Network  # sf.StorageNetwork for storage, whose lossless and ecn are copied too
    resolved = {
        "leaf": "the switch model as deployed, from the catalog",
        "spine": "the switch model as deployed, from the catalog",
        "max_oversubscription": "3.0 where the stack file gives none (cluster.resolve.NETWORK_RATIO)",
        "targets": "the ranges clear of the design's address pools (cluster.resolve.storage_targets)",
    }

    name: Literal["storage", "management", "oob"]
    leaf: SwitchModel
    spine: SwitchModel
    leaves: int | None
    spines: int | None
    leaf_uplinks: int | None
    max_oversubscription: float
    targets: tuple[str, ...] = ()  # storage: prefixes of the storage systems hosts reach over it
    lossless: bool = False  # storage: PFC on the storage class (storage.lossless)
    ecn: sf.Ecn | None = None  # storage: the storage class's ECN thresholds as given (storage.ecn)


class PolicySpec(Spec):
    given_as = sf.Policy
    resolved = {"fail_on": "the severity the word names"}

    min_gbps_per_gpu: float
    recommended_gbps_per_gpu: float
    max_switch_hops: int | None
    fail_on: Severity
    suppress: tuple[str, ...]
    max_degraded_oversubscription: float | None = None  # FAB-N1 runs when set


class FileSystemPlan(Spec):
    """Cloud targets: the shared Lustre file system as sized (cluster.filesystems)."""

    service: str
    capacity_gib: int
    tier: int  # MB/s per TiB
    throughput_mbps: int  # capacity x tier
    mount: str
    gpus: int
    mbps_per_gpu: int | None


class HomePlan(Spec):
    """Cloud targets: the NFS file system mounted at /home (cluster.filesystems.plan_home)."""

    service: str
    capacity_gib: int
    mount: str  # /home
    options: str  # the NFS mount options the provider's guide gives


class ClusterSpec(Spec):
    given_as = sf.StackFile
    resolved = {
        "cloud": "the project or subscription the stack's provider settings supply filled in",
        "scheduler": "the kind the target offers and its node pool names checked; none on premises",
        "fabric": "switch models and counts resolved; none on cloud targets (the provider's fabric)",
        "storage": "switch models and counts resolved; none on cloud targets",
        "management": "switch models and counts resolved; none on cloud targets",
        "oob": "switch models and counts resolved; none on cloud targets",
        "qos": "the defaults where RoCE QoS applies and the stack file gives none; none where it does not apply",
        "policy": "fail_on as a severity",
        "management_plane": "the gateway and NTP servers filled in on premises",
    }

    name: str
    target: Target
    cloud: sf.Cloud | None
    pools: tuple[PoolSpec, ...]
    fabric: FabricSpec | None  # None on cloud targets: the provider's fabric
    storage: NetworkSpec | None
    management: NetworkSpec | None
    oob: NetworkSpec | None
    addressing: sf.Addressing
    asn: sf.Asn
    qos: sf.Qos | None  # None where no RoCE QoS applies (InfiniBand, cloud)
    # The classes the storage network's QoS plan reads (qos.storage, cnp, management, ecn, mtu): the
    # qos section, or its defaults, on premises, InfiniBand designs included (their storage is Ethernet)
    storage_qos: sf.Qos | None = None
    policy: PolicySpec
    costs: sf.Costs | None = None  # bill-of-materials overrides of prices.yaml
    management_plane: sf.ManagementPlane = sf.ManagementPlane()  # gateway and NTP filled in (on premises)
    provisioning: sf.Provisioning | None = None  # on premises: DHCP relayed to this server, PXE
    # Address pools the stack file leaves to the defaults (those may be enlarged for a large
    # design, cluster.addressing.fit_default_pools), and those that were, with the default they replace.
    default_pools: tuple[str, ...] = ()
    derived_pools: tuple[tuple[str, str], ...] = ()
    previous_names: tuple[str, ...] = ()  # cloud targets: the cluster's earlier names, oldest first
    filesystem: FileSystemPlan | None = None  # cloud targets: the shared file system (storage.filesystem)
    home: HomePlan | None = None  # cloud targets: the /home file system (storage.home)
    scheduler: sf.Scheduler = sf.Scheduler()  # cloud targets: the managed Kubernetes node pools join (kind none: bare)

    @property
    def first_name(self) -> str:
        """The cluster's oldest name: what host names keep across renames."""
        return self.previous_names[0] if self.previous_names else self.name

    @property
    def kubernetes(self) -> bool:
        """The GPU nodes join a managed Kubernetes cluster as its node pools (scheduler.kind)."""
        return self.scheduler.kind != "none"

    @property
    def is_cloud(self) -> bool:
        return self.target in CLOUD_TARGETS

    @property
    def gpus(self) -> int:
        return sum(pool.gpus for pool in self.pools)

    @property
    def nodes(self) -> int:
        return sum(pool.nodes for pool in self.pools)
