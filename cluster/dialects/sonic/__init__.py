"""SONiC (forms and sources: docs/reference/dialects.md): port and management names, bundles, ECMP.

Ports: the name of the index-th front-panel port of the model's SKU at the port speed, from the
SKU's port_config.ini (sonic_ports.yaml in this folder: `Ethernet0`, `Ethernet4`.. on an SN5600 at 400G,
`Ethernet0`, `Ethernet2`.. at 200G); a model or speed with no SKU there is a SCHEMA error before
anything renders. LLDP may also report a port by its `etp<N>` alias.
"""

from __future__ import annotations

from cluster.catalog import load_catalog
from cluster.dialects import Platform, generic, stack_os_names
from cluster.dialects.sonic.running import translate
from cluster.dialects.sonic.skus import SonicPort, sonic_platforms, sonic_sku


def _others(model: str) -> str:
    """The other dialects the model runs (any a stack file may name, for a generic box), for hints."""
    entry = load_catalog().switches.get(model)
    runs = entry.runs if entry is not None else stack_os_names()
    return " or ".join(name for name in runs if name != PLATFORM.name and name in stack_os_names())


def _needs_a_sku(model: str, gbps: int, described: str) -> tuple[str, str] | None:
    """SONiC takes its port names and lanes from the SKU's port map: without one for this model at
    this speed there is no valid config_db to write."""
    if sonic_sku(model, gbps) is not None:
        return None
    known = "; ".join(f"{name} at {', '.join(f'{speed}G' for speed in sorted(platform.skus, reverse=True))}"
                      for name, platform in sorted(sonic_platforms().items()))
    return (f"SONiC needs the SKU port map (lanes, alias, index) of {described}, and the catalog has none "
            f"(SONiC SKUs known: {known})", "use a model and port_gbps with a SONiC SKU"
            + (f", or set os: {others}" if (others := _others(model)) else f" ({model} runs no other dialect)"))


def _lossless_buffers(model: str, gbps: int, lossless: tuple[int, ...]) -> tuple[str, str] | None:
    """A lossless plan needs a SKU whose buffer templates have lossless profiles."""
    sku = sonic_sku(model, gbps)
    if sku is None or sku.buffers.lossless or not lossless:
        return None
    speeds = sorted(speed for speed, other in sonic_platforms()[model].skus.items() if other.buffers.lossless)
    return (f"SONiC SKU {sku.hwsku} ({model} at {gbps}G) is lossy only: its buffer templates have no lossless "
            f"profile, so PFC priorities {list(lossless)} get no headroom",
            f"use port_gbps {' or '.join(str(speed) for speed in speeds)}, qos.mode: lossy, or os: {generic().name}")


def _skus_column(model: str) -> str:
    platform = sonic_platforms().get(model)
    if platform is None:
        return ""
    return ", ".join(f"{gbps}G {sku.hwsku}" for gbps, sku in platform.skus.items())


def sku_port(model: str, gbps: int, index: int) -> SonicPort:
    """Port `index` (0-based, front-panel order) of the SONiC SKU of `model` at `gbps`."""
    sku = sonic_sku(model, gbps)
    if sku is None or index >= len(sku.port_map):
        raise ValueError(f"no SONiC port {index} for {model} at {gbps}G in sonic_ports.yaml")
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
    model_problem=_needs_a_sku,
    qos_problem=_lossless_buffers,
    translate=translate,
    # dhcp_relay serves VLAN interfaces only (sonic-net/SONiC issue 2201, open; routed ports are the open
    # pull request 2276): a host's routed /31 gets no relay (docs/reference/dialects.md)
    relays_on_routed_ports=False,
    snmp_traps=False,  # config_db has no trap receiver table (sonic-snmp.yang: agent, communities, location, contact)
    telemetry_push=lambda model: "gnmi_dialout",  # config_db TELEMETRY_CLIENT (sonic-telemetry_client.yang)
    reference_column=("SONiC SKUs", "the speeds SONiC has a port map for (SONiC at another speed is a SCHEMA error)",
                      _skus_column),
)
