"""Domain facts as data: GPUs, on-prem servers, cloud instance types, switch models.

Each YAML file beside this module holds one catalog; every entry carries a `source` note. What
only one switch OS needs (its port maps per SKU, its per-platform forms) lives in that OS's
folder (cluster/dialects/<os>/), keyed by switch model.
The catalogs are read once per process and validated like any other input.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, model_validator

HERE = Path(__file__).parent


class Entry(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class Gpu(Entry):
    vendor: Literal["nvidia", "amd"]
    memory_gb: int
    gpus_per_node: int
    nvlink_domain: int
    scale_up_gbytes_per_s: int
    source: str


Status = Literal["VERIFIED", "PARTIAL", "UNVERIFIED"]


class NicLayout(Entry):
    count: int
    gbps: int
    ports_per_nic: int = 1
    devices: tuple[str, ...] = ()  # RDMA device per port in rail order, as the vendor documents it
    ports_per_cage: int = 1  # ports that share one front-panel cage (DGX H100: 2 per twin-port OSFP)
    # A server's NIC sets say how well their numbers are known (the weakest of them) and where they
    # come from; the DESIGN summary names every default a pool takes that is not VERIFIED.
    status: Status | None = None
    source: str = ""

    @model_validator(mode="after")
    def _one_device_per_port(self) -> NicLayout:
        if self.devices and len(self.devices) != self.count * self.ports_per_nic:
            raise ValueError(f"devices lists {len(self.devices)} names for {self.count * self.ports_per_nic} ports")
        if self.ports_per_cage < 1 or (self.count * self.ports_per_nic) % self.ports_per_cage:
            raise ValueError(f"ports_per_cage {self.ports_per_cage} does not divide {self.count * self.ports_per_nic} ports")
        return self


NIC_SETS = ("fabric_nics", "storage_nics", "management_nics")  # a server's NIC sets, as the stack file names them


class Server(Entry):
    gpu: str | None = None
    gpus: int
    fabric_nics: NicLayout
    storage_nics: NicLayout
    management_nics: NicLayout
    source: str

    @model_validator(mode="after")
    def _every_nic_set_has_a_source(self) -> Server:
        for name in NIC_SETS:
            nics: NicLayout = getattr(self, name)
            if nics.status is None or not nics.source.strip():
                raise ValueError(f"{name} needs a status and a source")
        return self


class CloudFabric(Entry):
    kind: Literal["efa", "gpudirect-tcpx", "gpudirect-tcpxo", "rdma", "infiniband"]
    count: int
    gbps: int


class NcclSetting(Entry):
    """One environment variable a provider's own scripts set, and why."""

    value: str
    why: str


class NcclProfile(Entry):
    """The collective-library environment a provider documents for an instance type."""

    transport: str  # what carries NCCL between nodes, in words
    source: str  # the provider's file the values come from
    setup: tuple[str, ...] = ()  # steps the provider's scripts run before NCCL starts
    env: dict[str, NcclSetting] = Field(min_length=1)
    # Host paths a container must mount (at the same path) for these settings to hold: the plugin
    # or topology file the env names lives on the host image, not in the training container.
    mounts: tuple[str, ...] = ()


class Instance(Entry):
    gpu: str
    gpus: int
    fabric: CloudFabric
    other_nics: NicLayout | None = None
    network_cards: int = 0
    max_enis: int = 0
    efa_on_card0: bool = False
    layout: Literal["multi-vpc", "rdma-vpc"] | None = None
    total_gbps: int
    vcpus: int  # per node, as the provider lists the size
    memory_gib: int
    nccl: NcclProfile
    source: str
    # The CPU architecture: an arm64 type (Grace) boots only an arm64 image.
    arch: Literal["amd64", "arm64"] = "amd64"
    # Why the components cannot deploy this type yet (it validates and estimates); "" when they can.
    not_deployable: str = ""
    # AWS: the layers of the EC2 instance topology (network nodes per instance), which EKS labels
    # topology.k8s.aws/network-node-layer-1..N (topology_source says where the count comes from).
    topology_layers: int = 3
    # GCP: the GKE accelerator type of a node pool of this machine ("" = no GKE node pool built).
    gke_accelerator: str = ""


class UplinkPorts(Entry):
    count: int
    gbps: int


