"""Stable allocation of loopbacks, point-to-point /31s, host rail addresses and ASNs.

Every address is computed from a device's *name*, never from its position in a list, so
growing a node pool (more hosts, more leaf groups, more spines) never renumbers a device
that already exists. Each pool is cut into fixed regions:

- loopbacks: 8 regions; fabric leaves 0-3, fabric spines 4, fabric cores 5, storage 6,
  management 7. The address is region base + 1 + the device's slot.
- fabric_links (/31 per switch-to-switch cable): fabric leaf uplinks 1/2, fabric spine
  uplinks 1/4, storage 1/8, management 1/8. Each lower switch owns a block sized for every
  port it has (so re-sized uplinks elsewhere never move it); link k of the block is the k-th
  uplink sorted by peer name.
- hosts (/31 per host port, host side even, switch side odd): fabric 1/2, storage 1/4,
  management 1/4; each region split into equal blocks per node pool (the pool count, or the
  highest `address_block` + 1, rounded up to a power of two), pool i at the block of i with its
  bits reversed, where i is the pool's `address_block`, else its position in the file: adding a
  pool at the end never moves another pool's base, and with an `address_block` on every pool
  neither does inserting or removing one; each node a block sized for its ports.

Slots: a fabric leaf `[pP-]leaf-GGG[-rR]` is ((G-1) * rails' + R) * planes' + P, where
rails' and planes' are powers of two at least the design's rails and planes; spines and
cores are (N-1) * planes' + P; storage and management leaves 2(N-1), spines 2(N-1)+1.

ASNs (RFC 7938): every fabric spine shares `asn.spine` (two tiers), so leaf-to-leaf paths
through any spine have the same AS_PATH length and ECMP holds, and a path can never go
leaf -> spine -> leaf -> spine (loop prevention). With a core tier the cores take
`asn.spine` and the spines of pod p take `asn.spine + 1 + p`. Each leaf takes
`asn.leaf_base` + its loopback offset, unique across networks. Storage and management are
separate routing domains: their spines reuse `asn.spine`.

Changing a pool's CIDR, the number of planes or rails, or inserting or removing a pool before
others when pools have no `address_block` (they are then numbered in file order) renumbers by
design; `allocate` reports what does not fit.
"""

from __future__ import annotations

import ipaddress
from collections import defaultdict
from dataclasses import dataclass, field

import numpy as np

from cluster.findings import Finding, Severity
from cluster.records import SwitchNode
from cluster.spec import ClusterSpec, Nics, PoolSpec
from cluster.topology import FABRIC, Topology, gc_paused

LOOPBACK_REGIONS = {"fabric-leaf": (0, 4), "fabric-spine": (4, 1), "fabric-core": (5, 1), "storage": (6, 1),
                    "management": (7, 1)}  # (first eighth, eighths)
LINK_REGIONS = {"fabric-leaf": (0, 4), "fabric-spine": (4, 2), "storage": (6, 1), "management": (7, 1)}
HOST_REGIONS = {FABRIC: (0, 2), "storage": (2, 1), "management": (3, 1)}  # quarters
# switch management addresses: sixteenths of the upper half of the oob pool (the lower half is the site's)
MANAGEMENT_REGIONS = {"fabric-leaf": (0, 8), "fabric-spine": (8, 2), "fabric-core": (10, 2), "storage": (12, 1),
                      "management": (13, 1), "oob": (14, 1)}
ROUTED_NETWORKS = (FABRIC, "storage", "management")
MAX_ASN = 4_294_967_294


def spread_index(index: int, blocks: int) -> int:
    """Block of pool `index` among `blocks` (a power of two): the index with its bits reversed.

    Pool 0 sits at 0, pool 1 at 1/2, pool 2 at 1/4, pool 3 at 3/4, ...: adding a pool at the end
    halves the room of the others but never moves their base, so no existing host is renumbered.
    """
    bits = blocks.bit_length() - 1
    return int(format(index, f"0{bits}b")[::-1], 2) if bits else 0


def pow2(value: int) -> int:
    """Smallest power of two >= value (and >= 1)."""
    return 1 << max(0, value - 1).bit_length()


POOL_RULE = "ADDR-POOL"  # the rule whose findings the allocation writes (cluster.rules.addressing)


