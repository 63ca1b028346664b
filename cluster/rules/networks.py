"""Storage, management and out-of-band networks: their own oversubscription budgets."""

from __future__ import annotations

from collections.abc import Iterator

from cluster.findings import Finding
from cluster.load import uplinks_for, worst_per_tier
from cluster.rules.base import Rule
from cluster.spec import ClusterSpec
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