class Cages(Entry):
    """The front-panel cages of a model: `count` cages of `lanes` electrical lanes each, a lane at
    up to `lane_gbps`. At a speed in `odd_only` the model breaks out only its odd cages (each
    one's even neighbour is disabled, its ASIC ports lent to the split), as `odd_only_source` says."""

    count: int = Field(ge=1)
    lanes: int = Field(ge=1)
    lane_gbps: int = Field(ge=1)
    odd_only: tuple[int, ...] = ()
    odd_only_source: str = ""
    source: str

    @model_validator(mode="after")
    def _odd_only_has_a_source(self) -> Cages:
        if self.odd_only and (not self.odd_only_source or self.count % 2):
            raise ValueError("odd_only needs an even cage count and odd_only_source")
        return self


class Linecards(Entry):
    """A modular chassis: `count` linecards in slots `first_slot`.., each with `ports` cages, all
    of the `card` model (the chassis' cages are the cards' cages in slot order)."""

    first_slot: int = Field(ge=0)
    count: int = Field(ge=1)
    ports: int = Field(ge=1)
    card: str
    source: str


class ForcedSpeeds(Entry):
    """Port speeds at which the model cannot auto-negotiate: a port running at one of `gbps` must
    have its speed forced (auto-negotiation off), as `source` says, or the link may not come up."""

    gbps: tuple[int, ...] = Field(min_length=1)
    source: str


class Switch(Entry):
    transport: Literal["ethernet", "infiniband"]
    port_modes: dict[int, int] = Field(min_length=1)
    uplink_ports: UplinkPorts | None = None
    cages: Cages | None = None
    linecards: Linecards | None = None
    forced_speeds: ForcedSpeeds | None = None
    # what a dialect needs to know of this model, by dialect, read by the dialect's folder
    dialects: dict[str, dict[str, Any]] = Field(default_factory=dict)
    os: str  # the dialect it runs by default (cluster/dialects/<os>/)
    source: str
    runs: tuple[str, ...] = Field(min_length=1)  # dialects it can run
    runs_source: str

    @model_validator(mode="after")
    def _linecards_hold_the_cages(self) -> Switch:
        if self.linecards is not None and (self.cages is None
                                           or self.cages.count != self.linecards.count * self.linecards.ports):
            raise ValueError("linecards need cages: count = linecards x ports per card")
        if self.forced_speeds is not None and not set(self.forced_speeds.gbps) <= set(self.port_modes):
            raise ValueError("forced_speeds names a speed that is not one of the model's port_modes")
        return self

    def forces_speed(self, gbps: int) -> bool:
        """True when a port of this model running at `gbps` cannot auto-negotiate (`forced_speeds`)."""
        return self.forced_speeds is not None and gbps in self.forced_speeds.gbps


class Catalog(Entry):
    gpus: dict[str, Gpu]
    servers: dict[str, Server]
    server_defaults: dict[str, str]
    instances: dict[str, dict[str, Instance]]  # target -> instance type -> entry
    switches: dict[str, Switch]
    switch_defaults: dict[str, str]

    def instance(self, target: str, instance_type: str) -> Instance | None:
        return self.instances.get(target, {}).get(instance_type)

    def default_server(self, gpu: str) -> str:
        return self.server_defaults.get(gpu, "generic-8gpu")


def read_yaml(path: Path) -> Any:
    """One of the project's own data files (never a user's stack file: see cluster.loader), with
    libyaml's safe loader where PyYAML has it (a tenth of the pure-Python loader's time)."""
    with open(path, encoding="utf-8") as handle:
        return yaml.load(handle, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))


def _read(name: str) -> dict:  # type: ignore[type-arg]
    data = read_yaml(HERE / name)
    assert isinstance(data, dict), f"catalog {name} must be a mapping"
    return data


@lru_cache(maxsize=1)
def load_catalog() -> Catalog:
    """The shipped catalogs, validated. Cached: catalogs never change within a run."""
    servers = _read("servers.yaml")
    switches = _read("switches.yaml")
    return Catalog(
        gpus=_read("gpus.yaml"),
        server_defaults=servers.pop("defaults"),
        servers=servers,
        instances=_read("instances.yaml"),
        switch_defaults=switches.pop("defaults"),
        switches=switches,
    )