@dataclass
class Addresses:
    """Every allocation of one design, as integers (IPv4) so that big designs stay cheap."""

    loopbacks: dict[str, int] = field(default_factory=dict)
    asns: dict[str, int] = field(default_factory=dict)
    # (lower, upper, network, parallel index) -> lower-side address; upper side is +1
    links: dict[tuple[str, str, str, int], int] = field(default_factory=dict)
    # (config path, region) -> (message, hint) of the first device that does not fit there
    shortfalls: dict[tuple[str, str], tuple[str, str]] = field(default_factory=dict)
    # config path -> the longest prefix that holds every allocation of that pool
    fits: dict[str, int] = field(default_factory=dict)
    # switch -> its management address on the oob segment (designs with an oob network)
    management: dict[str, int] = field(default_factory=dict)
    management_prefix: int = 32  # the oob segment's prefix length

    def short(self, path: str, region: str, message: str, hint: str, fits: int | None = None) -> None:
        """Record that `region` of the pool at `path` cannot hold an allocation."""
        self.shortfalls.setdefault((path, region), (message, hint))
        if fits is not None:
            self.fits[path] = min(self.fits.get(path, 32), fits)

    @property
    def findings(self) -> list[Finding]:
        """ADDR-POOL findings: one per pool and region, the first device that does not fit naming
        the gap, each hint naming the prefix that holds all of the pool's allocations."""
        findings = []
        for (path, _), (message, hint) in self.shortfalls.items():
            if path in self.fits:
                hint = f"use a /{self.fits[path]} or larger {path.removeprefix('addressing.')} pool"
            findings.append(Finding(POOL_RULE, Severity.ERROR, path, message, hint))
        return findings

    def link(self, lower: str, upper: str, network: str, index: int) -> tuple[str, str]:
        """(lower side, upper side) of one cable, as `a.b.c.d/31` strings."""
        base = self.links[(lower, upper, network, index)]
        return _cidr(base, 31), _cidr(base + 1, 31)

    def loopback(self, switch: str) -> str | None:
        value = self.loopbacks.get(switch)
        return None if value is None else dotted(value)

    def management_address(self, switch: str) -> str | None:
        """The switch's management address with the oob segment's prefix length (a.b.c.d/len)."""
        value = self.management.get(switch)
        return None if value is None else _cidr(value, self.management_prefix)


