"""Arista EOS 4.33: CLI running-config (forms and sources: docs/reference/dialects.md)."""

from __future__ import annotations

import re
from dataclasses import dataclass

from cluster.dialects.eos import eos_platform
from cluster.intent.oob import OOB_VLAN, oob_l2
from cluster.intent.qos import QosSide
from cluster.intent.switch import PFC_WATCHDOG_MS, Port, Switch
from cluster.render.engine import render

LANES = {800: 8, 400: 8, 200: 4, 100: 4}  # 100G-per-lane optics for 800G/400G, 50G-per-lane below
# EOS's own per-neighbor default (AVD v5.0 renders `maximum-routes 12000` as that default):
DEFAULT_MAXIMUM_ROUTES = 12_000


def maximum_routes(switch: Switch) -> int:
    """The per-neighbor route limit: the design's (cluster.intent.bgp), never below EOS's own
    default (12,000 is below the host routes of large designs, and above small designs' limits)."""
    limit = switch.policy.route_limit if switch.policy is not None else 0
    return max(DEFAULT_MAXIMUM_ROUTES, limit)


@dataclass(frozen=True)
class Forms:
    """What one switch's platform makes of the vendor-neutral view: its queue sub-mode (catalog
    `eos`) and its neighbors' route limit."""

    queue: str
    maximum_routes: int
    watchdog_seconds: str = f"{PFC_WATCHDOG_MS / 1000:g}"  # PFC watchdog timeout and recovery time, in seconds
    oob_interface: str = f"Vlan{OOB_VLAN}"  # an oob switch's management address: its oob VLAN interface

    @staticmethod
    def speed(port: Port) -> str:
        """EOS names multi-lane speeds with their lane count (`speed 400g-8`)."""
        lanes = port.lanes or LANES.get(port.speed_gbps)
        return f"{port.speed_gbps}g-{lanes}" if lanes else f"{port.speed_gbps}g"


def render_switch(switch: Switch) -> dict[str, str]:
    forms = Forms(queue=eos_platform(switch.model).queue, maximum_routes=maximum_routes(switch))
    return {"eos.cfg": render("eos/startup.j2", switch=switch, oob=oob_l2(switch), eos=forms)}


QOS_FILE = "eos.cfg"


def _side(mapping: dict[int, int], pfc: set[int], mtu: int, planned: list[int]) -> QosSide:
    return QosSide(dscp_to_priority={dscp: mapping[dscp] for dscp in planned}, pfc_priorities=frozenset(pfc),
                   strict_priorities=frozenset(), ecn_priorities=frozenset(), mtu=mtu)


def read_qos(text: str, planned: list[int]) -> QosSide:
    """The QoS an eos.cfg states, over EOS's default map (0-7 -> 1, 8-15 -> 0, otherwise DSCP >> 3);
    PFC from `no-drop` lines."""
    mapping = {dscp: 1 if dscp < 8 else 0 if dscp < 16 else dscp >> 3 for dscp in range(64)}
    for dscps, tc in re.findall(r"^qos map dscp ([\d ]+) to traffic-class (\d+)$", text, re.M):
        mapping.update({int(dscp): int(tc) for dscp in dscps.split()})
    pfc = {int(p) for p in re.findall(r"^\s+priority-flow-control priority (\d+) no-drop$", text, re.M)}
    mtus = re.findall(r"^\s+mtu (\d+)$", text, re.M)
    return _side(mapping, pfc, int(mtus[0]) if mtus else 1500, planned)
