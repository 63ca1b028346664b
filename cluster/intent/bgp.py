"""BGP safeguards of a routed switch, vendor-neutral: what its sessions may carry and how they
restart. Every dialect writes the same policy in its own forms (docs/reference/dialects.md, *BGP safeguards*).

- Prefix filter (`PLAN`), on every session in both directions: only the routing domain's plan,
  host /31s and switch loopback /32s, each from the region of its pool the allocation draws them
  from (cluster.addressing); no default route, no link /31, nothing a host or a miscabled switch
  could inject.
- Route limit: the domain's prefix count (a loopback per routed switch, a /31 per host port) with
  headroom; a neighbor that sends more is torn down before it fills the table.
- Graceful restart: leaves restart gracefully (their peers keep forwarding on their routes while
  the routing stack restarts, as SONiC's own bgpd template sets it for its ToRs: restart time 240 s,
  path selection deferred 45 s after restart); every switch is a helper. A peer lost to BFD is still
  withdrawn at once: graceful restart keeps routes only when the peer's control plane restarts
  (tests/test_bfd_live.py).
"""

from __future__ import annotations

from dataclasses import dataclass

from cluster.addressing import plan_prefixes
from cluster.spec import ClusterSpec

PREFIX_LIST = "PLAN"
ROUTE_HEADROOM = 1.5  # room to grow the design before the limit tears sessions down
RESTART_TIME_S = 240  # sonic-buildimage dockers/docker-fpm-frr/frr/bgpd/bgpd.main.conf.j2: restart_time default(240)
SELECT_DEFER_TIME_S = 45  # the same template: select_defer_time default(45)


@dataclass(frozen=True)
class PlanPrefix:
    """One entry of the prefix filter: prefixes of exactly `length` bits inside `prefix`."""

    sequence: int
    prefix: str  # a.b.c.d/len
    length: int  # 32 for loopbacks, 31 for host links

    @property
    def prefix_length(self) -> int:
        return int(self.prefix.split("/")[1])

    @property
    def exact(self) -> bool:
        """The region is itself one prefix of `length` (no range to give)."""
        return self.prefix_length == self.length


@dataclass(frozen=True)
class BgpPolicy:
    """The safeguards of one routed switch's BGP sessions (module text)."""

    prefixes: tuple[PlanPrefix, ...]
    route_limit: int  # most prefixes one neighbor may send
    restarts: bool  # restarts gracefully itself (leaves); every switch helps its peers restart
    prefix_list: str = PREFIX_LIST
    restart_time_s: int = RESTART_TIME_S
    select_defer_time_s: int = SELECT_DEFER_TIME_S


def route_limit(routes: int) -> int:
    """The per-neighbor prefix limit: the domain's prefix count with headroom, in thousands."""
    return max(1000, -(-int(routes * ROUTE_HEADROOM) // 1000) * 1000)


def bgp_policies(spec: ClusterSpec) -> dict[str, tuple[PlanPrefix, ...]]:
    """The prefix filter of each routing domain (fabric, storage, management)."""
    return {network: tuple(PlanPrefix(10 * (index + 1), prefix, length) for index, (prefix, length) in enumerate(regions))
            for network, regions in plan_prefixes(spec).items()}


def bgp_policy(prefixes: dict[str, tuple[PlanPrefix, ...]], network: str, tier: str, routes: int) -> BgpPolicy:
    """The policy of a routed switch of `network` and `tier` in a domain of `routes` prefixes."""
    return BgpPolicy(prefixes=prefixes.get(network, ()), route_limit=route_limit(routes), restarts=tier == "leaf")
