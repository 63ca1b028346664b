"""SONiC's platform data: the port map and buffer facts of each hardware SKU, per switch model and
port speed (sonic_ports.yaml beside this module, generated from the SKUs' port_config.ini by
scripts/import_sonic_ports.py, citing the upstream file and commit)."""

from __future__ import annotations

from functools import cached_property, lru_cache
from pathlib import Path
from typing import Literal, NamedTuple

from pydantic import Field

from cluster.catalog import Entry, read_yaml


class SonicPort(NamedTuple):
    """One front-panel port of a SONiC SKU, as its port_config.ini has it."""

    name: str
    lanes: str
    alias: str
    front_panel: str  # port_config.ini `index`: the front-panel cage number


class SonicBuffers(Entry):
    """What a SKU's buffer templates fix for the dynamic buffer model."""

    objects: str  # the buffers_defaults_objects.j2 family the SKU links to (or its own)
    lossless: bool  # the templates have lossless profiles (PFC headroom); False: a lossy-only SKU
    ingress_lossy_pool: bool  # lossy ingress traffic has a pool of its own (else the lossless pool)
    egress_lossless_pool_bytes: int
    create_only_config_db_buffers: bool  # the SKU's or the platform's create_only_config_db_buffers.json sets it
    source: str


class SonicSku(Entry):
    """The ports of one SONiC hardware SKU at one speed (sonic_ports.yaml)."""

    hwsku: str
    fec: Literal["rs", "fc", "none"]
    fec_source: str
    source: str
    buffers: SonicBuffers
    ports: tuple[str, ...] = Field(min_length=1)  # `name lanes alias index`, front-panel order

    @cached_property
    def port_map(self) -> tuple[SonicPort, ...]:
        return tuple(SonicPort(*line.split()) for line in self.ports)


class SonicPlatform(Entry):
    platform: str
    skus: dict[int, SonicSku]  # port speed Gbps -> SKU


@lru_cache(maxsize=1)
def sonic_platforms() -> dict[str, SonicPlatform]:
    """Switch model -> its SONiC platform and SKUs. Read once per process."""
    data = read_yaml(Path(__file__).parent / "sonic_ports.yaml")
    assert isinstance(data, dict), "sonic_ports.yaml must be a mapping"
    return {str(model): SonicPlatform.model_validate(entry) for model, entry in data.items()}


def sonic_sku(model: str, gbps: int) -> SonicSku | None:
    """The SONiC SKU of `model` with its ports at `gbps`, if there is one."""
    platform = sonic_platforms().get(model)
    return platform.skus.get(gbps) if platform else None
