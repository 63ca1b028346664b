"""Cloud placement limits, and the GPU fabrics a job cannot span."""

from __future__ import annotations

from collections.abc import Iterator

from cluster.catalog import load_catalog
from cluster.findings import Finding, Severity
from cluster.rules.base import Rule
from cluster.spec import ClusterSpec, PoolSpec
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
                    f"{AZURE_PLACEMENT_GROUP_VMS} nodes each: each is a scale set and an InfiniBand fabric of its own, "
                    f"so one job spans at most {AZURE_PLACEMENT_GROUP_VMS} VMs over InfiniBand (CLOUD-FABRICS)",
                )


def fabrics(spec: ClusterSpec) -> list[list[PoolSpec]]:
    """The cluster's pools grouped by the GPU fabric they share, in file order. Azure: each pool's
    scale set is one placement group and one InfiniBand fabric. AWS: EFA's OS-bypass traffic stays
    within one subnet (AWS EC2 guide, "Elastic Fabric Adapter", limitations; across subnets it is
    plain IP), and the fabric subnet is per zone. GCP: the RDMA VPC follows its zone's RoCE profile, and
    the GPU VPCs of A3 High / Mega serve one NIC layout."""
    catalog = load_catalog()
    groups: dict[tuple[str, ...], list[PoolSpec]] = {}
    for pool in spec.pools:
        zone = pool.capacity.zone if pool.capacity is not None else None
        if spec.target == "azure":
            key: tuple[str, ...] = (pool.name,)
        elif spec.target == "gcp":
            instance = catalog.instance("gcp", pool.instance_type or "")
            key = (instance.layout if instance is not None and instance.layout else "", zone or "")
        else:
            key = (zone or "",)
        groups.setdefault(key, []).append(pool)
    return list(groups.values())


class FabricSplit(Rule):
    """Cloud pools that do not share one GPU fabric: a job spans one of them at most, or runs its
    collectives over the Ethernet network between them. Azure pools (one scale set each, what
    CLOUD-PLACEMENT's split makes), AWS pools in different zones, GCP pools of different NIC
    layouts or RDMA zones."""

    id = "CLOUD-FABRICS"
    title = "GPU fabrics a job cannot span"
    severity = Severity.WARNING

    def applies(self, spec: ClusterSpec) -> bool:
        return spec.is_cloud and len(spec.pools) > 1

    def check(self, spec: ClusterSpec, topology: Topology) -> Iterator[Finding]:
        groups = fabrics(spec)
        if len(groups) < 2:
            return
        sizes = [(sum(pool.nodes for pool in group), sum(pool.gpus for pool in group), group) for group in groups]
        described = "; ".join(f"{' + '.join(pool.name for pool in group)} ({nodes} nodes, {gpus:,} GPUs)"
                              for nodes, gpus, group in sizes)
        largest = max(gpus for _, gpus, _ in sizes)
        what = {"azure": "InfiniBand fabrics (one per scale set)", "aws": "EFA fabrics (one per zone's subnet)",
                "gcp": "GPU fabrics (one per RDMA zone or NIC layout)"}[spec.target]
        hint = {"azure": "expected when a pool is split at 100 VMs: keep every job within one pool (the exported Kueue "
                         "objects require one agent pool per job)",
                "aws": "put the pools that train together in one zone (node_pools[i].cloud.zone)",
                "gcp": "put the pools that train together in one zone and machine series"}[spec.target]
        yield self.finding("node_pools", f"{len(groups)} {what}: {described}; a job spans one of them at most "
                           f"({largest:,} GPUs), or its collectives cross the Ethernet network between them", hint)
