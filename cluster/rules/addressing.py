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
        problems = allocate(spec, topology, links=False).problems
        # Every hint for a pool names the prefix that holds all of its allocations.
        fits: dict[str, int] = {}
        for problem in problems:
            if problem.fits is not None:
                fits[problem.path] = min(fits.get(problem.path, 32), problem.fits)
        for problem in problems:
            # one finding per pool and region: the first device that does not fit names the gap
            key = (problem.path, problem.message.split(";")[0])
            if key not in seen:
                seen.add(key)
                hint = problem.hint
                if problem.path in fits:
                    pool = problem.path.removeprefix("addressing.")
                    hint = f"use a /{fits[problem.path]} or larger {pool} pool"
                yield self.finding(problem.path, problem.message, hint)
