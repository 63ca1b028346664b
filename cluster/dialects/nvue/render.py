"""NVIDIA Cumulus Linux 5.14: NVUE `nv set` commands (forms and sources: docs/reference/dialects.md)."""

from __future__ import annotations

import re
from dataclasses import dataclass

from cluster.breakout import breakout
from cluster.dialects.nvue import nvue_platform
from cluster.intent.management import Collector
from cluster.intent.oob import OOB_VLAN, oob_l2
from cluster.intent.qos import QosPlan, QosSide
from cluster.intent.switch import Switch
from cluster.render.engine import render

PROFILE_ECN_TCS = (0, 3)  # the traffic classes `nv set qos roce` marks ECN on
PROFILE_FREE_TCS = (0, 1, 2, 4, 5, 7)  # the profile's RoCE and CNP classes are 3 and 6


@dataclass(frozen=True)
class RoceProfile:
    """A QoS plan laid out on NVIDIA's `qos roce` profile, whose traffic classes NVUE addresses."""

    plan: QosPlan

    @property
    def tcs(self) -> tuple[tuple[int, int], ...]:
        """(switch priority, traffic class) for all eight priorities: RoCE on TC 3, CNP on TC 6,
        every other planned priority on its own TC (its own number when free), unplanned
        priorities with the default class."""
        tcs = {self.plan.roce.priority: 3, self.plan.cnp.priority: 6}
        free = list(PROFILE_FREE_TCS)
        for priority in self.plan.priorities:
            if priority in tcs:
                continue
            tc = priority if priority in free else free[0]
            tcs[priority] = tc
            free.remove(tc)
        default_tc = tcs[self.plan.default_priority]
        return tuple((priority, tcs.get(priority, default_tc)) for priority in range(8))

    def tc(self, priority: int) -> int:
        """Traffic class of a switch priority (see `tcs`)."""
        return dict(self.tcs)[priority]

    @property
    def ecn_off(self) -> tuple[int, ...]:
        """Traffic classes the profile marks ECN on that the plan does not."""
        planned = {self.tc(priority) for priority in self.plan.ecn}
        return tuple(tc for tc in PROFILE_ECN_TCS if tc not in planned)

    @property
    def dwrr(self) -> tuple[tuple[int, int], ...]:
        """(traffic class, weight) of the plan's DWRR shares."""
        weights: dict[int, int] = {}
        for priority, weight in self.plan.dwrr:
            tc = self.tc(priority)
            weights[tc] = weights.get(tc, 0) + weight
        return tuple(sorted(weights.items()))

    @property
    def is_nvidia_default(self) -> bool:
        """True when `nv set qos roce` alone already gives this plan (FACTS.md 4.1)."""
        plan = self.plan
        return (plan.mode == "lossless" and (plan.roce.dscp, plan.roce.priority) == (26, 3)
                and (plan.cnp.dscp, plan.cnp.priority) == (48, 6) and plan.lossless == (3,)
                and (plan.ecn_min_bytes, plan.ecn_max_bytes) == (150_000, 1_500_000))


def breakouts(switch: Switch) -> tuple[tuple[str, str], ...]:
    """(cage port, `nv set interface ... link breakout` mode) for every split cage the switch uses."""
    split = breakout(switch.model, switch.port_gbps)
    if split is None or split.ports <= 1:
        return ()
    cages = sorted({split.cage(port.number) + 1 for port in switch.ports if port.number < switch.main_ports})
    return tuple((f"swp{cage}", f"{split.ports}x") for cage in cages)


@dataclass(frozen=True)
class OtlpExport:
    """What one switch exports by OpenTelemetry (Cumulus Linux 5.14, Open Telemetry Export): every
    interface's counters and the buffer occupancy, each `interval_s`, with the per-priority
    counters of the RoCE and lossless switch priorities (PFC pause frames sent and received, their
    duration) and the per-class counters of the RoCE traffic class (ECN marks, WRED and no-buffer
    discards)."""

    collectors: tuple[Collector, ...]
    interval_s: int
    switch_priorities: tuple[int, ...]
    traffic_classes: tuple[int, ...]


def otlp_export(switch: Switch, profile: RoceProfile | None) -> OtlpExport | None:
    """The switch's OTLP export: None without `management_plane.telemetry.otlp`, or on a model
    Cumulus Linux exports nothing from (Spectrum-1)."""
    plane = switch.management_plane
    telemetry = plane.services.telemetry if plane is not None else None
    if telemetry is None or not telemetry.otlp or not nvue_platform(switch.model).otlp:
        return None
    if profile is None:
        return OtlpExport(telemetry.otlp, telemetry.interval_s, (), ())
    priorities = tuple(sorted({*profile.plan.lossless, profile.plan.roce.priority}))
    return OtlpExport(telemetry.otlp, telemetry.interval_s, priorities, (profile.tc(profile.plan.roce.priority),))


def render_switch(switch: Switch) -> dict[str, str]:
    profile = RoceProfile(switch.qos) if switch.qos is not None else None
    return {"nvue.sh": render("nvue/startup.j2", switch=switch, oob=oob_l2(switch), profile=profile,
                              breakouts=breakouts(switch), oob_vlan=OOB_VLAN, gnmi=nvue_platform(switch.model).gnmi,
                              otlp=otlp_export(switch, profile))}


QOS_FILE = "nvue.sh"


def _side(mapping: dict[int, int], pfc: set[int], mtu: int, planned: list[int]) -> QosSide:
    return QosSide(dscp_to_priority={dscp: mapping[dscp] for dscp in planned}, pfc_priorities=frozenset(pfc),
                   strict_priorities=frozenset(), ecn_priorities=frozenset(), mtu=mtu)


def read_qos(text: str, planned: list[int]) -> QosSide:
    """The QoS an nvue.sh states, over Cumulus' defaults: DSCP >> 3, then the `qos roce` profile
    (26 -> 3, 48 -> 6, PFC on 3), then the explicit lines."""
    mapping = {dscp: dscp >> 3 for dscp in range(64)}
    pfc: set[int] = set()
    if re.search(r"^nv set qos roce( mode lossless)?$", text, re.M):
        mapping.update({26: 3, 48: 6})
        pfc = {3}
    for dscps, priority in re.findall(r"^nv set qos mapping default-global dscp ([\d,]+) switch-priority (\d+)$",
                                      text, re.M):
        mapping.update({int(dscp): int(priority) for dscp in dscps.split(",")})
    for values in re.findall(r"^nv set qos pfc default-global switch-priority ([\d,]+)$", text, re.M):
        pfc = {int(value) for value in values.split(",")}
    mtus = re.findall(r"^nv set interface \S+ link mtu (\d+)$", text, re.M)
    return _side(mapping, pfc, int(mtus[0]) if mtus else 1500, planned)

