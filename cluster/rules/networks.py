"""Storage, management and out-of-band networks: their own oversubscription budgets; one switch OS per network."""

from __future__ import annotations

from collections.abc import Iterator

from cluster.findings import Finding, Severity
from cluster.load import uplinks_for, worst_per_tier
from cluster.rules.base import Rule, plural
from cluster.spec import ClusterSpec, FabricSpec, NetworkSpec
from cluster.topology import Topology


class NetworkOversubscription(Rule):
    """Leaves of the storage, management and out-of-band networks stay within their network's
    max_oversubscription (default 3:1); the worst leaf is named."""

    id = "NET-OVERSUB"
    title = "storage / management / out-of-band oversubscription"

    def applies(self, spec: ClusterSpec) -> bool:
        return spec.fabric is not None

    def check(self, spec: ClusterSpec, topology: Topology) -> Iterator[Finding]:
        for network in (spec.storage, spec.management, spec.oob):
            if network is None:
                continue
            worst = worst_per_tier(topology.switch_loads, topology.switches(network.name))
            if "leaf" not in worst:
                continue
            name, load = worst["leaf"]
            limit = network.max_oversubscription
            if load.oversubscription > limit + 1e-9:
                key = "leaf_uplinks" if network.leaf_uplinks is not None else "max_oversubscription"
                path = f"{network.name}.{key}"
                needed, per_link, room = uplinks_for(topology.switch(name), load, limit)
                fix = (f"give {network.name}.leaf_uplinks: {needed} ({needed} x {per_link:g}G up gives "
                       f"{load.down_gbps / (needed * per_link):.2f}:1)" if needed <= room else
                       f"{name} needs {needed} x {per_link:g}G uplinks and has room for {room}: give "
                       f"{network.name}.leaves more leaves or a switch with more ports")
                yield self.finding(
                    path,
                    f"{network.name} leaf oversubscription expected <= {limit:g}:1, found {load.oversubscription:.2f}:1 at "
                    f"{name} ({load.down_gbps:,.0f} Gbps down / {load.up_gbps:,.0f} Gbps up)",
                    f"{fix}, or raise {network.name}.max_oversubscription to {load.oversubscription:.2f}"
                )


class OsMix(Rule):
    """One switch OS per network, as the stack file gives it: an `os` given for one tier of a
    network is the network's, and a tier that gives none runs it (an auto-picked model is picked
    among those that do). A tier whose model or port speed cannot run it keeps its model's OS,
    and the network then mixes operating systems the stack file did not ask for."""

    id = "NET-OS-MIX"
    title = "switch operating systems mixed within a network"
    severity = Severity.WARNING

    def check(self, spec: ClusterSpec, topology: Topology) -> Iterator[Finding]:
        built = {(data["network"], data["tier"]) for _, data in topology.switches()}
        networks: list[tuple[str, FabricSpec | NetworkSpec]] = [("fabric", spec.fabric)] if spec.fabric else []
        networks += [(network.name, network) for network in (spec.storage, spec.management, spec.oob) if network]
        for name, network in networks:
            for tier in ("leaf", "spine", "core"):
                model = getattr(network, tier, None)
                if model is None or not model.os_mismatch or (name, tier) not in built:
                    continue
                wanted = model.os_wanted.split(" ")[0]
                yield self.finding(
                    f"{model.path}.os",
                    f"the {name} {plural(tier, 2)} ({model.model} at {model.port_gbps}G) run {model.os}, not the "
                    f"{model.os_wanted} the rest of the network runs: {model.os_mismatch}",
                    f"give {model.path} a model or port_gbps that runs {wanted}, or set {model.path}.os: {model.os} "
                    "to run both on purpose",
                )