def _prefix_for(region_size: int, parts: int, count: int) -> int:
    """The prefix length of the smallest pool whose region (`count` of `parts`) holds `region_size`."""
    pool_size = max(pow2(region_size) * parts // count, 1)
    return max(0, 32 - (pool_size.bit_length() - 1))


def dotted(value: int) -> str:
    """An IPv4 address as text (ipaddress.IPv4Address is 10x slower for millions of ports)."""
    return f"{value >> 24}.{value >> 16 & 255}.{value >> 8 & 255}.{value & 255}"


def _cidr(value: int, prefix: int) -> str:
    return f"{dotted(value)}/{prefix}"


def _region(network: ipaddress.IPv4Network, parts: int, first: int, count: int) -> tuple[int, int]:
    """(base, size) of `count` consecutive parts out of `parts` equal parts of `network`."""
    size = network.num_addresses // parts
    return int(network.network_address) + first * size, size * count


def management_slot(data: SwitchNode, rails: int, planes: int) -> tuple[str, int]:
    """(region, slot) of any switch's management address: a routed switch's loopback slot, an oob
    switch's 2(N-1) as a leaf and 2(N-1)+1 as a spine."""
    slot = switch_slot(data, rails, planes)
    if slot is not None:
        return slot
    return "oob", 2 * data["index"] + (1 if data["tier"] == "spine" else 0)


def switch_slot(data: SwitchNode, rails: int, planes: int) -> tuple[str, int] | None:
    """(region, slot) of a routed switch from its place in the design (tier, index, plane, group,
    rail: the fields its stable name is made of); None for oob switches."""
    network, tier = data["network"], data["tier"]
    if network == FABRIC:
        if tier == "leaf":
            group = data["group"]
            assert group is not None, "every fabric leaf is in a leaf group"
            return "fabric-leaf", (group * pow2(rails) + (data["rail"] or 0)) * pow2(planes) + data["plane"]
        return f"fabric-{tier}", data["index"] * pow2(planes) + data["plane"]
    if network not in ("storage", "management"):
        return None
    return network, 2 * data["index"] + (1 if tier == "spine" else 0)


def plan_prefixes(spec: ClusterSpec) -> dict[str, tuple[tuple[str, int], ...]]:
    """{routing domain: ((region, prefix length), ...)}: where the plan draws the prefixes BGP may
    carry in each domain, the loopback /32s from the domain's eighths of the loopbacks pool and the
    host /31s from its quarters of the hosts pool (a converged fabric's also from the quarters of the
    networks it carries), each region as the fewest CIDRs that cover it.
    What a BGP session accepts and sends (cluster.intent.bgp)."""
    loopbacks = ipaddress.IPv4Network(spec.addressing.loopbacks)
    hosts = ipaddress.IPv4Network(spec.addressing.hosts)
    regions = {FABRIC: ("fabric-leaf", "fabric-spine", "fabric-core"), "storage": ("storage",),
               "management": ("management",)}
    # a converged fabric (fabric.shared_with) carries the shared networks' host links too
    carried = {FABRIC: (FABRIC, *(spec.fabric.shared_with if spec.fabric is not None else ())),
               "storage": ("storage",), "management": ("management",)}
    found: dict[str, tuple[tuple[str, int], ...]] = {}
    for network in ROUTED_NETWORKS:
        spans = [(_region(loopbacks, 8, *LOOPBACK_REGIONS[region]), 32) for region in regions[network]]
        spans.extend((_region(hosts, 4, *HOST_REGIONS[shared]), 31) for shared in carried[network])
        entries: list[tuple[str, int]] = []
        for length in (32, 31):
            blocks = [ipaddress.IPv4Network((base, 32 - (size.bit_length() - 1)))
                      for (base, size), wanted in spans if wanted == length and size >= 2 ** (32 - length)]
            entries.extend((str(block), length) for block in ipaddress.collapse_addresses(blocks))
        found[network] = tuple(entries)
    return found


#: How far a default pool may grow for a large design, from its documented prefix (the three
#: stay clear of one another: 10.0.0.0/10, 10.64.0.0/10, 10.128.0.0/9).
WIDEST_DEFAULT = {"loopbacks": 10, "fabric_links": 10, "hosts": 9}


def fit_default_pools(spec: ClusterSpec, topology: Topology) -> tuple[ClusterSpec, Addresses]:
    """`spec` with each default address pool that cannot hold the design widened (same base, the
    longest prefix that fits, at most WIDEST_DEFAULT): the defaults address every design the sizer
    makes up to the documented scale. A pool the stack file gives is never changed (ADDR-POOL
    reports it when too small). The summary names each widened pool.

    Also returns the fit check (`allocate(..., links=False)`) of the spec it returns, which
    ADDR-POOL reads, so a validation checks the pools once, not once here and once in the rule."""
    checked = allocate(spec, topology, links=False)
    if spec.fabric is None or not spec.default_pools:
        return spec, checked
    short = {path.removeprefix("addressing.") for path, _ in checked.shortfalls}
    derived = list(spec.derived_pools)
    for key in spec.default_pools:
        if key not in short or key not in WIDEST_DEFAULT:
            continue
        default = ipaddress.IPv4Network(getattr(spec.addressing, key))
        others = [ipaddress.IPv4Network(getattr(spec.addressing, other)) for other in WIDEST_DEFAULT if other != key]
        for prefix in range(default.prefixlen - 1, WIDEST_DEFAULT[key] - 1, -1):
            wider = default.supernet(new_prefix=prefix)
            if wider.network_address != default.network_address or any(wider.overlaps(o) for o in others):
                break
            candidate = spec.model_copy(update={"addressing": spec.addressing.model_copy(update={key: str(wider)})})
            candidate_check = allocate(candidate, topology, links=False)
            if not any(path == f"addressing.{key}" for path, _ in candidate_check.shortfalls):
                spec = candidate.model_copy(update={"derived_pools": (*derived, (key, str(default)))})
                checked = candidate_check
                derived = list(spec.derived_pools)
                break
    return spec, checked


def allocate(spec: ClusterSpec, topology: Topology, links: bool = True) -> Addresses:
    """Loopbacks, ASNs and /31s for every routed switch and cable of the design. With
    `links=False` the blocks of switch uplinks and host ports are only checked to fit, not
    enumerated cable by cable (ADDR-POOL: the same problems; 260k switch cables and a million
    host ports at 100k+ GPUs are enumerated only when rendering)."""
    with gc_paused():
        return _allocate(spec, topology, links)


def _allocate(spec: ClusterSpec, topology: Topology, links: bool) -> Addresses:
    result = Addresses()
    if spec.fabric is None:
        return result
    routed_fabric = spec.fabric.transport == "roce"
    rails = max(spec.fabric.rails, 1)
    planes = spec.fabric.planes
    loopbacks = ipaddress.IPv4Network(spec.addressing.loopbacks)
    link_pool = ipaddress.IPv4Network(spec.addressing.fabric_links)
    host_pool = ipaddress.IPv4Network(spec.addressing.hosts)
    three_tier = topology.fabric_plan is not None and topology.fabric_plan.cores > 0
    tiers: dict[str, str] = {}
    slots: dict[str, tuple[str, int]] = {}
    loopback_base = int(loopbacks.network_address)
    for name, data in topology.switches():
        if data["network"] == FABRIC and not routed_fabric:
            continue
        slot = switch_slot(data, rails, planes)
        if slot is None:
            continue
        slots[name] = slot
        base, size = _region(loopbacks, 8, *LOOPBACK_REGIONS[slot[0]])
        if slot[1] + 1 >= size:
            prefix = _prefix_for(slot[1] + 2, 8, LOOPBACK_REGIONS[slot[0]][1])
            result.short(
                "addressing.loopbacks", slot[0],
                f"{loopbacks} gives {slot[0]} switches {size - 1:,} loopbacks; {name} needs slot {slot[1] + 1:,}",
                f"use a /{prefix} or larger loopbacks pool", prefix)
            continue
        result.loopbacks[name] = base + 1 + slot[1]
        result.asns[name] = _asn(spec, data, base + 1 + slot[1] - loopback_base, three_tier)
        tiers[name] = data["tier"]
    _check_asns(spec, result, tiers)
    if spec.oob is not None:
        _allocate_management(result, topology, ipaddress.IPv4Network(spec.addressing.oob), rails, planes)
    _allocate_uplinks(result, topology, slots, link_pool, links)
    _allocate_hosts(spec, result, topology, host_pool, routed_fabric, links)
    return result


def _allocate_management(result: Addresses, topology: Topology, pool: ipaddress.IPv4Network, rails: int,
                         planes: int) -> None:
    """A management address on the oob segment for every switch, from the upper half of the pool,
    by the same stable slot as its loopback (module text)."""
    result.management_prefix = pool.prefixlen
    upper = ipaddress.IPv4Network((int(pool.network_address) + pool.num_addresses // 2, pool.prefixlen + 1))
    for name, data in topology.switches():
        region, slot = management_slot(data, rails, planes)
        base, size = _region(upper, 16, *MANAGEMENT_REGIONS[region])
        if slot + 1 >= size:
            prefix = _prefix_for(slot + 2, 32, MANAGEMENT_REGIONS[region][1])
            result.short("addressing.oob", f"management-{region}",
                          f"{pool} gives {region} switches {max(size - 1, 0):,} management addresses; {name} needs slot "
                          f"{slot + 1:,}", f"use a /{prefix} or larger oob pool", prefix)
            continue
        result.management[name] = base + 1 + slot


def _asn(spec: ClusterSpec, data: SwitchNode, loopback_offset: int, three_tier: bool) -> int:
    if data["tier"] == "leaf":
        return spec.asn.leaf_base + loopback_offset
    if data["network"] == FABRIC and data["tier"] == "spine" and three_tier:
        return spec.asn.spine + 1 + int(data["pod"] or 0)
    return spec.asn.spine


def _check_asns(spec: ClusterSpec, result: Addresses, tiers: dict[str, str]) -> None:
    leaves = {asn for name, asn in result.asns.items() if tiers[name] == "leaf"}
    upper = {asn for name, asn in result.asns.items() if tiers[name] != "leaf"}
    top = max(leaves, default=0)
    if top > MAX_ASN:
        result.short(
            "asn.leaf_base", "limit", f"leaf ASNs reach {top:,}, above the 4-byte limit {MAX_ASN:,}",
            f"lower asn.leaf_base to at most {MAX_ASN - (top - spec.asn.leaf_base):,}")
    clash = sorted(leaves & upper)
    if clash:
        result.short(
            "asn.leaf_base", "clash", f"leaf ASN {clash[0]:,} is also a spine or core ASN",
            "keep asn.leaf_base clear of asn.spine and the pod ASNs above it (RFC 7938: spines 4200000000, "
            "leaves from 4200001000)")


def _allocate_uplinks(result: Addresses, topology: Topology, slots: dict[str, tuple[str, int]],
                      pool: ipaddress.IPv4Network, enumerate_links: bool) -> None:
    """A /31 per switch-to-switch cable, in blocks owned by the lower switch."""
    uplinks: dict[str, list[tuple[str, str, int]]] = defaultdict(list)
    if enumerate_links:
        for _, _, key, data in topology.edges:  # the topology's edge list: one networkx pass per graph
            lower, upper = data["lower"], data["upper"]
            if lower not in slots or upper not in slots:
                continue
            for index in range(data["links"]):
                uplinks[lower].append((upper, key, index))
    else:  # which switches own a block, from the link arrays: the blocks' fit needs no more
        arrays = topology.link_arrays
        slotted = np.zeros(len(arrays.names), dtype=bool)
        slotted[[arrays.index[name] for name in slots]] = True
        owners = np.unique(arrays.lower[slotted[arrays.lower] & slotted[arrays.upper]]).tolist()
        uplinks.update((arrays.names[owner], []) for owner in owners)
    # a block per lower switch sized by its port count, not its current uplinks: re-sizing the
    # uplinks when a pool grows must not move the blocks of other switches
    widest: dict[str, int] = defaultdict(int)
    for lower in uplinks:
        node = topology.switch(lower)
        widest[slots[lower][0]] = max(widest[slots[lower][0]], node["ports"] + node["uplink_ports"])
    for lower in sorted(uplinks):
        region_name = slots[lower][0]
        region = "fabric-spine" if region_name in ("fabric-spine", "fabric-core") else region_name
        base, size = _region(pool, 8, *LINK_REGIONS[region])
        stride = 2 * pow2(widest[region_name])
        start = slots[lower][1] * stride
        if start + stride > size:
            prefix = _prefix_for(start + stride, 8, LINK_REGIONS[region][1])
            result.short(
                "addressing.fabric_links", region,
                f"{pool} gives {region} uplinks {size:,} addresses; {lower} needs {start + stride:,}",
                f"use a /{prefix} or larger fabric_links pool", prefix)
            continue
        for ordinal, (upper, network, index) in enumerate(sorted(uplinks[lower])):
            result.links[(lower, upper, network, index)] = base + start + 2 * ordinal


def _host_nics(pool: PoolSpec, network: str) -> Nics:
    return pool.nics(network)


def _allocate_hosts(spec: ClusterSpec, result: Addresses, topology: Topology, pool: ipaddress.IPv4Network,
                    routed_fabric: bool, enumerate_links: bool) -> None:
    """A /31 per host port: the host side even, the switch side odd."""
    blocks = pow2(max([len(spec.pools), *(pool.host_block + 1 for pool in spec.pools)]))
    for network in ROUTED_NETWORKS:
        if network == FABRIC and not routed_fabric:
            continue
        base, size = _region(pool, 4, *HOST_REGIONS[network])
        block = size // blocks
        fitting: dict[str, PoolSpec] = {}
        for pool_spec in spec.pools:
            nics = _host_nics(pool_spec, network)
            needed = pool_spec.nodes * 2 * pow2(nics.ports)
            if needed > block:
                prefix = _prefix_for(needed * blocks, 4, HOST_REGIONS[network][1])
                result.short(
                    "addressing.hosts", f"{pool_spec.name}/{network}",
                    f"{pool} gives pool {pool_spec.name} {block:,} {network} addresses; "
                    f"{pool_spec.nodes} nodes x {nics.ports} ports need {needed:,}",
                    f"use a /{prefix} or larger hosts pool", prefix)
            else:
                fitting[pool_spec.name] = pool_spec
        if not enumerate_links:
            continue
        for pool_name, hosts in topology.hosts_by_pool.items():
            owner = fitting.get(pool_name)
            if owner is None:
                continue
            nics = _host_nics(owner, network)
            pool_base = base + block * spread_index(owner.host_block, blocks)
            stride = 2 * pow2(nics.ports)
            for host in hosts:
                node_base = pool_base + topology.host(host)["index"] * stride
                for upper, key, edge in topology.cables(host):
                    if key != network or upper not in result.loopbacks:
                        continue
                    for index, (nic, port) in enumerate(edge["ports"]):
                        result.links[(host, upper, network, index)] = node_base + 2 * (nic * nics.ports_per_nic + port)
