"""Cloud placement limits, and the GPU fabrics a job cannot span."""

from __future__ import annotations

from collections.abc import Iterator

from cluster.catalog import load_catalog
from cluster.clouds import cloud
from cluster.findings import Finding, Severity
from cluster.rules.base import Rule
from cluster.spec import ClusterSpec, PoolSpec
from cluster.topology import Topology


class Placement(Rule):
    """Azure: one InfiniBand-connected scale set is one placement group of at most 100 VMs;
    a larger pool does not deploy (and would not share one fabric if it did)."""

    id = "CLOUD-PLACEMENT"
    title = "cloud placement limits"
    severity = Severity.ERROR

    def applies(self, spec: ClusterSpec) -> bool:
        return spec.is_cloud and cloud(spec.target).placement_group_vms is not None

    def check(self, spec: ClusterSpec, topology: Topology) -> Iterator[Finding]:
        provider = cloud(spec.target)
        most = provider.placement_group_vms
        assert most is not None
        for pool in spec.pools:
            if pool.nodes > most:
                yield self.finding(
                    f"{pool.path}.nodes",
                    f"{pool.nodes} VMs exceed one placement group ({most}): a scale set with "
                    f"singlePlacementGroup holds at most {most} VMs, so {provider.provider} refuses it, and InfiniBand "
                    "does not span placement groups",
                    f"split the pool into {-(-pool.nodes // most)} pools of at most "
                    f"{most} nodes each: each is a scale set and an InfiniBand fabric of its own, "
                    f"so one job spans at most {most} VMs over InfiniBand (CLOUD-FABRICS)",
                )


def fabrics(spec: ClusterSpec) -> list[list[PoolSpec]]:
    """The cluster's pools grouped by the GPU fabric they share, in file order, as the cloud's facts
    say (cluster/clouds/<name>/, with their sources): one fabric per pool (Azure: a scale set is one
    placement group and one InfiniBand fabric), per zone and NIC layout (GCP), or per zone (AWS: EFA
    stays within the zone's fabric subnet)."""
    catalog = load_catalog()
    provider = cloud(spec.target)
    groups: dict[tuple[str, ...], list[PoolSpec]] = {}
    for pool in spec.pools:
        zone = pool.capacity.zone if pool.capacity is not None else None
        if provider.one_fabric_per_pool:
            key: tuple[str, ...] = (pool.name,)
        elif provider.fabric_per_layout:
            instance = catalog.instance(spec.target, pool.instance_type or "")
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
        what, hint = cloud(spec.target).fabrics
        yield self.finding("node_pools", f"{len(groups)} {what}: {described}; a job spans one of them at most "
                           f"({largest:,} GPUs), or its collectives cross the Ethernet network between them", hint)
