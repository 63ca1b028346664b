"""Arista EOS 4.33 (forms and sources: docs/reference/dialects.md): port and management names, bundles, ECMP.

Ports: on a model with cage data, `Ethernet{C}/{L}` with L the first of the port's lanes (an OSFP
cage N exposes Ethernet N/1 to N/8, one per lane, arista.com/en/um-eos/eos-layer-1-profiles; so
2 x 400G on an 8-lane cage is N/1 and N/5, each `speed 400g-4`), and on a modular chassis
(catalog `linecards`) `Ethernet{S}/{P}/{L}`, the card in slot S, its cage P (a 7808R3's first
port is Ethernet3/1/1); otherwise `Ethernet{index + 1}/1`.
"""

from __future__ import annotations

from typing import Literal

from cluster.breakout import Breakout, breakout
from cluster.catalog import Entry, load_catalog
from cluster.dialects import Platform
from cluster.dialects.eos.running import translate


class EosPlatform(Entry):
    """What Arista EOS names differently per platform: the per-interface queue sub-mode
    (`uc-tx-queue` on Trident/Tomahawk boxes, `tx-queue` on the VOQ (Sand: Jericho) platforms,
    which have no unicast/multicast queue split) and the management interface."""

    queue: Literal["uc-tx-queue", "tx-queue"] = "uc-tx-queue"
    management: str = "Management1"
    source: str

#: What a model without an `eos` catalog entry gets: a fixed Trident/Tomahawk-style box's forms.
FIXED_BOX_EOS = EosPlatform(source="no eos entry in the catalog: a fixed box (uc-tx-queue, Management1)")


def eos_platform(model: str) -> EosPlatform:
    """The EOS forms of `model`: its switch catalog entry's `dialects.eos`, else a fixed box's."""
    entry = load_catalog().switches.get(model)
    forms = entry.dialects.get("eos") if entry is not None else None
    return EosPlatform.model_validate(forms) if forms is not None else FIXED_BOX_EOS


def _eos_port(model: str, split: Breakout, index: int) -> str:
    """`EthernetC/L`, or `EthernetS/P/L` on a modular chassis (linecard in slot S, its cage P)."""
    cage, lane = split.cage(index), split.lane(index)
    cards = load_catalog().switches[model].linecards
    if cards is None:
        return f"Ethernet{cage + 1}/{lane}"
    card, port = divmod(cage, cards.ports)
    return f"Ethernet{cards.first_slot + card}/{port + 1}/{lane}"


def port_name(index: int, model: str, gbps: int) -> str:
    split = breakout(model, gbps)
    return f"Ethernet{index + 1}/1" if split is None else _eos_port(model, split, index)


PLATFORM = Platform(
    name="eos",
    title="Arista EOS",
    port_name=port_name,
    # a modular chassis' supervisors share Management0 (the catalog's `eos` entry)
    management_port=lambda model: eos_platform(model).management,
    config_file="eos.cfg",
    routing_file="eos.cfg",
    lag_name="Port-Channel{}",
    max_paths=600,  # `maximum-paths 1-600` (Arista AVD v5.0 schema; docs/reference/dialects.md, ECMP width)
    translate=translate,
    # `management api gnmi` `transport grpc-tunnel` (AVD eos_cli_config_gen management-api-gnmi.j2)
    telemetry_push=lambda model: "grpc_tunnel",
)
