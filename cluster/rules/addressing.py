"""Address pools large enough for the design."""

from __future__ import annotations

from collections.abc import Iterator

from cluster.addressing import allocate
from cluster.findings import Finding
from cluster.rules.base import Rule
from cluster.spec import ClusterSpec
from cluster.topology import Topology


class AddressPools(Rule):
    """addressing.loopbacks, fabric_links and hosts hold every allocation of `cluster.addressing`
    (fixed regions per tier, network and node pool, so growth never renumbers), and the leaf
    ASNs stay in range and clear of the spine ASNs. Overlapping pools are a SCHEMA error."""

    id = "ADDR-POOL"
    title = "address pool sizes"

    def applies(self, spec: ClusterSpec) -> bool:
        return spec.fabric is not None

    def check(self, spec: ClusterSpec, topology: Topology) -> Iterator[Finding]:
        seen: set[tuple[str, str]] = set()
        for problem in allocate(spec, topology, links=False).problems:
            # one finding per pool and region: the first device that does not fit names the gap
            key = (problem.path, problem.message.split(";")[0])
            if key not in seen:
                seen.add(key)
                yield self.finding(problem.path, problem.message, problem.hint)
