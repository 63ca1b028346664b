"""The rule set. Ids are a public contract (DESIGN.md); order here is report order only."""

from __future__ import annotations

from cluster.rules.addressing import AddressPools
from cluster.rules.base import Rule, apply_policy, run_rules
from cluster.rules.bisection import Bisection
from cluster.rules.cloud import Placement
from cluster.rules.ecmp import EcmpWidth
from cluster.rules.fabric import Connected, LinkSpeed, Oversubscription, Radix
from cluster.rules.hosts import GpuNicBandwidth, RailAlignment
from cluster.rules.isolation import Isolation
from cluster.rules.networks import NetworkOversubscription
from cluster.rules.qos import Mtu, PfcMap
from cluster.rules.resilience import SingleFailure

ALL_RULES: list[Rule] = [
    Oversubscription(),
    GpuNicBandwidth(),
    RailAlignment(),
    Isolation(),
    Radix(),
    Connected(),
    LinkSpeed(),
    EcmpWidth(),
    Bisection(),
    SingleFailure(),
    NetworkOversubscription(),
    PfcMap(),
    Mtu(),
    AddressPools(),
    Placement(),
]

__all__ = ["ALL_RULES", "Rule", "apply_policy", "run_rules"]
