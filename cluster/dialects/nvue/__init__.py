"""NVIDIA Cumulus Linux 5.14, NVUE (forms and sources: docs/reference/dialects.md): port and management names,
bundles, ECMP.

Ports: on a model with cage data (catalog `cages`) whose port speed splits each cage into k > 1
ports, port i is `swp{C}s{S}` (cage C = i // k + 1, subport S = i % k; at a speed that splits only
the odd cages, C = 2 (i // k) + 1, and NVUE disables each even neighbour), the names
`nv set interface swpC link breakout kx` creates (NVUE reference, docs.nvidia.com/networking-
ethernet-software/nvue-reference: "breakout 4x, parent ports swp1 through swp32 split into
sub-interfaces swp1s0 through swp32s3"); otherwise `swp{index + 1}`. A generic box, given by its
ports and speed alone, renders in NVUE: its names follow from the port number.
"""

from __future__ import annotations

from cluster.breakout import breakout
from cluster.catalog import Entry, load_catalog
from cluster.dialects import Platform
from cluster.dialects.nvue.running import translate


class NvuePlatform(Entry):
    """What Cumulus Linux can run on one model: its gNMI server and its OpenTelemetry export (neither
    on a Spectrum-1 ASIC)."""

    gnmi: bool = True
    otlp: bool = True
    source: str


#: What a model without an `nvue` catalog entry gets: a switch that runs gNMI (Spectrum-2 and later).
ANY_NVUE_MODEL = NvuePlatform(source="no nvue entry in the catalog: gNMI and OTLP export run")


def nvue_platform(model: str) -> NvuePlatform:
    """The NVUE abilities of `model`: its switch catalog entry's `dialects.nvue`, else ANY_NVUE_MODEL."""
    entry = load_catalog().switches.get(model)
    forms = entry.dialects.get("nvue") if entry is not None else None
    return NvuePlatform.model_validate(forms) if forms is not None else ANY_NVUE_MODEL


def port_name(index: int, model: str, gbps: int) -> str:
    split = breakout(model, gbps)
    if split is None:
        return f"swp{index + 1}"
    cage = split.cage(index) + 1
    return f"swp{cage}s{index % split.ports}" if split.ports > 1 else f"swp{cage}"


PLATFORM = Platform(
    name="nvue",
    title="Cumulus Linux NVUE",
    port_name=port_name,
    management_port=lambda model: "eth0",
    config_file="nvue.sh",
    routing_file="nvue.sh",
    lag_name="bond{}",
    max_paths=128,  # `multipaths ebgp 1-128` (NVUE command reference, BGP)
    generic=True,
    translate=translate,
    # OpenTelemetry export (Cumulus Linux 5.14, Open Telemetry Export): Spectrum-2 and later
    telemetry_push=lambda model: "otlp" if nvue_platform(model).otlp else None,
    push_stops_gnmi=True,  # the same page: "When you enable and use Open Telemetry, do not enable and use gNMI streaming"
)
