"""Bill of materials with cost and power ranges, counted from the cabling plan.

Switches are counted per network, tier and model. Transceivers are counted apart from cables,
one module per front-panel cage in use on either end: a switch's twin-port OSFP cage carries two
400G ports, and so does a DGX H100's (its 8 compute ports sit in 4 OSFP cages, `ports_per_cage` in
the server catalog), so 127 DGX need 508 host-side modules, not 1,016. DAC, AOC and Cat6 links need
none. Cables are one per link, except where a cable's two ends sit in cages of different widths:
200G host ports into 800G switch cages (4 x 200G each) take one 1:4 breakout cable per switch
cage, twin-port host cages into single-port switch cages one 1:2 breakout per host cage.
Prices and watts are [low, high] ranges from cluster/catalog/prices.yaml, overridden by the
stack's `costs` section.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable
from dataclasses import dataclass

from cluster.breakout import breakout
from cluster.catalog import load_catalog
from cluster.catalog.prices import Price, Prices, Range, as_range, generic_port_id, load_prices, with_overrides
from cluster.exports.cabling import media_of, ordered_links
from cluster.records import SwitchNode
from cluster.spec import ClusterSpec, PoolSpec
from cluster.topology import FABRIC, NETWORKS, Topology, gc_paused

HOURS_PER_YEAR = 8760
CATEGORIES = ("switch", "transceiver", "cable")
TIERS = ("leaf", "spine", "core", "host-leaf", "switch-mgmt", "leaf-spine", "spine-core")
NIC_SETS = {"fabric": "fabric_nics", "storage": "storage_nics", "management": "management_nics"}
CAGED_CABLES = ("dac", "aoc")  # cables with their own plugs, one per cage at each end


@dataclass(frozen=True)
class BomLine:
    """`quantity` units of one item on one network and tier (or link, for optics and cables)."""

    network: str
    tier: str
    category: str
    item: str
    description: str
    quantity: int
    unit_usd: Range
    unit_watts: Range
    source: str

    @property
    def usd(self) -> Range:
        return (self.quantity * self.unit_usd[0], self.quantity * self.unit_usd[1])

    @property
    def watts(self) -> Range:
        return (self.quantity * self.unit_watts[0], self.quantity * self.unit_watts[1])


def _sum(ranges: Iterable[Range]) -> Range:
    low = high = 0.0
    for one, two in ranges:
        low, high = low + one, high + two
    return (low, high)


@dataclass(frozen=True)
class Bom:
    """The bill of materials and the totals derived from it."""

    lines: tuple[BomLine, ...]
    nodes: int
    gpus: int
    usd_per_kwh: Range
    energy_source: str
    missing: tuple[str, ...]  # items counted but without a price entry (priced at 0)

    def usd(self, network: str | None = None) -> Range:
        return _sum(line.usd for line in self.lines if network in (None, line.network))

    def watts(self, network: str | None = None) -> Range:
        return _sum(line.watts for line in self.lines if network in (None, line.network))

    def per_node_usd(self) -> Range:
        low, high = self.usd()
        return (low / self.nodes, high / self.nodes)

    def kwh_per_year(self, network: str | None = None) -> Range:
        low, high = self.watts(network)
        return (low * HOURS_PER_YEAR / 1000, high * HOURS_PER_YEAR / 1000)

    def energy_usd_per_year(self, network: str | None = None) -> Range:
        low, high = self.kwh_per_year(network)
        return (low * self.usd_per_kwh[0], high * self.usd_per_kwh[1])

    def count(self, network: str, tier: str, category: str) -> int:
        return sum(line.quantity for line in self.lines
                   if (line.network, line.tier, line.category) == (network, tier, category))

    def networks(self) -> list[str]:
        present = {line.network for line in self.lines}
        return [network for network in NETWORKS if network in present]


def prices_for(spec: ClusterSpec) -> Prices:
    """The catalog's prices with the stack's `costs` overrides applied."""
    prices = load_prices()
    costs = spec.costs
    if costs is None:
        return prices
    overrides = {
        item: (as_range(value.usd) if value.usd is not None else None,
               as_range(value.watts) if value.watts is not None else None)
        for item, value in costs.prices.items()
    }
    kwh = as_range(costs.usd_per_kwh) if costs.usd_per_kwh is not None else None
    return with_overrides(prices, overrides, kwh)


class _Counter:
    def __init__(self, prices: Prices) -> None:
        self.prices = prices
        self.counts: dict[tuple[str, str, str, str, str], int] = {}
        self.units: dict[tuple[str, str, str, str, str], tuple[Range, Range, str]] = {}
        self.missing: set[str] = set()

    def add(self, network: str, tier: str, category: str, item: str, description: str, quantity: int = 1,
            unit: Price | None = None) -> None:
        key = (network, tier, category, item, description)
        self.counts[key] = self.counts.get(key, 0) + quantity
        if key in self.units:
            return
        price = unit or self.prices.get(item)
        if price is None:
            self.missing.add(item)
            self.units[key] = ((0.0, 0.0), (0.0, 0.0), "no price entry")
        else:
            self.units[key] = (price.usd, price.watts, price.source)

    def lines(self) -> tuple[BomLine, ...]:
        lines = [BomLine(network, tier, category, item, description, quantity, *self.units[key])
                 for key, quantity in self.counts.items()
                 for network, tier, category, item, description in [key]]
        lines.sort(key=lambda line: (NETWORKS.index(line.network), CATEGORIES.index(line.category),
                                     TIERS.index(line.tier), line.item, line.description))
        return tuple(lines)


def _switch_price(prices: Prices, model: str, data: SwitchNode) -> tuple[str, str, Price | None]:
    """(item id, description, unit price): catalog models by name, generic boxes per port."""
    if prices.get(model) is not None:
        return model, f"{model} switch", None
    main, uplink = prices.get(generic_port_id(data["port_gbps"])), prices.get(generic_port_id(data["uplink_gbps"]))
    item = generic_port_id(data["port_gbps"])
    if main is None:
        return item, f"{model} switch", None
    usd = (data["ports"] * main.usd[0], data["ports"] * main.usd[1])
    watts = (data["ports"] * main.watts[0], data["ports"] * main.watts[1])
    if data["uplink_ports"] and uplink is not None:
        usd = (usd[0] + data["uplink_ports"] * uplink.usd[0], usd[1] + data["uplink_ports"] * uplink.usd[1])
        watts = (watts[0] + data["uplink_ports"] * uplink.watts[0], watts[1] + data["uplink_ports"] * uplink.watts[1])
    note = f"priced per port ({data['ports']} x {item}): {main.source}"
    return item, f"{model} switch (generic, priced per port)", Price(usd=usd, watts=watts, source=note)


def _ports_per_cage(prices: Prices, model: str, port_gbps: int) -> int:
    """Ports per cage in use at the speed in use: the catalog's breakout where it knows the cages
    (SN5600: 2 at 400G, 8 at 100G, which splits only the odd cages), else the model's ports at
    that speed over the priced cages; 1 if unknown."""
    split = breakout(model, port_gbps)
    if split is not None:
        return split.ports
    entry = prices.get(model)
    switch = load_catalog().switches.get(model)
    if entry is None or not entry.cages or switch is None:
        return 1
    return max(1, switch.port_modes.get(port_gbps, entry.cages) // entry.cages)


def _host_ports_per_cage(pool: PoolSpec | None, network: str) -> int:
    """Ports per front-panel cage of the pool's NICs on `network`, from the server catalog; 1 if unknown
    or if the stack file gives the pool another port count than the catalog's server."""
    server = load_catalog().servers.get(pool.server or "") if pool is not None else None
    if pool is None or server is None or network not in NIC_SETS:
        return 1
    layout = getattr(server, NIC_SETS[network])
    nics = pool.nics(network)
    return layout.ports_per_cage if layout.count * layout.ports_per_nic == nics.ports else 1


