"""SONiC (forms and sources: docs/dialects.md): port and management names, bundles, ECMP.

Ports: the name of the index-th front-panel port of the model's SKU at the port speed, from the
SKU's port_config.ini (catalog sonic_ports.yaml: `Ethernet0`, `Ethernet4`.. on an SN5600 at 400G,
`Ethernet0`, `Ethernet2`.. at 200G); a model or speed with no SKU there is a SCHEMA error before
anything renders. LLDP may also report a port by its `etp<N>` alias.
"""

from __future__ import annotations

from cluster.catalog import SonicPort, load_catalog
from cluster.dialects import Platform


def sku_port(model: str, gbps: int, index: int) -> SonicPort:
    """Port `index` (0-based, front-panel order) of the SONiC SKU of `model` at `gbps`."""
    sku = load_catalog().sonic_sku(model, gbps)
    if sku is None or index >= len(sku.port_map):
        raise ValueError(f"no SONiC port {index} for {model} at {gbps}G in catalog sonic_ports.yaml")
    return sku.port_map[index]


PLATFORM = Platform(
    name="sonic",
    title="SONiC (FRR)",
    port_name=lambda index, model, gbps: sku_port(model, gbps, index).name,
    management_port=lambda model: "eth0",
    config_file="config_db.json",
    routing_file="frr.conf",
    lag_name="PortChannel{}",
    # FRR: debian/rules --enable-multipath=256 (Debian 12's FRR 8.4.4 rejects `maximum-paths 257`; SONiC
    # raised its own build to 512 in Nov 2024, sonic-buildimage src/sonic-frr/patch/0054-*; 256 keeps older images)
    max_paths=256,
    port_aliases=lambda number: (f"etp{number}",),
)
