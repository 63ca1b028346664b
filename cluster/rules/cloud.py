"""Cloud placement limits."""

from __future__ import annotations

from collections.abc import Iterator

from cluster.findings import Finding, Severity
from cluster.rules.base import Rule
from cluster.spec import ClusterSpec
from cluster.topology import Topology

# Azure: a scale set in a single placement group holds at most 100 VMs, and InfiniBand
# connects VMs only within one placement group (learn.microsoft.com "Working with large virtual
# machine scale sets": singlePlacementGroup true caps the scale set at 100 VMs; a larger
# capacity is refused at deploy). The pool's scale set sets singlePlacementGroup true
# (components/azure/node_pool.py), so a bigger pool cannot deploy: an error.
AZURE_PLACEMENT_GROUP_VMS = 100


class Placement(Rule):
    """Azure: one InfiniBand-connected scale set is one placement group of at most 100 VMs;
    a larger pool does not deploy (and would not share one fabric if it did)."""

    id = "CLOUD-PLACEMENT"
    title = "cloud placement limits"
    severity = Severity.ERROR

    def applies(self, spec: ClusterSpec) -> bool:
        return spec.target == "azure"

    def check(self, spec: ClusterSpec, topology: Topology) -> Iterator[Finding]:
        for pool in spec.pools:
            if pool.nodes > AZURE_PLACEMENT_GROUP_VMS:
                yield self.finding(
                    f"{pool.path}.nodes",
                    f"{pool.nodes} VMs exceed one placement group ({AZURE_PLACEMENT_GROUP_VMS}): a scale set with "
                    "singlePlacementGroup holds at most 100 VMs, so Azure refuses it, and InfiniBand does not span "
                    "placement groups",
                    f"split the pool into {-(-pool.nodes // AZURE_PLACEMENT_GROUP_VMS)} pools of at most "
                    f"{AZURE_PLACEMENT_GROUP_VMS} nodes each (one scale set and one InfiniBand fabric per pool)",
                )