def _new_cages(device: str, first: int, count: int, per_cage: int, seen: set[tuple[str, int]]) -> int:
    """How many of the cages holding ports first..first+count-1 of `device` were not counted yet."""
    new = 0
    for cage in range((first - 1) // per_cage, (first + count - 2) // per_cage + 1):
        if (device, cage) not in seen:
            seen.add((device, cage))
            new += 1
    return new


def bill_of_materials(spec: ClusterSpec, topology: Topology) -> Bom:
    """Count switches, transceivers and cables; price them from the catalog and the stack.

    Walks the cabling plan edge by edge (not cable by cable) so that 100k+ GPU designs stay fast;
    a switch cage is counted once, for the first link (in plan order) that uses it. A fixed
    uplink port is a cage of its own.
    """
    with gc_paused():  # hundreds of thousands of small tuples; nothing here makes cycles
        return _count(spec, topology)


def _count(spec: ClusterSpec, topology: Topology) -> Bom:
    prices = prices_for(spec)
    counter = _Counter(prices)
    switch_records = topology.switch_nodes
    pools = {pool.name: pool for pool in spec.pools}
    chosen: dict[tuple[str, str], str] = {
        (network.name, tier): getattr(network, tier).chosen for network in (spec.storage, spec.management, spec.oob)
        if network is not None for tier in ("leaf", "spine")}
    for _name, record in topology.switches():
        item, description, unit = _switch_price(prices, record["model"], record)
        why = chosen.get((record["network"], record["tier"]))
        counter.add(record["network"], record["tier"], "switch", item, f"{description} ({why})" if why else description,
                    unit=unit)
    ports = topology.switch_ports
    per_cage_of: dict[tuple[str, int], int] = {}
    host_cage_of: dict[tuple[str, str], int] = {}
    cages_seen: set[tuple[str, int]] = set()
    media_cache: dict[tuple[str, str], str] = {}
    # Hot loop over every edge: plain integer counts by key; descriptions are built once below.
    cable_counts: dict[tuple[str, str, str, int], int] = {}
    host_ports: dict[tuple[str, str, str, int, str], int] = {}  # optics or cable ports per host
    switch_optics: dict[tuple[str, str, str, int, int, bool], int] = {}
    switch_breakouts: dict[tuple[str, str, str, int, int], int] = {}  # 1:N cables, one per switch cage
    def host_width(host: str, network: str) -> int:
        pool = topology.host(host)["pool"]
        width = host_cage_of.get((pool, network))
        if width is None:
            width = host_cage_of[(pool, network)] = _host_ports_per_cage(pools.get(pool), network)
        return width

    def switch_width(node: SwitchNode) -> int:
        model_speed = (node["model"], node["port_gbps"])
        per_cage = per_cage_of.get(model_speed)
        if per_cage is None:
            per_cage = per_cage_of[model_speed] = _ports_per_cage(prices, *model_speed)
        return per_cage

    rack_tor = spec.fabric is not None and spec.fabric.design == "rack-tor"
    for link, data in ordered_links(topology):
        network, links = data["network"], data["links"]
        media = media_cache.get((network, link))
        if media is None:
            media = media_cache[(network, link)] = media_of(spec, network, link)[0]
        key = (network, link, media, data["gbps"])
        if link == "host-leaf" and media in CAGED_CABLES:
            # A cable has a plug per cage at each end: where the cages differ in width it must break out.
            host, switch = data["lower"], data["upper"]
            width, per_cage = host_width(host, network), switch_width(switch_records[switch])
            span = ports[(switch, host, network)]
            if per_cage > 1 and width == 1 and span.main_count:  # 200G ports into 800G cages: 1:4 per cage
                new = _new_cages(switch, span.main_first, span.main_count, per_cage, cages_seen)
                breakout_key = (network, link, media, switch_records[switch]["port_gbps"], per_cage)
                switch_breakouts[breakout_key] = switch_breakouts.get(breakout_key, 0) + new
            elif width > 1 and (per_cage == 1 or (per_cage == width and (rack_tor or network != FABRIC))):
                host_key = (network, link, media, data["gbps"], host)  # per host cage, below
                host_ports[host_key] = host_ports.get(host_key, 0) + links
            else:
                cable_counts[key] = cable_counts.get(key, 0) + links
            continue
        cable_counts[key] = cable_counts.get(key, 0) + links
        if not media.startswith("optics-"):
            continue
        for device, peer in ((data["lower"], data["upper"]), (data["upper"], data["lower"])):
            if topology.nodes[device]["kind"] == "host":
                host_key = (network, link, media, data["gbps"], device)
                host_ports[host_key] = host_ports.get(host_key, 0) + links
                continue
            node = switch_records[device]
            per_cage = switch_width(node)
            span = ports[(device, peer, network)]
            if span.fixed_count:  # each fixed uplink port is its own cage, used by this edge only
                fixed_key = (network, link, media, node["uplink_gbps"], 1, True)
                switch_optics[fixed_key] = switch_optics.get(fixed_key, 0) + span.fixed_count
            if not span.main_count:
                continue
            new = _new_cages(device, span.main_first, span.main_count, per_cage, cages_seen)
            if new:
                main_key = (network, link, media, node["port_gbps"], per_cage, False)
                switch_optics[main_key] = switch_optics.get(main_key, 0) + new
    host_modules: dict[tuple[str, str, str, int, int, bool], int] = {}
    for (network, link, media, gbps, host), count in host_ports.items():
        width = host_width(host, network)
        straight = not media.startswith("optics-") and switch_width(switch_records[_peer(topology, host, network)]) == width
        module_key = (network, link, media, gbps, width, straight)
        host_modules[module_key] = host_modules.get(module_key, 0) + -(-count // width)
    for (network, link, media, gbps), count in cable_counts.items():
        if media == "cat6":
            counter.add(network, link, "cable", "cat6", "Cat6 RJ45 patch cord", count)
        elif media.startswith("optics-"):
            fibre = media.removeprefix("optics-")
            counter.add(network, link, "cable", f"fiber-{fibre}", f"{fibre.upper()} fibre patch cord", count)
        else:
            counter.add(network, link, "cable", f"{media}-{gbps}g", f"{gbps}G {media.upper()}", count)
    for (network, link, media, gbps, per_cage), count in switch_breakouts.items():
        counter.add(network, link, "cable", f"{media}-{gbps * per_cage}g-{per_cage}x{gbps}g",
                    f"1:{per_cage} breakout {media.upper()}: {gbps * per_cage}G switch cage to {per_cage} x {gbps}G host "
                    "ports", count)
    for (network, link, media, gbps, width, straight), count in host_modules.items():
        if straight:  # twin-port cages at both ends, both ports to the same switch (rack-tor)
            counter.add(network, link, "cable", f"{media}-{gbps * width}g",
                        f"{gbps * width}G {_form(width, gbps)} {media.upper()}, host cage to switch cage", count)
        elif not media.startswith("optics-"):
            counter.add(network, link, "cable", f"{media}-{gbps * width}g-{width}x{gbps}g",
                        f"1:{width} breakout {media.upper()}: {gbps * width}G host cage to {width} x {gbps}G switch "
                        "ports", count)
        elif width == 1:
            fibre = media.removeprefix("optics-")
            counter.add(network, link, "transceiver", f"transceiver-{gbps}g-{fibre}",
                        f"{gbps}G transceiver, {fibre.upper()} (host NIC port)", count)
        else:
            fibre = media.removeprefix("optics-")
            counter.add(network, link, "transceiver", f"transceiver-{gbps * width}g-{fibre}",
                        f"{gbps * width}G {_form(width, gbps)} transceiver, {fibre.upper()} (host cage)", count)
    for (network, link, media, gbps, per_cage, _fixed), count in switch_optics.items():
        fibre = media.removeprefix("optics-")
        module = gbps * per_cage
        form = _form(per_cage, gbps) if per_cage > 1 else "single-port"
        counter.add(network, link, "transceiver", f"transceiver-{module}g-{fibre}",
                    f"{module}G {form} transceiver, {fibre.upper()} (switch cage)", count)
    return Bom(lines=counter.lines(), nodes=spec.nodes, gpus=spec.gpus, usd_per_kwh=prices.usd_per_kwh,
               energy_source=prices.energy_source, missing=tuple(sorted(counter.missing)))


def _peer(topology: Topology, host: str, network: str) -> str:
    """The switch a host's `network` ports go to (its first, in rack-tor the only one)."""
    for upper, key, _ in topology.cables(host):
        if key == network:
            return upper
    raise KeyError(f"{host} has no {network} link")


def _form(per_cage: int, gbps: int) -> str:
    return f"{'twin' if per_cage == 2 else per_cage}-port ({per_cage} x {gbps}G)"


BOM_COLUMNS = ("network", "tier", "category", "item", "description", "quantity", "unit_usd_low", "unit_usd_high",
               "total_usd_low", "total_usd_high", "unit_watts_low", "unit_watts_high", "total_watts_low",
               "total_watts_high", "source")


def _money(value: float) -> str:
    return f"{value:.2f}".rstrip("0").rstrip(".")


def bom_csv(bom: Bom) -> str:
    """The bill of materials as CSV, one row per line, then a TOTAL row per network and overall."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(BOM_COLUMNS)
    for line in bom.lines:
        writer.writerow([line.network, line.tier, line.category, line.item, line.description, line.quantity,
                         *map(_money, (*line.unit_usd, *line.usd, *line.unit_watts, *line.watts)), line.source])
    for network in [*bom.networks(), None]:
        usd, watts = bom.usd(network), bom.watts(network)
        writer.writerow([network or "all", "", "total", "", "", "", "", "", *map(_money, usd), "", "",
                         *map(_money, watts), ""])
    return out.getvalue()
