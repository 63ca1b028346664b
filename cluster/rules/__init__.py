"""The rule set. Ids are a public contract (DESIGN.md); order here is report order only."""

from __future__ import annotations

from cluster.findings import apply_policy
from cluster.rules.addressing import AddressPools
from cluster.rules.base import Derived, Rule, run_rules
from cluster.rules.bisection import Bisection
from cluster.rules.cloud import FabricSplit, Placement
from cluster.rules.ecmp import EcmpWidth
from cluster.rules.fabric import Connected, LinkSpeed, Oversubscription, Radix
from cluster.rules.hostnet import HostNetworking
from cluster.rules.hosts import GpuNicBandwidth, RailAlignment
from cluster.rules.isolation import Isolation
from cluster.rules.networks import NetworkOversubscription, OsMix
from cluster.rules.qos import Mtu, PfcMap, StoragePlan
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
    OsMix(),
    PfcMap(),
    StoragePlan(),
    Mtu(),
    AddressPools(),
    HostNetworking(),
    Placement(),
    FabricSplit(),
]

#: Every rule id, public contract first: SCHEMA and SPEC-IGNORED (the loader's and resolver's own
#: findings), then the rules above in report order. Suppression, SARIF and the docs read this.
RULE_IDS: tuple[str, ...] = ("SCHEMA", "SPEC-IGNORED", *(rule.id for rule in ALL_RULES))

__all__ = ["ALL_RULES", "RULE_IDS", "Derived", "Rule", "apply_policy", "run_rules"]
