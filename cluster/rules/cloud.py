"""Cloud placement limits."""

from __future__ import annotations

from collections.abc import Iterator

from cluster.findings import Finding, Severity
from cluster.rules.base import Rule
from cluster.spec import ClusterSpec
from cluster.topology import Topology

# Azure: a scale set in a single placement group holds at most 100 VMs, and InfiniBand
# connects VMs only within one placement group (Azure docs, "Working with large virtual
# machine scale sets"; PARTIAL: read in secondary copies).
AZURE_PLACEMENT_GROUP_VMS = 100


class Placement(Rule):
    """Azure: one InfiniBand-connected scale set is one placement group; above its size the
    pool splits into islands that do not share a fabric."""

    id = "CLOUD-PLACEMENT"
    title = "cloud placement limits"
    severity = Severity.WARNING

    def applies(self, spec: ClusterSpec) -> bool:
        return spec.target == "azure"

    def check(self, spec: ClusterSpec, topology: Topology) -> Iterator[Finding]:
        for pool in spec.pools:
            if pool.nodes > AZURE_PLACEMENT_GROUP_VMS:
                yield self.finding(
                    f"{pool.path}.nodes",
                    f"{pool.nodes} VMs exceed one placement group ({AZURE_PLACEMENT_GROUP_VMS}); InfiniBand does not "
                    "span placement groups",
                    f"split the pool into pools of at most {AZURE_PLACEMENT_GROUP_VMS}",
                )
