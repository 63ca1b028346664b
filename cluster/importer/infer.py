"""The design the observed links describe, as a `gpu-cluster:cluster` mapping.

Every count is the one most devices show (a mode; on a tie the larger, since a cable is more
often missing than extra): uplinks per leaf and per spine, fabric ports per host, NIC speeds. So
a fault at one device (a leaf with half its uplinks, a host on the wrong rail or leaf, a missing
cable) never changes the design, and the comparison with the built design names it at the device.
Tiers, planes, leaf groups and rails come from the device names (cluster.importer.roles), and
as-designed counts from the highest number seen, so a switch that reported nothing is still
counted when any device names it. Nothing is sized: every count is written as built.
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from itertools import pairwise
from typing import Any, TypeVar

from cluster.catalog import load_catalog
from cluster.dialects import generic, platform
from cluster.importer.links import TIER_ABOVE, HostLink, Sorted, Uplink, sort_links
from cluster.importer.observe import Observed, shown_description
from cluster.importer.roles import HostRole, SwitchRole, roles
from cluster.importer.switches import Naming, choose, model_by_pattern, model_in
from cluster.naming import GENERIC_RDMA_DEVICE, NETDEV_FORMS
from cluster.topology import FABRIC

T = TypeVar("T")
SPEEDS = (1, 10, 25, 40, 50, 100, 200, 400, 800, 1600)  # the port speeds a stack file takes
#: A pod split is taken when at least this share of leaf-to-spine links stay inside their pod.
POD_AGREEMENT = 0.9
NETWORKS = ("storage", "management", "oob")


class NothingToImport(Exception):
    """The data holds no fabric the product can describe; the message says what is missing."""


@dataclass(frozen=True)
class Options:
    """What the user adds to the data: pool -> GPU, (device pattern, switch model) pairs, and
    whether the links' reported speeds are ignored (a lab's virtual links report 10 Gb/s)."""

    name: str = "imported"
    gpus: Mapping[str, str] = field(default_factory=dict)
    models: tuple[tuple[str, str], ...] = ()
    ignore_speeds: bool = False


@dataclass
class Design:
    """The inferred mapping, what the data could not say (`notes`), a comment per config path,
    the devices whose names give no role, and pools built with a stand-in GPU (not written)."""

    mapping: dict[str, Any]
    notes: list[str]
    comments: dict[str, str]
    unnamed: list[str]
    stand_in_gpus: dict[str, str] = field(default_factory=dict)
    observed_networks: tuple[str, ...] = ()
    positions: dict[str, dict[str, list[str]]] = field(default_factory=dict)  # pool -> network -> names
    host_groups: dict[str, int] = field(default_factory=dict)


def mode(values: Iterable[T]) -> T | None:
    """The most common value; on a tie the largest."""
    counts = Counter(values)
    if not counts:
        return None
    most = max(counts.values())
    return max(value for value, count in counts.items() if count == most)  # type: ignore[type-var]


def speed(values: Iterable[float | None]) -> int | None:
    """The speed most links of a set run at, as a port speed a stack file takes (rounded down)."""
    found = mode(int(value) for value in values if value is not None and value >= 1)
    if found is None:
        return None
    return max((value for value in SPEEDS if value <= found), default=SPEEDS[0])


def gpu_of(pool: str) -> str | None:
    """The catalog GPU a pool name names (`h200`, `b200-su1`): a word of it, else the longest key in it."""
    keys = {key.lower(): key for key in load_catalog().gpus}
    words = pool.lower().split("-")
    for word in words:
        if word in keys:
            return keys[word]
    inside = [key for lower, key in keys.items() if lower in pool.lower()]
    return max(inside, key=len) if inside else None


class Inference:
    """One import's inference: the links sorted, the namings per tier, then each section."""

    def __init__(self, observed: Observed, options: Options) -> None:
        self.observed = observed
        self.options = options
        self.roles, unnamed = roles(observed.devices)
        self.links: Sorted = sort_links(observed.links, self.roles)
        self.design = Design(mapping={}, notes=[], comments={}, unnamed=unnamed)
        self.switches: dict[tuple[str, str], list[tuple[str, SwitchRole]]] = defaultdict(list)
        for device, role in sorted(self.roles.items()):
            if isinstance(role, SwitchRole):
                self.switches[(role.network, role.tier)].append((device, role))
        self.hosts: dict[str, dict[int, str]] = defaultdict(dict)
        for device, role in self.roles.items():
            if isinstance(role, HostRole):
                self.hosts[role.pool][role.index] = device
        self.namings: dict[tuple[str, str], Naming] = {}
        self.leaf_numbers: dict[str, Mapping[str, int]] = {}  # leaf -> its tier's naming's port numbers
        self.uplinks_of: dict[str, list[Uplink]] = defaultdict(list)  # lower switch -> its uplinks, read once
        for link in self.links.uplinks:
            self.uplinks_of[link.lower].append(link)
        self.unknown_nics: set[str] = set()  # networks some pool's NICs on are left to the defaults
        self.striped_layout = False

    # ------------------------------------------------------------------ switches

    def naming(self, network: str, tier: str) -> Naming:
        key = (network, tier)
        if key not in self.namings:
            members = self.switches[key]
            names: list[set[str]] = []
            models: Counter[str] = Counter()
            speeds: dict[str, float] = {}
            for device, _ in members:
                names.append(set(self.links.switch_ports.get(device, ())))
                model = model_by_pattern(device, self.options.models) or model_in(
                    self.observed.descriptions.get(device, ""))
                if model is not None:
                    models[model] += 1
                if not self.options.ignore_speeds:
                    for port, gbps in self.links.switch_speeds.get(device, {}).items():
                        speeds[port] = max(gbps, speeds.get(port, 0.0))
            transport = ("infiniband" if self.observed.discovered else None) if network == FABRIC else "roce"
            self.namings[key] = choose(names, models, speeds, transport)
        return self.namings[key]

    def number(self, network: str, tier: str, port: str) -> int | None:
        naming = self.namings.get((network, tier)) or self.naming(network, tier)
        return naming.numbers.get(port.lower())

    def in_use(self, network: str, tier: str) -> list[int]:
        """The port number of every port name seen on the tier's switches (0: a name the naming lacks)."""
        numbers = self.naming(network, tier).numbers
        return [numbers.get(port, 0) for device, _ in self.switches[(network, tier)]
                for port in self.links.switch_ports.get(device, ())]  # (names seen are lower-case)

    def switch_ref(self, network: str, tier: str, path: str) -> dict[str, Any]:
        """A tier's switch as the stack file names it: catalog model and speed, with the ports in
        use where the uplinks show the switch runs fewer (uplinks sit on the top ports)."""
        naming = self.naming(network, tier)
        top = self._top_uplink_port(network, tier, naming)
        ref: dict[str, Any] = {}
        description = next((self.observed.descriptions[device] for device, _ in self.switches[(network, tier)]
                            if device in self.observed.descriptions), "")
        if naming.model is not None:
            ref["switch"] = naming.model
            ref["port_gbps"] = naming.gbps
            if top is not None and top < naming.ports:
                ref["ports"] = top
            entry = load_catalog().switches[naming.model]
            if naming.os != entry.os and entry.transport != "infiniband":
                ref["os"] = naming.os
            mapped = any(model_by_pattern(device, self.options.models) for device, _ in self.switches[(network, tier)])
            source = ("given (--model)" if mapped else f"reported as '{shown_description(description)}'" if description
                      else "from its port names")
            self.design.comments[path] = source
        else:
            in_use = max(self.in_use(network, tier), default=1)
            fewest = self._striped_ports(network, tier) if top is None else 0
            ref["ports"] = top if top is not None else max(in_use, fewest)
            ports = "the fewest its striped links fit" if fewest > in_use else "those in use"
            ref["port_gbps"] = naming.gbps or 400
            if platform(naming.os).stack_os and naming.os != generic().name:
                ref["os"] = naming.os
            what = f"reported as '{shown_description(description)}'" if description else "no description reported"
            self.design.comments[path] = f"UNKNOWN MODEL ({what}): ports are {ports}; give the model"
            self.design.notes.append(f"{path}: switch model unknown ({what}); set `switch:` to its catalog model "
                                     "or import again with --model PATTERN=MODEL")
            if naming.gbps is None:
                self.design.notes.append(f"{path}.port_gbps: no link speed reported; 400 assumed")
        if naming.model is not None:  # an unknown model's notes say it already
            self.design.notes.extend(f"{path}: {note}" for note in naming.notes)
        return ref

    def tier_ref(self, network: str, tier: str, below: dict[str, Any], section: dict[str, Any]) -> dict[str, Any]:
        """The switch of `tier` written into `section` unless it inherits `below`'s; the one in effect."""
        path = f"{network}.{tier}"
        ref = self.switch_ref(network, tier, path)
        if _inherits(ref, below, max(self.in_use(network, tier), default=0)):
            self.design.comments.pop(path, None)
            self.design.notes = [note for note in self.design.notes if not note.startswith(f"{path}")]
            return below
        section[tier] = ref
        return ref

    def _striped_ports(self, network: str, tier: str) -> int:
        """The fewest downlink ports a striped upper tier has: a lower's links to one upper sit
        `stride` ports apart, the stride its downlink ports divided by the most links a lower has
        to it (cluster.topology._spread), so a switch that shows only the ports in use is given
        stride x links; 0 when the layout is not striped or no lower has two links to an upper."""
        if network != FABRIC or not self.striped_layout:
            return 0
        numbers = self.naming(network, tier).numbers
        below = next((lower for lower, upper in TIER_ABOVE.items() if upper == tier), None)
        pairs: dict[tuple[str, str], list[int]] = defaultdict(list)
        for device, _ in self.switches[(network, below)] if below else ():
            for link in self.uplinks_of.get(device, ()):
                pairs[(device, link.upper)].append(numbers.get(link.upper_port.lower(), 0))
        runs = [sorted(ports) for ports in pairs.values() if len(ports) > 1 and 0 not in ports]
        stride = mode(run[1] - run[0] for run in runs)
        return stride * max(len(run) for run in runs) if stride else 0

    def _top_uplink_port(self, network: str, tier: str, naming: Naming) -> int | None:
        """The highest main port any switch of the tier has an uplink on: the ports it runs."""
        numbers = [self.number(network, tier, link.lower_port) for device, _ in self.switches[(network, tier)]
                   for link in self.uplinks_of.get(device, ())]
        main = [value for value in numbers if value is not None and (naming.model is None or value <= naming.ports)]
        return max(main, default=None)

    # ------------------------------------------------------------------ fabric

    def uplink_counts(self, network: str, tier: str) -> dict[str, int]:
        return {device: len(self.uplinks_of.get(device, ())) for device, _ in self.switches[(network, tier)]}

    def fabric(self) -> dict[str, Any]:
        leaves = self.switches[(FABRIC, "leaf")]
        if not leaves:
            raise NothingToImport("no GPU fabric leaf in the data (named `leaf-NNN-rR`, `leaf-NNN` or "
                                  "`pP-leaf-...`): collect the leaves' and the hosts' neighbor data")
        fabric_roles = [role for key, members in self.switches.items() if key[0] == FABRIC for _, role in members]
        planes = max(role.plane for role in fabric_roles) + 1
        rail_optimized = any(role.rail is not None for _, role in leaves)
        groups = max(role.index for _, role in leaves) + 1
        rails = max((role.rail or 0) for _, role in leaves) + 1 if rail_optimized else 1
        spines = max((role.index for _, role in self.switches[(FABRIC, "spine")]), default=-1) + 1
        cores = max((role.index for _, role in self.switches[(FABRIC, "core")]), default=-1) + 1
        result: dict[str, Any] = {}
        self.striped_layout = self.striped()
        naming = self.naming(FABRIC, "leaf")
        if self.observed.discovered or (naming.model and load_catalog().switches[naming.model].transport == "infiniband"):
            result["transport"] = "infiniband"
        result["design"] = "rail-optimized" if rail_optimized else "rack-tor"
        if planes > 1:
            result["planes"] = planes
        leaf = result["leaf"] = self.switch_ref(FABRIC, "leaf", "fabric.leaf")
        if spines:
            spine = self.tier_ref(FABRIC, "spine", leaf, result)
            if cores:
                self.tier_ref(FABRIC, "core", spine, result)
        result["leaves"] = groups * rails * planes
        result["spines"] = spines * planes
        if cores:
            result["cores"] = cores * planes
            result["pods"] = self.pods(groups, spines)
        leaf_uplinks = mode(self.uplink_counts(FABRIC, "leaf").values()) or 0
        result["leaf_uplinks"] = leaf_uplinks
        if cores:
            result["spine_uplinks"] = mode(self.uplink_counts(FABRIC, "spine").values()) or 0
        self.design.comments["fabric.leaves"] = (f"{len(leaves)} seen: {groups} leaf group(s) x {rails} rail(s) x "
                                                 f"{planes} plane(s)")
        return result

    def striped(self) -> bool:
        """Whether the fabric's uplinks are laid out `striped` (fabric.uplink_layout): more of its
        leaves and spines take their uppers in turn, uplink k to upper k mod uppers, than in
        blocks (each upper a run of the switch's uplink ports, in the uppers' order). A switch
        with one link per upper is cabled alike in both and says nothing; one that fits neither
        (a missing or moved uplink) says nothing either, and the comparison names it."""
        votes: Counter[str] = Counter()
        for tier in ("leaf", "spine"):
            naming = self.naming(FABRIC, tier)
            for device, _ in self.switches[(FABRIC, tier)]:
                slots = []
                for link in self.uplinks_of.get(device, ()):
                    number, upper = naming.number(link.lower_port), self.roles[link.upper]
                    if number is None or not isinstance(upper, SwitchRole):
                        break
                    # Uplink slots: the fixed uplink ports (numbered after the main ports) first.
                    fixed = naming.model is not None and number > naming.ports
                    slots.append((not fixed, number, upper.index))
                else:
                    votes[_layout([upper for _, _, upper in sorted(slots)])] += 1
        return votes["striped"] > votes["blocks"]

    def pods(self, groups: int, spines: int) -> int:
        """The most pods the leaf-to-spine links keep to (each leaf's links within its pod's
        spines, as the builder splits them), among the splits the stack file allows."""
        pairs = [(lower, upper) for lower, upper in ((self.roles[link.lower], self.roles[link.upper])
                                                      for link in self.links.uplinks)
                 if isinstance(lower, SwitchRole) and isinstance(upper, SwitchRole)
                 and lower.network == FABRIC and lower.tier == "leaf"]
        for pods in sorted((value for value in range(2, spines + 1) if spines % value == 0), reverse=True):
            per_pod = math.ceil(groups / pods)
            if per_pod * (pods - 1) >= groups:  # a pod with no leaf group
                continue
            spines_per_pod = max(1, spines // pods)
            inside = sum(1 for lower, upper in pairs
                         if lower.index // per_pod == min(upper.index // spines_per_pod, pods - 1))
            if pairs and inside >= POD_AGREEMENT * len(pairs):
                return pods
        return 1

    # ------------------------------------------------------------------ pools

    def host_order(self, links: list[HostLink]) -> list[HostLink]:
        """A host's links on one network in its port order. Port p of a plane-split network is on
        plane p % planes, rail (p // planes) % rails, and a host's ports on one leaf (a rack's
        leaf, a storage leaf) take its ports in order: so (rank on its leaf, rail, plane), with
        leaves of the dedicated networks in their order."""
        if len(links) < 2:
            return links
        rank: dict[str, int] = defaultdict(int)
        keyed = []
        for link in sorted(links, key=self._leaf_port):
            role = self.roles[link.leaf]
            assert isinstance(role, SwitchRole)
            if role.network == FABRIC:
                keyed.append(((rank[link.leaf], role.rail or 0, role.plane), link))
            else:
                keyed.append(((role.index, rank[link.leaf], 0), link))
            rank[link.leaf] += 1
        return [link for _, link in sorted(keyed, key=lambda item: item[0])]

    def _leaf_port(self, link: HostLink) -> tuple[str, int]:
        numbers = self.leaf_numbers.get(link.leaf)
        if numbers is None:  # (read once per leaf: a leaf has a host link per port)
            role = self.roles[link.leaf]
            assert isinstance(role, SwitchRole)
            numbers = self.leaf_numbers[link.leaf] = self.naming(role.network, role.tier).numbers
        return link.leaf, numbers.get(link.leaf_port.lower()) or 0

    def host_group(self, host: str) -> int | None:
        groups = []
        for link in self.links.host_links.get(host, ()):
            role = self.roles[link.leaf]
            if link.network == FABRIC and isinstance(role, SwitchRole) and role.network == FABRIC:
                groups.append(role.index)
        return mode(groups)

    def pools(self, observed_networks: set[str]) -> list[dict[str, Any]]:
        if not self.hosts:
            raise NothingToImport("no host in the data named `<pool>-node-NNN`: name hosts as the product does "
                                  "(their LLDP system names), or map them with an ibnetdiscover node-name map")
        pools = []
        order = []
        for pool, members in sorted(self.hosts.items()):
            entry, first_key = self.pool(pool, members, observed_networks)
            pools.append(entry)
            order.append(first_key)
        return [entry for _, entry in sorted(zip(order, pools, strict=True), key=lambda item: item[0])]

    def pool(self, pool: str, members: dict[int, str],
             observed_networks: set[str]) -> tuple[dict[str, Any], tuple[int, int, str]]:
        """One pool's entry, and its place in file order: the leaf group, then the leaf port, of
        its first host (hosts are cabled in file order)."""
        nodes = max(members) + 1
        per_network: dict[str, list[list[HostLink]]] = defaultdict(list)
        for index in sorted(members):
            host = members[index]
            links = self.links.host_links.get(host, [])
            group = self.host_group(host)
            if group is not None:
                self.design.host_groups[host] = group
            for network in (FABRIC, "storage", "management"):
                per_network[network].append(self.host_order([link for link in links if link.network == network]))
        entry: dict[str, Any] = {"name": pool, "nodes": nodes}
        gpu = self.options.gpus.get(pool) or gpu_of(pool)
        if gpu is not None:
            entry["gpu"] = gpu
            self.design.comments[f"pool {pool}.gpu"] = "given" if pool in self.options.gpus else "from the host names"
        else:
            self.design.stand_in_gpus[pool] = sorted(load_catalog().gpus)[0]
            self.design.notes.append(f"pool {pool}: GPU type unknown (not in its host names): set gpu, or import "
                                     f"again with --gpu {pool}=GPU")
        if len(members) < nodes:
            self.design.notes.append(f"pool {pool}: {nodes - len(members)} of {nodes} hosts absent from the data "
                                     f"(host numbers up to {nodes} seen); counted as built")
        self.design.positions[pool] = {}
        # A host's own LLDP lists every cabled port: where the pool's hosts reported, a network
        # none of their ports is on has no NIC of theirs cabled.
        reported = any(host in self.observed.reporting for host in members.values())
        for network, key in ((FABRIC, "fabric_nics"), ("storage", "storage_nics"), ("management", "management_nics")):
            host_links = per_network[network]
            if network != FABRIC and network not in observed_networks and not reported:
                self.unknown_nics.add(network)
                continue
            ports = mode(len(links) for links in host_links if links or network != FABRIC) or 0
            gbps = None if self.options.ignore_speeds else speed(link.gbps for links in host_links for link in links)
            self.design.positions[pool][network] = [
                _name_at(position, network, [links[position].host_port for links in host_links if len(links) > position])
                for position in range(ports)]
            entry[key] = {"count": ports, "gbps": gbps or self.default_gbps(gpu, network)}
        first = per_network[FABRIC][0]
        port = self._leaf_port(first[0])[1] if first else 0
        return entry, (self.design.host_groups.get(members[min(members)], 0), port, pool)

    def default_gpu_server(self, gpu: str | None) -> Any:
        catalog = load_catalog()
        return catalog.servers[catalog.default_server(gpu)] if gpu else catalog.servers["generic-8gpu"]

    def default_gbps(self, gpu: str | None, network: str) -> int:
        server = self.default_gpu_server(gpu)
        nics = {FABRIC: server.fabric_nics, "storage": server.storage_nics, "management": server.management_nics}[network]
        return int(nics.gbps)

    # ------------------------------------------------------------------ other networks

    def network(self, network: str) -> dict[str, Any]:
        leaves = self.switches[(network, "leaf")]
        spines = self.switches[(network, "spine")]
        result: dict[str, Any] = {}
        if leaves:
            leaf = result["leaf"] = self.switch_ref(network, "leaf", f"{network}.leaf")
            if spines and "switch" not in leaf:  # a generic leaf's spine defaults to the same box
                self.tier_ref(network, "spine", leaf, result)
            elif spines:
                result["spine"] = self.switch_ref(network, "spine", f"{network}.spine")
        elif spines:
            result["spine"] = self.switch_ref(network, "spine", f"{network}.spine")
        result["leaves"] = max((role.index for _, role in leaves), default=-1) + 1
        result["spines"] = max((role.index for _, role in spines), default=-1) + 1
        result["leaf_uplinks"] = (mode(self.uplink_counts(network, "leaf").values()) or 0) if spines else 0
        return result

    def observed_networks(self) -> set[str]:
        """The networks other than the fabric that some switch or host port of the data is on."""
        found = {network for network, _ in self.switches if network != FABRIC}
        found |= {link.network for links in self.links.host_links.values() for link in links}
        return found - {FABRIC}

    # ------------------------------------------------------------------ all

    def run(self) -> Design:
        networks = self.observed_networks()
        pools = self.pools(networks)
        fabric = self.fabric()
        shared = sorted({link.network for links in self.links.host_links.values() for link in links
                         if link.network != FABRIC and isinstance(self.roles[link.leaf], SwitchRole)
                         and self.roles[link.leaf].network == FABRIC})  # type: ignore[union-attr]
        if shared:
            fabric["shared_with"] = shared
        if self.striped_layout:
            fabric["uplink_layout"] = "striped"
            self.design.comments["fabric.uplink_layout"] = "uplink k to upper k mod uppers, as the links show"
        if len(pools) > 1:  # the blocks their file order gives them, written down: see `address_block`
            for block, pool in enumerate(pools):
                pool["address_block"] = block
                self.design.comments[f"pool {pool['name']}.address_block"] = (
                    "pins the pool's host addresses: inserting or removing a pool renumbers no other")
        mapping: dict[str, Any] = {"name": self.options.name, "target": "onprem", "node_pools": pools,
                                   "fabric": fabric}
        for network in NETWORKS:
            if self.switches[(network, "leaf")] or self.switches[(network, "spine")]:
                mapping[network] = self.network(network)
            elif network == "oob":
                self.design.notes.append("oob: no out-of-band switch in the data; the section is left to its defaults")
            elif network in self.unknown_nics:
                self.design.notes.append(f"{network}: no {network} switch or host port in the data; the section and "
                                         "the NICs of pools whose hosts did not report are left to the defaults")
        self.design.observed_networks = tuple(sorted(networks | {FABRIC}))
        self.design.mapping = mapping
        self.design.notes.append("QoS plan, policy, address pools and ASNs are not in neighbor data: the defaults "
                                 "are written; copy your own")
        return self.design


#: The names the product gives a host's ports by position, where the stack file names none
#: (cluster.naming: a netdev, or an InfiniBand HCA port).
CONVENTION = {network: (form, f"{GENERIC_RDMA_DEVICE}/1") if network == FABRIC else (form,)
              for network, form in NETDEV_FORMS.items()}


def _name_at(position: int, network: str, names: list[str]) -> str:
    """The name most hosts give the port at `position`; on a tie the product's own name for it
    (a fault on one of two hosts does not rename the port), else the first in order."""
    counts = Counter(names)
    if not counts:
        return ""
    most = max(counts.values())
    tied = sorted(name for name, count in counts.items() if count == most)
    conventional = [form.format(position) for form in CONVENTION[network]]
    return next((name for name in conventional if name in tied), tied[0])


def _layout(uppers: list[int]) -> str:
    """`blocks`, `striped`, or `` (both or neither) for one switch's uppers in uplink-slot order:
    in blocks they do not decrease (0 0 1 1), striped they repeat in turn (1 2 0 1 2 0)."""
    turn = len(set(uppers))
    if turn < 2 or turn == len(uppers):
        return ""
    blocks = all(first <= second for first, second in pairwise(uppers))
    striped = len(set(uppers[:turn])) == turn and all(uppers[k] == uppers[k - turn] for k in range(turn, len(uppers)))
    return "" if blocks == striped else "blocks" if blocks else "striped"


def _inherits(ref: dict[str, Any], below: dict[str, Any], in_use: int) -> bool:
    """A tier whose switch is the one of the tier below (same model, speed and dialect, and every
    port in use within that one's ports) is left to inherit it, as the stack file's defaults do."""
    if any(ref.get(key) != below.get(key) for key in ("switch", "port_gbps", "os")):
        return False
    if "switch" in below and "ports" not in below:
        return "ports" not in ref
    return bool(in_use <= below.get("ports", 0) and ref.get("ports", in_use) <= below.get("ports", 0))


def infer(observed: Observed, options: Options) -> Design:
    """The design the observed links describe (raises NothingToImport when there is none)."""
    return Inference(observed, options).run()
