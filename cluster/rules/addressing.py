"""Address pools large enough for the design."""

from __future__ import annotations

from collections.abc import Iterator

from cluster.addressing import POOL_RULE
from cluster.findings import Finding
from cluster.rules.base import Derived, ReadsDerived
from cluster.spec import ClusterSpec
from cluster.topology import Topology


class AddressPools(ReadsDerived):
    """addressing.loopbacks, fabric_links and hosts hold every allocation of `cluster.addressing`
    (fixed regions per tier, network and node pool, so growth never renumbers), and the leaf
    ASNs stay in range and clear of the spine ASNs. Overlapping pools are a SCHEMA error."""

    id = POOL_RULE
    title = "address pool sizes"

    def applies(self, spec: ClusterSpec) -> bool:
        return spec.fabric is not None

    def check_derived(self, spec: ClusterSpec, topology: Topology, derived: Derived) -> Iterator[Finding]:
        # one finding per pool and region, written by the allocation itself (unsuppressible)
        yield from derived.address_check().findings
