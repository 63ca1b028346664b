"""Domain facts as data: GPUs, on-prem servers, cloud instance types, switch models.

Each YAML file beside this module holds one catalog; every entry carries a `source` note.
The catalogs are read once per process and validated like any other input.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field

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


class NicLayout(Entry):
    count: int
    gbps: int
    ports_per_nic: int = 1


class Server(Entry):
    gpu: str | None = None
    gpus: int
    fabric_nics: NicLayout
    storage_nics: NicLayout
    management_nics: NicLayout
    source: str


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


class UplinkPorts(Entry):
    count: int
    gbps: int


class Switch(Entry):
    transport: Literal["ethernet", "infiniband"]
    port_modes: dict[int, int] = Field(min_length=1)
    uplink_ports: UplinkPorts | None = None
    os: Literal["sonic", "nvue", "eos", "opensm"]
    source: str


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


def _read(name: str) -> dict:  # type: ignore[type-arg]
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    with open(HERE / name, encoding="utf-8") as handle:
        data = yaml.load(handle, Loader=loader)
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
