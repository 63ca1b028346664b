"""From a raw `gpu-cluster:cluster` mapping to a `ClusterSpec`, or to SCHEMA findings.

Pydantic checks shape, types and ranges (cluster.stackfile); the resolver then fills defaults from
the catalogs and checks what spans fields (catalog keys, GPU vs instance type, sizing vs rails).
Every problem names its config path and the fix; all of them are reported at once.
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Callable, Iterable
from typing import Any, Literal

from pydantic import ValidationError

from cluster import clouds, dialects
from cluster import scheduler as k8s
from cluster import stackfile as sf
from cluster.capacity import capacity_findings, image_findings, pool_capacity
from cluster.catalog import NIC_SETS, Catalog, Instance, NicLayout, load_catalog
from cluster.catalog.prices import load_prices
from cluster.filesystems import plan as plan_filesystem
from cluster.filesystems import plan_home
from cluster.findings import Finding, Severity, schema
from cluster.schema_errors import pydantic_findings
from cluster.sizing import NetworkPlan, size_network
from cluster.spec import (
    CLOUD_TARGETS,
    MAX_TOTAL_NODES,
    ClusterSpec,
    FabricSpec,
    NetworkSpec,
    Nics,
    Oversubscription,
    PolicySpec,
    PoolSpec,
    SwitchModel,
)
from cluster.sshkeys import provider_key_problem

# --------------------------------------------------------------------------- errors



#: Ranges an address pool may not touch: the addresses are not unicast host addresses there.
SPECIAL_RANGES = {
    "0.0.0.0/8": "'this network' (RFC 1122)",
    "127.0.0.0/8": "loopback (RFC 1122)",
    "169.254.0.0/16": "link-local (RFC 3927)",
    "224.0.0.0/4": "multicast (RFC 5771)",
    "240.0.0.0/4": "reserved (RFC 1112), with the broadcast address",
}
NETWORK_RATIO = 3.0  # default max_oversubscription of storage, management and out-of-band leaves
#: The most ports one InfiniBand switch numbers: a port number is 8 bits (NodeInfo.NumPorts, the
#: linear forwarding table's entries), port 0 is the switch's management port and 255 marks an
#: unrouted LID (IB_LFT_UNASSIGNED in ibutils' ibdm Fabric.h; Shanley, InfiniBand Network
#: Architecture, "Port Numbering"), so front-panel ports run 1..254.
IB_SWITCH_PORTS = 254
# The cloud targets as a hint offers them, in the stack file's order (cluster.stackfile.Target).
CLOUD_CHOICES = " or ".join(", ".join(sf.TARGETS[1:]).rsplit(", ", 1))
DEFAULT_POOLS = {"loopbacks": "10.0.0.0/16", "fabric_links": "10.64.0.0/12", "hosts": "10.128.0.0/10",
                 "oob": "172.16.0.0/16"}


def _given_os(network: str, tiers: dict[str, sf.SwitchRef | None]) -> tuple[str, str] | None:
    """(os, the key that gives it): the first `os` the stack file gives a tier of `network`, which
    the tiers that give none follow (one OS per network unless the file says otherwise)."""
    return next(((ref.os, f"{network}.{tier}.os") for tier, ref in tiers.items() if ref is not None and ref.os),
                None)


def _model_only(ref: sf.SwitchRef | None) -> sf.SwitchRef | None:
    """Another tier's switch as a tier that gives none takes it: its model and speed; its OS
    follows the network's (cluster.resolve._Resolver.switch), so the key that gives it is named."""
    return None if ref is None else ref.model_copy(update={"os": None})


def _same_key(key: str, known: Iterable[str]) -> str | None:
    """The catalog key that differs from `key` only in case (catalog keys are case-sensitive:
    `b200` is no GPU, `B200` is), or None."""
    return next((name for name in sorted(known) if name.lower() == key.lower() and name != key), None)


def _pool_problem(text: str) -> str | None:
    """Why `text` cannot be an address pool, or None."""
    if "/" not in text:
        return f"{text} has no prefix length (a pool is a range, such as {text}/16)"
    try:
        network = ipaddress.ip_network(text, strict=True)
    except ValueError as error:
        return f"{text!r} is not a network: {error}"
    if network.version != 4:
        return (f"{text} is an IPv6 range; the rendered underlay (BGP, /31 links, host routes) is IPv4, so the "
                "pools are IPv4")
    for special, what in SPECIAL_RANGES.items():
        if network.overlaps(ipaddress.IPv4Network(special)):
            return f"{text} overlaps {special}, {what}: no switch or host can use those addresses"
    return None


class _Resolver:
    def __init__(self, raw: sf.StackFile, catalog: Catalog, rule_ids: tuple[str, ...],
                 provider_config: dict[str, str] | None = None) -> None:
        self.raw = raw
        self.catalog = catalog
        self.rule_ids = rule_ids
        self.provider_config = provider_config or {}
        self.findings: list[Finding] = []
        # A pool that did not resolve leaves the NIC speeds unknown: a switch whose port speed
        # would follow them is not checked against that speed (one cause, one finding).
        self.pools_incomplete = False

    def error(self, path: str, message: str, hint: str) -> None:
        self.findings.append(schema(path, message, hint))

    def ignored(self, path: str, message: str, hint: str, severity: Severity = Severity.WARNING) -> None:
        self.findings.append(Finding("SPEC-IGNORED", severity, path, message, hint))

    # ----- switches

    def switch(
        self, ref: sf.SwitchRef | None, path: str, default_model: str, preferred_gbps: int | None,
        network_os: tuple[str, str] | None = None,
    ) -> SwitchModel | None:
        """The switch of the tier at `path`. `network_os`: (os, the key that gives it) when the stack
        file gives its network an OS on another tier: a tier that gives none runs it where it can."""
        if ref is None:
            ref = sf.SwitchRef(switch=default_model)
        if ref.switch is None:
            assert ref.ports is not None and ref.port_gbps is not None
            generic = SwitchModel(
                model=f"generic-{ref.ports}x{ref.port_gbps}g",
                ports=ref.ports,
                port_gbps=ref.port_gbps,
                uplink_ports=ref.uplink_ports or 0,
                uplink_gbps=ref.uplink_gbps or (ref.port_gbps if ref.uplink_ports else 0),
                transport="ethernet",
                os=ref.os or dialects.generic().name,
                path=path,
                os_source=f"{path}.os" if ref.os else "",
            )
            if ref.os is None and network_os is not None:
                generic = self._network_os(generic, None, network_os)
            return generic if self._runs_here(generic, ref) else None
        entry = self.catalog.switches.get(ref.switch)
        same = _same_key(ref.switch, self.catalog.switches)
        if entry is None and same:
            self.error(f"{path}.switch", f"unknown switch model {ref.switch!r}: did you mean {same}?", f"set it to {same}")
            return None
        if entry is None:
            self.error(
                f"{path}.switch",
                f"unknown switch model {ref.switch!r}",
                f"use one of {', '.join(sorted(self.catalog.switches))} (docs/reference/stack-file.md#catalog-switches), "
                "or give {ports, port_gbps}",
            )
            return None
        modes = entry.port_modes
        gbps: int
        if ref.port_gbps is not None:
            gbps = ref.port_gbps
            if gbps not in modes:
                speeds = ", ".join(str(speed) for speed in sorted(modes, reverse=True))
                self.error(
                    f"{path}.port_gbps",
                    f"{ref.switch} has no {gbps}G ports; it offers {speeds}",
                    f"set port_gbps to one of {speeds}",
                )
                return None
        elif preferred_gbps in modes:
            gbps = preferred_gbps
        else:
            gbps = max(modes)
        unknown_speed = ref.port_gbps is None and self.pools_incomplete
        ports = ref.ports if ref.ports is not None else modes[gbps]
        if ports > modes[gbps] and not unknown_speed:
            self.error(
                f"{path}.ports",
                f"{ref.switch} has {modes[gbps]} ports at {gbps}G, not {ports}",
                f"use at most {modes[gbps]} ports, or a larger model",
            )
            return None
        uplinks = entry.uplink_ports
        os: str = ref.os or entry.os
        own = dialects.for_transport(entry.transport)
        if own is not None:  # a transport with a dialect of its own: InfiniBand's subnet manager
            os = own.name
        elif os not in entry.runs:
            runs = " or ".join(entry.runs)
            self.error(
                f"{path}.os",
                f"{ref.switch} does not run {os}: it runs {runs} ({entry.runs_source})",
                f"set os to {runs}, or pick a model that runs {os}",
            )
            return None
        model = SwitchModel(
            model=ref.switch,
            ports=ports,
            port_gbps=gbps,
            uplink_ports=uplinks.count if uplinks else (ref.uplink_ports or 0),
            uplink_gbps=uplinks.gbps if uplinks else (ref.uplink_gbps or 0),
            transport=entry.transport,
            os=os,
            path=path,
            os_source=f"{path}.os" if ref.os and own is None else "",
        )
        if ref.os is None and own is None and network_os is not None and not unknown_speed:
            model = self._network_os(model, entry.runs, network_os)
        return model if unknown_speed or self._runs_here(model, ref) else None

    def _network_os(self, model: SwitchModel, runs: tuple[str, ...] | None,
                    network_os: tuple[str, str]) -> SwitchModel:
        """`model` running its network's OS (given at another tier) where it can; else as it is,
        with why not (NET-OS-MIX warns of the mix the stack file did not ask for)."""
        os, source = network_os
        if model.os == os:
            return model.model_copy(update={"os_source": source})
        problem = self._cannot_run(model.model, runs, model.port_gbps, os, model.path.startswith("fabric."))
        if problem is None:
            return model.model_copy(update={"os": os, "os_source": source})
        return model.model_copy(update={"os_wanted": f"{os} ({source})", "os_mismatch": problem})

    def _cannot_run(self, model: str, runs: tuple[str, ...] | None, gbps: int, os: str, fabric: bool) -> str | None:
        """Why `model` (a catalog model running `runs`, or a generic box: None) cannot run `os` at
        `gbps` ports (on the GPU fabric, with the lossless plan's priorities too); None when it can."""
        if runs is not None and os not in runs:
            return f"{model} runs {' or '.join(runs)} only"
        platform = dialects.platform(os)
        what = f"{model} at {gbps}G" if runs is not None else f"a generic box at {gbps}G"
        problem = platform.model_problem(model, gbps, what)
        lossless = self._lossless_priorities()
        if problem is None and fabric and lossless:
            problem = platform.qos_problem(model, gbps, lossless)
        return None if problem is None else problem[0]

    def _lossless_priorities(self) -> tuple[int, ...]:
        """The PFC priorities of a lossless RoCE plan (what a fabric switch's QoS must hold); ()
        otherwise."""
        qos = self.raw.qos or sf.Qos()
        transport = self.raw.fabric.transport if self.raw.fabric else None
        if transport == "infiniband" or qos.mode != "lossless":
            return ()
        return tuple(qos.pfc_priorities)

    def _leaf_by_cost(self, name: str, gbps: int, pools: list[PoolSpec], raw: sf.Network,
                      os: str | None = None) -> tuple[str, str] | None:
        """(model, why) of the storage or management leaf that gives the network the lowest switch
        cost (leaves and the spines they need, sized as the builder sizes them, low-end prices),
        among catalog models with ports at the NICs' speed whose port names are known (and that
        run `os`, the network's OS where the stack file gives one, when any does)."""
        devices, ports = self._devices(name, pools)
        if not devices or not ports:
            return None  # the oob network's devices include every switch: its leaf stays the catalog's
        prices = load_prices()
        best: tuple[float, str, str] | None = None
        for model in self._known_at(gbps, os):
            leaf = self._catalog_switch(model, gbps, f"{name}.leaf")
            spine_model = self._cheapest_at(leaf.uplink_gbps or gbps, os)
            if spine_model is None or leaf.ports + leaf.uplink_ports < ports:
                continue
            spine = self._catalog_switch(spine_model, leaf.uplink_gbps or gbps, f"{name}.spine")
            plan = self._sized(name, leaf, spine, raw, devices, ports)
            leaf_price, spine_price = prices.get(model), prices.get(spine_model)
            assert leaf_price is not None and spine_price is not None  # _known_at lists priced models only
            cost = plan.leaves * leaf_price.usd[0] + plan.spines * spine_price.usd[0]
            why = (f"the lowest switch cost for {devices * ports} x {gbps}G ports: {plan.leaves} of these"
                   + (f" and {plan.spines} {spine_model}" if plan.spines else ""))
            if best is None or (cost, model) < (best[0], best[1]):
                best = (cost, model, why)
        return (best[1], best[2]) if best else None

    def _catalog_switch(self, model: str, gbps: int, path: str) -> SwitchModel:
        """A catalog model as a candidate: its main ports at `gbps`, its fixed uplink ports."""
        entry = self.catalog.switches[model]
        uplinks = entry.uplink_ports
        return SwitchModel(model=model, ports=entry.port_modes[gbps], port_gbps=gbps,
                           uplink_ports=uplinks.count if uplinks else 0, uplink_gbps=uplinks.gbps if uplinks else 0,
                           os=entry.os, transport=entry.transport, path=path)

    @staticmethod
    def _sized(name: str, leaf: SwitchModel, spine: SwitchModel, raw: sf.Network, devices: int, ports: int) -> NetworkPlan:
        """The network as the builder will size it with these two models."""
        network = NetworkSpec.from_stack(raw, name=name, leaf=leaf, spine=spine,
                                         max_oversubscription=raw.max_oversubscription or NETWORK_RATIO)
        return size_network(network, devices, ports, leaf.port_gbps)

    def _devices(self, name: str, pools: list[PoolSpec]) -> tuple[int, int]:
        """(devices, ports per device) a storage or management network attaches; (0, 0) for oob,
        whose devices include every switch (known only once the switches are sized)."""
        if name not in ("storage", "management"):
            return 0, 0
        nics = [getattr(pool, f"{name}_nics") for pool in pools]
        devices = sum(pool.nodes for pool, nic in zip(pools, nics, strict=True) if nic.ports)
        return devices, max((nic.ports for nic in nics), default=0)

    def _spine_by_cost(self, name: str, leaf: SwitchModel, pools: list[PoolSpec], raw: sf.Network,
                       os: str | None = None) -> tuple[str, str] | None:
        """(model, why) of the spine that costs the network least at the leaves' uplink speed:
        spines counted as the builder sizes them where the devices are known (storage,
        management), else the cheapest switch; among those that run `os` when any does."""
        gbps = leaf.uplink_gbps or leaf.port_gbps
        devices, ports = self._devices(name, pools)
        prices = load_prices()
        best: tuple[float, str] | None = None
        for model in self._known_at(gbps, os):
            price = prices.get(model)
            assert price is not None  # _known_at lists priced models only
            count = 1
            if devices and ports:
                count = self._sized(name, leaf, self._catalog_switch(model, gbps, f"{name}.spine"), raw, devices,
                                    ports).spines
            if best is None or (count * price.usd[0], model) < best:
                best = (count * price.usd[0], model)
        if best is None:
            return None
        how = "the lowest spine cost" if devices and ports else "the cheapest catalog switch"
        return best[1], f"{how} with {gbps}G ports, the {name} leaves' uplink speed"

    def _known_at(self, gbps: int, os: str | None = None) -> list[str]:
        """Ethernet catalog models that fit `gbps`: main ports at that speed, a native speed at most
        four times it (no 800G switch for a 10G network), a price, and port names the renderers know
        (cage data, or ports that are no breakout). With `os`, those of them that run it at that
        speed, when any does (else all: the tier keeps its model's OS, and NET-OS-MIX says why)."""
        prices = load_prices()
        fitting = [model for model, entry in sorted(self.catalog.switches.items())
                   if entry.transport == "ethernet" and gbps in entry.port_modes and entry.port_modes[gbps] >= 2
                   and max(entry.port_modes) <= 4 * gbps
                   and (entry.cages is not None or entry.port_modes[gbps] == min(entry.port_modes.values()))
                   and prices.get(model) is not None]
        if os is None:
            return fitting
        running = [model for model in fitting
                   if self._cannot_run(model, self.catalog.switches[model].runs, gbps, os, False) is None]
        return running or fitting

    def _cheapest_at(self, gbps: int, os: str | None = None) -> str | None:
        """The Ethernet catalog model with main ports at `gbps` whose price (cluster/catalog/prices.yaml,
        low end, then high end) is lowest: a storage, management or oob spine is never a 51.2T
        switch for a 100G network when a smaller one fits."""
        prices = load_prices()
        priced = [(price.usd, model) for model in self._known_at(gbps, os) if (price := prices.get(model)) is not None]
        return min(priced)[1] if priced else None

    def _runs_here(self, model: SwitchModel, ref: sf.SwitchRef) -> bool:
        """The dialect can run the model at its port speed (SONiC needs the SKU's port map)."""
        what = f"{ref.switch} at {model.port_gbps}G" if ref.switch else f"a generic {model.ports} x {model.port_gbps}G box"
        problem = dialects.platform(model.os).model_problem(model.model, model.port_gbps, what)
        if problem is None:
            return True
        self.error(f"{model.path}.switch" if ref.switch and not ref.os else f"{model.path}.os", *problem)
        return False

    # ----- pools

    def pools(self) -> list[PoolSpec]:
        raw = self.raw
        names: dict[str, int] = {}
        pools = []
        for index, pool in enumerate(raw.node_pools):
            path = f"node_pools[{index}]"
            if pool.name in names:
                self.error(
                    f"{path}.name",
                    f"pool name {pool.name!r} is already used by node_pools[{names[pool.name]}]",
                    "give every pool its own name",
                )
            names.setdefault(pool.name, index)
            resolved = self.cloud_pool(pool, index) if raw.target in CLOUD_TARGETS else self.onprem_pool(pool, index)
            if resolved is not None:
                pools.append(resolved)
        self.pools_incomplete = len(pools) < len(raw.node_pools)
        taken: dict[int, PoolSpec] = {}
        for pool_spec in pools if raw.target not in CLOUD_TARGETS else []:
            other = taken.setdefault(pool_spec.host_block, pool_spec)
            if other is not pool_spec:
                given = "its address_block" if pool_spec.address_block is not None else "its position (no address_block)"
                self.error(f"{pool_spec.path}.address_block",
                           f"pool {pool_spec.name} takes host address block {pool_spec.host_block} by {given}, "
                           f"which pool {other.name} already has",
                           "give every pool its own address_block (0, 1, 2, ...), or none at all")
        self.renames(pools)
        prefix_of = clouds.cloud(raw.target).host_prefix if raw.target in CLOUD_TARGETS else None
        if prefix_of is not None:
            self.host_prefixes(pools, prefix_of)
        if raw.target in CLOUD_TARGETS and raw.cloud is not None:
            by_index = {pool_spec.index: pool_spec for pool_spec in pools}
            drawn = [(pool, by_index[index]) for index, pool in enumerate(raw.node_pools) if index in by_index]
            self.findings.extend(capacity_findings(raw.target, raw.cloud, drawn))
            arch: dict[str, str] = {spec.name: self.catalog.instances[raw.target][spec.instance_type or ""].arch
                                    for _, spec in drawn}
            self.findings.extend(image_findings(raw.target, raw.cloud, drawn, arch))
        total = sum(pool.nodes for pool in raw.node_pools)
        if total > MAX_TOTAL_NODES:
            self.error("node_pools", f"{total} nodes in all; at most {MAX_TOTAL_NODES}", "split the cluster into stacks")
        return pools

    def renames(self, pools: list[PoolSpec]) -> None:
        """previous_names: cloud only (aliases of deployed resources), never the current name, never
        twice, and never another pool's name (its resources would be taken over)."""
        raw = self.raw
        cloud = raw.target in CLOUD_TARGETS
        named = [("", raw.name, raw.previous_names)] + [
            (f"node_pools[{index}].", pool.name, pool.previous_names) for index, pool in enumerate(raw.node_pools)]
        current = {pool.name for pool in raw.node_pools}
        for prefix, name, previous in named:
            if previous and not cloud:
                self.ignored(f"{prefix}previous_names", "previous_names is for cloud targets (Pulumi aliases of the "
                             "provider's resources); on premises files are written by name", "remove it")
                continue
            for index, old in enumerate(previous):
                path = f"{prefix}previous_names[{index}]"
                if old == name or old in previous[:index]:
                    self.error(path, f"{old} is the current name or named twice", f"remove {old} from previous_names")
                elif prefix and old in current:
                    self.error(path, f"{old} is the name of another pool of the cluster: this pool would take over "
                               "that pool's resources", f"remove {old}, or rename the other pool first")

    def host_prefixes(self, pools: list[PoolSpec], prefix_of: Callable[[str, str], str]) -> None:
        """Every pool names its VMs by its own prefix (Azure: its scale set's computerNamePrefix)."""
        taken: dict[str, PoolSpec] = {}
        for pool_spec in pools:
            cluster = self.raw.previous_names[0] if self.raw.previous_names else self.raw.name
            prefix = prefix_of(cluster, pool_spec.first_name)
            other = taken.setdefault(prefix, pool_spec)
            if other is not pool_spec:
                self.error(f"{pool_spec.path}.name",
                           f"pools {other.name} and {pool_spec.name} get one host name prefix, {prefix}: their VMs "
                           "would share host names", f"rename pool {pool_spec.name}")

    def fit_types(self, target: str) -> list[str]:
        """The catalog types of `target` a hint may suggest: deployable, and with at least the
        stack's policy.min_gbps_per_gpu of fabric per GPU (FAB-GPU-NIC would refuse the others)."""
        least = self.raw.policy.min_gbps_per_gpu
        return sorted(name for name, entry in self.catalog.instances.get(target, {}).items()
                      if not entry.not_deployable and entry.fabric.count * entry.fabric.gbps / entry.gpus >= least)

    def gpu_entry(self, gpu: str, path: str) -> bool:
        if gpu not in self.catalog.gpus:
            same = _same_key(gpu, self.catalog.gpus)
            if same:
                self.error(path, f"unknown GPU {gpu!r}: did you mean {same}?", f"set it to {same}")
            else:
                self.error(path, f"unknown GPU {gpu!r}",
                           f"use one of {', '.join(sorted(self.catalog.gpus))} (docs/reference/stack-file.md#catalog-gpus)")
            return False
        return True

    def nics(self, given: sf.NicSet | None, default: NicLayout) -> Nics:
        source = given if given is not None else default
        return Nics(count=source.count, gbps=source.gbps, ports_per_nic=source.ports_per_nic,
                    devices=tuple(getattr(given, "devices", None) or ()),
                    interfaces=tuple(getattr(given, "interfaces", None) or ()))

    def onprem_pool(self, pool: sf.NodePool, index: int) -> PoolSpec | None:
        path = f"node_pools[{index}]"
        if pool.cloud is not None:
            self.ignored(f"{path}.cloud", "a pool's cloud settings are ignored on premises",
                         f"remove it, or set target to {CLOUD_CHOICES}")
        if pool.instance_type is not None:
            self.ignored(
                f"{path}.instance_type",
                "instance_type is ignored on premises; the NICs come from fabric_nics and the server catalog",
                f"remove instance_type, or set target to {CLOUD_CHOICES}",
            )
        server_name = pool.server
        same = _same_key(server_name or "", self.catalog.servers)
        if server_name is not None and server_name not in self.catalog.servers and same:
            self.error(f"{path}.server", f"unknown server {server_name!r}: did you mean {same}?", f"set it to {same}")
            return None
        if server_name is not None and server_name not in self.catalog.servers:
            self.error(
                f"{path}.server",
                f"unknown server {server_name!r}",
                f"use one of {', '.join(sorted(self.catalog.servers))} (docs/reference/stack-file.md#catalog-servers), "
                "or give the NIC sets yourself",
            )
            return None
        gpu = pool.gpu
        if gpu is None and server_name is not None:
            gpu = self.catalog.servers[server_name].gpu
        if gpu is None:
            self.error(f"{path}.gpu", "gpu is required on premises", f"set gpu to one of {', '.join(sorted(self.catalog.gpus))}")
            return None
        if not self.gpu_entry(gpu, f"{path}.gpu"):
            return None
        if server_name is None:
            server_name = self.catalog.default_server(gpu)
        server = self.catalog.servers[server_name]
        if pool.server is not None and server.gpu is not None and server.gpu != gpu:
            self.error(
                f"{path}.gpu",
                f"server {server_name} carries {server.gpu}, not {gpu}",
                f"set gpu to {server.gpu}, or pick another server",
            )
        gpu_entry = self.catalog.gpus[gpu]
        fabric_nics = self.nics(pool.fabric_nics, server.fabric_nics)
        if fabric_nics.count == 0:
            self.error(f"{path}.fabric_nics.count", "a GPU node needs at least one fabric NIC", "set count >= 1")
        transport = (self.raw.fabric.transport if self.raw.fabric else None) or "roce"
        return PoolSpec.from_stack(
            pool,
            ignored=("instance_type", "previous_names"),  # ignored on premises (reported here and in renames)
            index=index,
            gpu=gpu,
            # a named server says how many GPUs it carries; otherwise the GPU's board does
            gpus_per_node=pool.gpus_per_node or (server.gpus if pool.server else gpu_entry.gpus_per_node),
            nvlink_domain=gpu_entry.nvlink_domain,
            server=server_name,
            fabric_nics=fabric_nics,
            fabric_kind=transport,
            storage_nics=self.nics(pool.storage_nics, server.storage_nics),
            management_nics=self.nics(pool.management_nics, server.management_nics),
            catalog_nics=tuple(name for name in NIC_SETS if getattr(pool, name) is None),
        )

    def cloud_pool(self, pool: sf.NodePool, index: int) -> PoolSpec | None:
        path = f"node_pools[{index}]"
        target = self.raw.target
        if pool.instance_type is None:
            self.error(f"{path}.instance_type", f"instance_type is required on {target}",
                       f"use one of {', '.join(self.fit_types(target))}")
            return None
        instance: Instance | None = self.catalog.instance(target, pool.instance_type)
        if instance is None:
            self.error(
                f"{path}.instance_type",
                f"unknown {target} instance type {pool.instance_type!r}",
                f"use one of {', '.join(self.fit_types(target))} (docs/reference/stack-file.md#catalog-instance-types)",
            )
            return None
        if instance.not_deployable:
            self.error(f"{path}.instance_type",
                       f"{pool.instance_type} is in the catalog, but gpu-cluster does not deploy it yet: "
                       f"{instance.not_deployable}",
                       f"use one of {', '.join(self.fit_types(target))}, or deploy it with the provider's own tooling")
            return None
        if pool.gpu is not None:
            if not self.gpu_entry(pool.gpu, f"{path}.gpu"):
                return None
            if pool.gpu != instance.gpu:
                self.error(
                    f"{path}.gpu",
                    f"{pool.instance_type} carries {instance.gpu}, not {pool.gpu}",
                    f"set gpu to {instance.gpu} or remove it (it is derived from instance_type)",
                )
        if pool.gpus_per_node is not None and pool.gpus_per_node != instance.gpus:
            self.error(
                f"{path}.gpus_per_node",
                f"{pool.instance_type} has {instance.gpus} GPUs, not {pool.gpus_per_node}",
                "remove gpus_per_node (it is derived from instance_type)",
            )
        for key in ("server", "fabric_nics", "storage_nics", "management_nics"):
            if getattr(pool, key) is not None:
                self.ignored(
                    f"{path}.{key}",
                    f"{key} is ignored on {target}: the NIC layout comes from {pool.instance_type}",
                    f"remove {key}",
                )
        if pool.address_block is not None:
            self.ignored(f"{path}.address_block", f"address_block is ignored on {target}: the provider addresses "
                         "the instances", "remove address_block")
        if self.raw.cloud is None:
            return None  # reported: cloud.region is required
        fabric = instance.fabric
        other = instance.other_nics or NicLayout(count=1, gbps=0)
        return PoolSpec.from_stack(
            pool,
            ignored=("address_block",),  # ignored on cloud targets (reported above)
            index=index,
            gpu=instance.gpu,
            gpus_per_node=instance.gpus,
            nvlink_domain=self.catalog.gpus[instance.gpu].nvlink_domain,
            server=None,
            fabric_nics=Nics(count=fabric.count, gbps=fabric.gbps),
            fabric_kind=fabric.kind,
            storage_nics=Nics(count=other.count, gbps=other.gbps),
            management_nics=Nics(count=other.count, gbps=other.gbps),
            capacity=pool_capacity(target, self.raw.cloud, pool, path, instance.arch),
        )

    # ----- fabric and networks

    def fabric(self, pools: list[PoolSpec]) -> FabricSpec | None:
        raw = self.raw.fabric or sf.Fabric()
        leaf_default = self.catalog.switch_defaults[
            "fabric_infiniband" if raw.transport == "infiniband" else "fabric_roce"
        ]
        nic_gbps = max((pool.fabric_nics.gbps for pool in pools), default=None)
        network_os = _given_os("fabric", {"leaf": raw.leaf, "spine": raw.spine, "core": raw.core})
        leaf = self.switch(raw.leaf, "fabric.leaf", leaf_default, nic_gbps, network_os)
        if leaf is None:
            return None
        spine = self.switch(raw.spine or _model_only(raw.leaf), "fabric.spine", leaf.model, leaf.port_gbps, network_os)
        core = self.switch(raw.core or raw.spine or _model_only(raw.leaf), "fabric.core",
                           spine.model if spine else leaf.model, spine.port_gbps if spine else leaf.port_gbps, network_os)
        if spine is None or core is None:
            return None
        transport = raw.transport or ("infiniband" if leaf.transport == "infiniband" else "roce")
        wanted = "infiniband" if transport == "infiniband" else "ethernet"
        for tier, switch in (("leaf", leaf), ("spine", spine), ("core", core)):
            if switch.transport != wanted and not switch.model.startswith("generic-"):
                self.error(
                    f"fabric.{tier}.switch",
                    f"{switch.model} is an {switch.transport} switch; the fabric transport is {transport}",
                    f"pick an {wanted} switch, or set fabric.transport to match",
                )
        own = dialects.for_transport(wanted)
        if own is not None:  # a generic box on such a fabric is one of its switches, as a catalog model is
            leaf, spine, core = (switch.model_copy(update={"transport": wanted, "os": own.name})
                                 if switch.model.startswith("generic-") else switch for switch in (leaf, spine, core))
        if wanted == "infiniband":
            self._numbered_ports(raw, {"leaf": leaf, "spine": spine, "core": core})
        planes = raw.planes
        rails = 0
        for pool in pools:
            ports = pool.fabric_nics.ports
            if ports % planes:
                self.error(
                    f"{pool.path}.fabric_nics",
                    f"{ports} fabric ports per node cannot be split over {planes} planes",
                    "make NICs x ports_per_nic a multiple of fabric.planes",
                )
            rails = max(rails, ports // planes)
        if raw.leaves is not None and rails and raw.design == "rail-optimized":
            per_group = rails * planes
            if raw.leaves == 0 or raw.leaves % per_group:
                self.error(
                    "fabric.leaves",
                    f"{raw.leaves} leaves is not a multiple of rails x planes = {rails} x {planes} = {per_group}",
                    f"use a multiple of {per_group} (every leaf group has one leaf per rail and plane)",
                )
        elif raw.leaves is not None and (raw.leaves == 0 or raw.leaves % planes):
            self.error("fabric.leaves", f"{raw.leaves} leaves cannot be split over {planes} planes",
                       f"use a positive multiple of {planes}")
        for key in ("spines", "cores"):
            value = getattr(raw, key)
            if value and value % planes:
                self.error(f"fabric.{key}", f"{value} {key} cannot be split over {planes} planes",
                           f"use a multiple of {planes}")
        # Pods take whole leaf groups, ceil(groups / pods) each and the last one what is left, as the
        # sizer splits them (5 groups in 3 pods: 2, 2, 1), so any split it chose can be written as
        # designed; a split that leaves a pod without leaves is refused by cluster.limits.
        if raw.pods and raw.spines and (raw.spines // planes) % raw.pods:
            self.error("fabric.pods", f"{raw.spines // planes} spines per plane do not split evenly into {raw.pods} pods",
                       "choose pods that divide the spines per plane")
        if raw.pods and not raw.cores and raw.cores is not None:
            self.error("fabric.cores", "pods need a core tier; cores is 0", "set cores, or remove pods")
        oversub = raw.max_oversubscription
        if isinstance(oversub, sf.TierOversubscription):
            tiers = Oversubscription(leaf=oversub.leaf, spine=oversub.spine, core=oversub.core)
        else:
            tiers = Oversubscription(leaf=oversub, spine=oversub, core=oversub)
        if len(set(raw.shared_with)) != len(raw.shared_with):
            self.error("fabric.shared_with", "a network is listed twice", "list storage and management once each")
        return FabricSpec.from_stack(raw, transport=transport, rails=rails, leaf=leaf, spine=spine, core=core,
                                     max_oversubscription=tiers)

    def _numbered_ports(self, raw: sf.Fabric, tiers: dict[str, SwitchModel]) -> None:
        """An InfiniBand tier's switch has no more ports than a switch can number (IB_SWITCH_PORTS);
        a spine or core that takes the leaf's model is told once, at the leaf."""
        told: set[tuple[str, int, int]] = set()
        for tier, switch in tiers.items():
            if switch.ports <= IB_SWITCH_PORTS or (switch.model, switch.ports, switch.port_gbps) in told:
                continue
            told.add((switch.model, switch.ports, switch.port_gbps))
            given: sf.SwitchRef | None = getattr(raw, tier)
            key = "ports" if given is not None and given.ports is not None else "port_gbps"
            what = (f"a generic {switch.ports} x {switch.port_gbps}G box" if switch.model.startswith("generic-")
                    else f"{switch.model} at {switch.port_gbps}G")
            self.error(
                f"fabric.{tier}.{key}",
                f"{what} has {switch.ports} ports; an InfiniBand switch numbers at most {IB_SWITCH_PORTS} (port "
                "numbers are 8 bits, 0 is its management port and 255 means no port in the forwarding tables)",
                f"run it at a speed with at most {IB_SWITCH_PORTS} ports, or give ports: {IB_SWITCH_PORTS} or fewer",
            )

    def network(self, name: Literal["storage", "management", "oob"], pools: list[PoolSpec]) -> NetworkSpec | None:
        raw = getattr(self.raw, name) or sf.Network()
        default_model = self.catalog.switch_defaults[name]
        if name == "storage":
            nic_gbps = max((pool.storage_nics.gbps for pool in pools), default=None)
        elif name == "management":
            nic_gbps = max((pool.management_nics.gbps for pool in pools), default=None)
        else:
            nic_gbps = 1
        network_os = _given_os(name, {"leaf": raw.leaf, "spine": raw.spine})
        wanted = network_os[0] if network_os else None
        by_cost = self._leaf_by_cost(name, nic_gbps, pools, raw, wanted) if raw.leaf is None and nic_gbps else None
        leaf = self.switch(raw.leaf, f"{name}.leaf", by_cost[0] if by_cost else default_model, nic_gbps, network_os)
        if leaf is None or not self._ethernet(leaf, name, "leaf"):
            return None
        if by_cost is not None:
            leaf = leaf.model_copy(update={"chosen": by_cost[1]})
        generic_leaf = raw.leaf if raw.leaf is not None and raw.leaf.switch is None else None
        spine_ref = raw.spine or _model_only(generic_leaf)
        uplink_gbps = leaf.uplink_gbps or leaf.port_gbps
        chosen = self._spine_by_cost(name, leaf, pools, raw, wanted) if spine_ref is None else None
        spine_default = chosen[0] if chosen else self.catalog.switch_defaults[f"{name}_spine"]
        spine = self.switch(spine_ref, f"{name}.spine", spine_default, uplink_gbps, network_os)
        if spine is None or not self._ethernet(spine, name, "spine"):
            return None
        if chosen is not None:
            spine = spine.model_copy(update={"chosen": chosen[1]})

        return NetworkSpec.from_stack(
            raw,
            name=name,
            leaf=leaf,
            spine=spine,
            max_oversubscription=raw.max_oversubscription or NETWORK_RATIO,
            targets=self.storage_targets() if name == "storage" else (),
        )

    def _ethernet(self, switch: SwitchModel, network: str, tier: str) -> bool:
        """Storage, management and oob are Ethernet networks: an InfiniBand switch there has no
        config to render (a SCHEMA error, False)."""
        if switch.transport == "ethernet":
            return True
        self.error(f"{network}.{tier}.switch", f"{switch.model} is an {switch.transport} switch; the {network} network "
                   "is Ethernet", "pick an Ethernet switch (`python -m cluster catalog switches` lists them)")
        return False

    def storage_targets(self) -> tuple[str, ...]:
        """storage.targets: IPv4 ranges clear of the design's own address pools, which hosts route
        elsewhere (a target inside them would take a switch's or a host's addresses)."""
        raw = self.raw.storage
        targets: list[str] = []
        for index, text in enumerate(raw.targets if isinstance(raw, sf.StorageNetwork) else []):
            path = f"storage.targets[{index}]"
            problem = _pool_problem(text)
            if problem is not None:
                self.error(path, problem, "give the storage systems' IPv4 range with its prefix length, such as "
                           "10.200.0.0/24")
                continue
            target = ipaddress.IPv4Network(text)
            for key in DEFAULT_POOLS:
                own = getattr(self.raw.addressing, key)
                if _pool_problem(own) is None and target.overlaps(ipaddress.IPv4Network(own)):
                    self.error(path, f"storage target {text} overlaps addressing.{key} {own}, which the design "
                               "addresses its own switches and hosts from",
                               f"give the storage systems a range outside addressing.{key}")
                    break
            else:
                targets.append(str(target))
        return tuple(targets)

    def addressing(self) -> None:
        pools = {}
        for key in DEFAULT_POOLS:
            text = getattr(self.raw.addressing, key)
            problem = _pool_problem(text)
            if problem is not None:
                self.error(f"addressing.{key}", problem,
                           f"give addressing.{key} an IPv4 range with its prefix length, such as {DEFAULT_POOLS[key]}")
                continue
            pools[key] = ipaddress.ip_network(text, strict=True)
        items = sorted(pools.items())
        for index, (key_a, net_a) in enumerate(items):
            for key_b, net_b in items[index + 1:]:
                if net_a.version == net_b.version and net_a.overlaps(net_b):  # type: ignore[arg-type]
                    self.error(
                        f"addressing.{key_b}",
                        f"{key_b} {net_b} overlaps {key_a} {net_a}",
                        "give every address pool its own range",
                    )
        for cidr_index, cidr in enumerate(self.raw.cloud.ssh_cidrs if self.raw.cloud else []):
            try:
                allowed = ipaddress.ip_network(cidr, strict=False)
            except ValueError:
                self.error(f"cloud.ssh_cidrs[{cidr_index}]", f"{cidr!r} is not a CIDR", "write it as 203.0.113.0/24")
                continue
            widest = 8 if allowed.version == 4 else 32
            if allowed.prefixlen < widest:
                self.error(f"cloud.ssh_cidrs[{cidr_index}]",
                           f"{cidr} opens SSH to {allowed.num_addresses:,} addresses (a /{allowed.prefixlen}); the "
                           f"widest range gpu-cluster opens is a /{widest}",
                           "give the ranges your users connect from (an office or VPN range, e.g. 203.0.113.0/24)")

    def management_plane(self, cloud_target: bool) -> sf.ManagementPlane:
        """The management plane with its defaults: the gateway at the first address of the oob
        pool, NTP from the gateway. The gateway must lie in the pool's lower half (the upper half
        holds the switches' management addresses, cluster.addressing)."""
        raw = self.raw.management_plane
        if cloud_target:
            if "management_plane" in self.raw.model_fields_set:
                self.ignored("management_plane", f"management_plane is the provider's on {self.raw.target}; this "
                             "section is ignored", "remove `management_plane` from a cloud stack")
            return raw
        if _pool_problem(self.raw.addressing.oob) is not None:
            return raw  # reported at addressing.oob
        pool = ipaddress.IPv4Network(self.raw.addressing.oob)
        if pool.prefixlen > 29:
            self.error("addressing.oob", f"{pool} is too small for a management segment (a /{pool.prefixlen})",
                       "give addressing.oob a /29 or wider range, such as 172.16.0.0/16")
            return raw
        lower = next(pool.subnets(prefixlen_diff=1))
        gateway = raw.gateway or str(lower.network_address + 1)
        address = ipaddress.IPv4Address(gateway)
        if address not in lower or address in (lower.network_address, pool.broadcast_address):
            self.error("management_plane.gateway",
                       f"gateway {gateway} is not a host address of the lower half of addressing.oob ({lower}); the "
                       "upper half holds the switches' management addresses",
                       f"give a gateway in {lower}, such as {lower.network_address + 1}, or move addressing.oob")
        if raw.dhcp_server is not None:
            static, dynamic = sf.oob_quarters(pool)
            server = ipaddress.IPv4Address(raw.dhcp_server)
            if server not in static or server == pool.network_address:
                self.error("management_plane.dhcp_server",
                           f"DHCP server {server} is not a host address of the static first quarter of addressing.oob "
                           f"({static}); the second quarter ({dynamic}) is the server's pool, the upper half holds "
                           "the switches' management addresses",
                           f"give an address in {static}, such as {static.network_address + 2}, or move addressing.oob")
        ntp = raw.ntp_servers if raw.ntp_servers is not None else [gateway]
        return raw.model_copy(update={"gateway": gateway, "ntp_servers": ntp})

    def telemetry(self, plane: sf.ManagementPlane) -> None:
        """Telemetry collectors are reachable from the switches' management VRF, whose one route is
        the oob gateway: not a switch's own management address (the upper half of addressing.oob),
        not an address of the fabric's pools. What the built switches push is checked once they are
        built (cluster.intent.management.telemetry_findings)."""
        telemetry = plane.telemetry
        if telemetry is None:
            return
        pools = {key: ipaddress.IPv4Network(getattr(self.raw.addressing, key))
                 for key in ("oob", "loopbacks", "fabric_links", "hosts")
                 if _pool_problem(getattr(self.raw.addressing, key)) is None}
        protocols = ("gnmi_dialout", "grpc_tunnel", "otlp")
        for protocol in protocols:
            for index, endpoint in enumerate(getattr(telemetry, protocol)):
                self._collector(f"management_plane.telemetry.{protocol}[{index}]", endpoint, pools)

    def _collector(self, path: str, endpoint: str, pools: dict[str, ipaddress.IPv4Network]) -> None:
        address = ipaddress.IPv4Address(endpoint.rpartition(":")[0])
        oob = pools.get("oob")
        if oob is not None and oob.prefixlen <= 29:
            upper = list(oob.subnets(prefixlen_diff=1))[1]
            if address in upper or address == oob.network_address:
                self.error(path, f"collector {address} is in the upper half of addressing.oob ({upper}), which holds "
                           "the switches' own management addresses (or is the segment's network address)",
                           f"give a collector in the lower half ({next(oob.subnets(prefixlen_diff=1))}) or beyond "
                           "the oob gateway")
                return
        for key in ("loopbacks", "fabric_links", "hosts"):
            pool = pools.get(key)
            if pool is not None and address in pool:
                self.error(path, f"collector {address} is in addressing.{key} ({pool}): the switches push from "
                           "their management VRF, which reaches the fabric's addresses through the oob gateway only",
                           "give a collector on the oob segment's lower half or a management network beyond "
                           "its gateway")
                return

    def access(self, target: str, cloud: sf.Cloud) -> None:
        """cloud.access names a path the target has; SSM needs a way out to reach its endpoints."""
        if cloud.access is None:
            return
        offered = (*clouds.cloud(target).access, "none")
        if cloud.access not in offered:
            self.error("cloud.access", f"access {cloud.access} is not offered on {target}",
                       f"use one of {', '.join(offered)} (default {offered[0]})")
        elif cloud.access == "ssm" and cloud.egress == "none" and cloud.vpc_id is None:
            self.error("cloud.access", "access ssm with egress none: the SSM agent on the nodes cannot reach Systems "
                       "Manager, so no session can start",
                       "keep egress: nat (the default), or deploy into a VPC with SSM endpoints (cloud.vpc_id)")

    def provider_settings(self, target: str, cloud: sf.Cloud) -> sf.Cloud:
        """The stack's provider settings (aws:region, gcp:project, ...) against `cloud`, which the
        cluster's explicit provider is built from: a provider setting that says otherwise would have
        put the resources of an earlier version elsewhere, and says the stack file disagrees with
        itself. Returns `cloud` with the project / subscription the settings supply."""
        settings = clouds.cloud(target).provider_settings
        given = {key: value for key, value in self.provider_config.items() if key in settings}
        for key, value in sorted(given.items()):
            field = settings[key]
            wanted = getattr(cloud, field)
            if wanted is None or _normal(value) == _normal(wanted):
                continue
            self.error(f"config.{key}", f"{key} is {value}, but cloud.{field} is {wanted}: the cluster's resources are "
                       f"created by a provider for cloud.{field}, so the two must not disagree",
                       f"set {key} to {wanted}, or remove it (cloud.{field} is the one that counts)")
        for key, owner in sorted((key, entry.name) for entry in clouds.clouds().values() for key in entry.own_keys):
            if getattr(cloud, key) is not None and target != owner:
                self.ignored(f"cloud.{key}", f"cloud.{key} is used on {owner} only", f"remove cloud.{key}")
        for key, field in settings.items():  # the project / subscription a setting supplies
            if field in clouds.cloud(target).own_keys and getattr(cloud, field) is None and key in given:
                return cloud.model_copy(update={field: given[key]})
        return cloud

    def identity(self, target: str, cloud: sf.Cloud) -> None:
        """data_buckets and registries in the form the target's identity grants take."""
        entry = clouds.cloud(target)
        for index, bucket in enumerate(cloud.data_buckets):
            form, example = entry.data_buckets
            if not re.fullmatch(form, bucket):
                self.error(f"cloud.data_buckets[{index}]", f"{bucket!r} is not {example.split(':')[0]}",
                           f"give {example}")
        owners = " and ".join(other.provider for other in clouds.clouds().values() if other.registries)
        for index, registry in enumerate(cloud.registries):
            if entry.registries is None:
                self.ignored(f"cloud.registries[{index}]", f"registries is {owners}'s: {target} nodes read the "
                             f"{entry.own_registry}'s registry", "remove it")
            elif not re.fullmatch(entry.registries[0], registry):
                what, form = entry.registries[1].split(": ", 1)
                self.error(f"cloud.registries[{index}]", f"{registry!r} is not {what}", f"give {form}")

    def login(self, target: str, cloud: sf.Cloud) -> None:
        """cloud.ssh_public_key as the provider takes it; required on Azure, whose scale set has
        password login disabled and so no other way in (cluster.sshkeys)."""
        key = cloud.ssh_public_key
        entry = clouds.cloud(target)
        login = entry.login_key
        managed = self.raw.scheduler is not None and self.raw.scheduler.kind == entry.kubernetes
        if key is None:
            if login.required is not None and not managed:
                self.error("cloud.ssh_public_key", login.required, login.required_hint)
            return
        takers = [other.login_key for other in clouds.clouds().values() if other.login_key.user_form]
        problem = provider_key_problem(entry.provider, login, key, " or ".join(other.user_form for other in takers))
        if problem is not None:
            hint = login.hint or ("give the one line of your id_ed25519.pub as it is "
                                  f"({'; '.join(other.user_note for other in takers)})")
            self.error("cloud.ssh_public_key", f"cloud.ssh_public_key cannot log in on {target}: {problem}", hint)

    def scheduler(self, target: str, cloud: sf.Cloud | None, pools: list[PoolSpec]) -> sf.Scheduler:
        """`scheduler`: the kind the target offers, the existing cluster it names, and node pool names
        the provider takes. The node pools join a cluster the user runs: its control plane,
        add-ons and access are not this stack's."""
        raw = self.raw.scheduler or sf.Scheduler()
        if target not in CLOUD_TARGETS:
            if self.raw.scheduler is not None:
                self.ignored("scheduler", "scheduler is a cloud target's managed Kubernetes; on premises the "
                             "exported Kueue objects select the labels label-nodes.sh sets", "remove `scheduler`")
            return sf.Scheduler()
        offered = clouds.cloud(target).kubernetes
        if raw.kind == "none":
            for key in sorted(raw.model_fields_set - {"kind"}):
                self.ignored(f"scheduler.{key}", f"scheduler.{key} is ignored with kind none (the nodes stay bare)",
                             f"remove scheduler.{key}, or set scheduler.kind: {offered}")
            return raw
        if raw.kind != offered:
            self.error("scheduler.kind", f"kind {raw.kind} is not {target}'s managed Kubernetes",
                       f"use kind: {offered}, or none for bare nodes")
            return raw
        if raw.create:
            raw = self.created_cluster(raw, cloud)
        else:
            for key in ("version", "zones"):
                if getattr(raw, key) is not None:
                    self.ignored(f"scheduler.{key}", f"scheduler.{key} is for a cluster the stack creates",
                                 f"remove scheduler.{key}, or set scheduler.create: true")
        if raw.cluster is None:
            self.error("scheduler.cluster", f"scheduler.cluster is required with kind {raw.kind}: the node pools join "
                       f"an existing {k8s.managed(raw.kind).kubernetes_service} cluster",
                       f"name your cluster (`scheduler: {{kind: {raw.kind}, cluster: <name>}}`), or kind: none")
        service = k8s.managed(raw.kind).managed
        for owner in clouds.clouds().values():
            for key in owner.managed.own_keys:
                if getattr(raw, key) is not None and raw.kind != owner.kubernetes:
                    self.ignored(f"scheduler.{key}", f"scheduler.{key} is used with kind {owner.kubernetes} only",
                                 f"remove scheduler.{key}")
        self.joined_needs(raw, cloud, service, "cloud.")
        if raw.kind == offered and cloud is not None:
            # cloud keys that configure what the stack creates for bare nodes only
            for key, what in clouds.cloud(target).bare_only_keys.items():
                if key in cloud.model_fields_set:
                    self.ignored(f"cloud.{key}", f"cloud.{key} {what}; with kind {raw.kind} the node pools are the "
                                 f"{raw.kind.upper()} cluster's, so the stack creates none",
                                 f"remove cloud.{key}, or use scheduler.kind: none")
        self.joined_needs(raw, cloud, service, "scheduler.")
        if service.own_node_image and cloud is not None:
            given = (["cloud.image"] if cloud.image is not None else []) + [
                f"node_pools[{index}].cloud.image" for index, pool in enumerate(self.raw.node_pools)
                if pool.cloud is not None and pool.cloud.image is not None]
            for path in given:
                self.ignored(path, f"{raw.kind} node pools boot the service's own node image",
                             f"remove {path}, or use scheduler.kind: none")
        if service.location_is_region and raw.location is None and cloud is not None:
            raw = raw.model_copy(update={"location": cloud.region})
        if service.one_rdma_zone and cloud is not None:
            for pool in pools:
                if pool.capacity is not None and pool.capacity.zone not in (None, cloud.zone):
                    self.error(pool.capacity.zone_path, f"pool {pool.name} is in {pool.capacity.zone}, but "
                               f"{raw.kind.upper()} node pools here share the Network objects of cloud.zone's RDMA VPC "
                               f"({cloud.zone})", f"put the pool in {cloud.zone}, or use scheduler.kind: none")
        spec_names: dict[str, str] = {}
        for pool in pools:
            name = k8s.node_pool_name(raw.kind, (self.raw.previous_names or [self.raw.name])[0], pool.first_name)
            if service.pool_name_form is not None and not re.fullmatch(service.pool_name_form[0], name):
                self.error(f"{pool.path}.name", service.pool_name_form[1].format(name=name),
                           "give the pool a shorter name (its earliest name in previous_names counts)")
            elif service.pool_name_limit is not None and len(name) > service.pool_name_limit:
                self.error(f"{pool.path}.name", f"{raw.kind} node pool name {name!r} is longer than "
                           f"{service.pool_name_limit} characters", "shorten the cluster or pool name")
            instance = self.catalog.instance(target, pool.instance_type or "")
            if service.instance_needs is not None and instance is not None and not getattr(
                    instance, service.instance_needs[0]):
                self.error(f"{pool.path}.instance_type", service.instance_needs[1].format(type=pool.instance_type),
                           "use scheduler.kind: none for this stack")
            other = spec_names.setdefault(name, pool.name)
            if other != pool.name:
                self.error(f"{pool.path}.name", f"pools {other} and {pool.name} would both be node pool {name!r}",
                           "rename one of them")
        return raw

    def joined_needs(self, raw: sf.Scheduler, cloud: sf.Cloud | None, service: clouds.Managed, where: str) -> None:
        """Joining an existing cluster: the key its service needs then (Managed.joined_needs), when
        that key is under `where` (`cloud.` or `scheduler.`)."""
        if raw.create or service.joined_needs is None or not service.joined_needs[0].startswith(where):
            return
        path, message, hint = service.joined_needs
        section, key = path.split(".")
        holder = raw if section == "scheduler" else cloud
        if holder is not None and getattr(holder, key) is None:
            self.error(path, message, hint.format(cluster=raw.cluster or "<name>"))

    def created_cluster(self, raw: sf.Scheduler, cloud: sf.Cloud | None) -> sf.Scheduler:
        """scheduler.create: the cluster's name (default the stack's) and version, checked against what
        the kind's service takes, and where its control plane spans zones, those zones."""
        kind = raw.kind
        name = raw.cluster or self.raw.name
        service = k8s.managed(kind).managed
        version = raw.version or service.default_version
        if service.cluster_name_form is not None and not re.fullmatch(service.cluster_name_form[0], name):
            self.error("scheduler.cluster", f"{kind.upper()} cluster name {name!r} is not {service.cluster_name_form[1]}",
                       "set scheduler.cluster to such a name")
        if raw.version is None and service.version_required is not None:
            self.error("scheduler.version", *service.version_required)
        elif raw.version is not None and service.version_form is not None and not re.fullmatch(
                service.version_form[0], raw.version):
            self.error("scheduler.version", f"{kind.upper()} takes {service.version_form[1]}, not {raw.version!r}",
                       service.version_form[2])
        for key, (message, hint) in service.created_ignores.items():
            if getattr(raw, key) is not None:
                self.ignored(f"scheduler.{key}", message, hint)
        if service.control_plane_zones:
            self.control_plane_zones(raw, cloud, service.control_plane_zones)
        elif raw.zones is not None:
            spanning = " or ".join(sorted(entry.kubernetes.upper() for entry in clouds.clouds().values()
                                          if entry.managed.control_plane_zones))
            self.ignored("scheduler.zones", f"scheduler.zones places an {spanning} control plane", "remove scheduler.zones")
        return raw.model_copy(update={"cluster": name, "version": version})

    def control_plane_zones(self, raw: sf.Scheduler, cloud: sf.Cloud | None, least: int) -> None:
        """scheduler.zones of a created cluster whose control plane spans zones: `least` or more
        distinct zones of cloud.region (the control plane's subnets, one per zone)."""
        zones = raw.zones or []
        suffix = clouds.cloud(self.raw.target).zone_suffix or ""
        if len(set(zones)) < least:
            self.error("scheduler.zones", f"an {raw.kind.upper()} control plane needs subnets in at least {least} "
                       f"Availability Zones; found {len(set(zones))}",
                       "list two or more zones of cloud.region, as `zones: [us-east-1a, us-east-1b]`")
        for index, zone in enumerate(zones):
            if zone in zones[:index]:
                self.error(f"scheduler.zones[{index}]", f"zone {zone} is listed twice", "list each zone once")
            elif cloud is not None and not re.fullmatch(re.escape(cloud.region) + suffix, zone):
                self.error(f"scheduler.zones[{index}]", f"zone {zone} is not a zone of cloud.region {cloud.region}",
                           f"use a zone of {cloud.region}, as {cloud.region}a")

    def policy(self) -> PolicySpec:
        raw = self.raw.policy
        for index, rule in enumerate(raw.suppress):
            if rule not in self.rule_ids or rule == "SCHEMA":
                self.error(
                    f"policy.suppress[{index}]",
                    f"unknown or unsuppressible rule id {rule!r}",
                    f"use one of {', '.join(r for r in self.rule_ids if r != 'SCHEMA')}",
                )
        if raw.recommended_gbps_per_gpu < raw.min_gbps_per_gpu:
            self.error(
                "policy.recommended_gbps_per_gpu",
                f"recommended ({raw.recommended_gbps_per_gpu}) is below the minimum ({raw.min_gbps_per_gpu})",
                "set recommended_gbps_per_gpu >= min_gbps_per_gpu",
            )
        return PolicySpec.from_stack(raw, fail_on=Severity.parse(raw.fail_on))

    def qos(self, fabric: FabricSpec | None) -> sf.Qos | None:
        raw = self.raw.qos
        if self.raw.target in CLOUD_TARGETS or (fabric is not None and fabric.transport == "infiniband"):
            return None
        return raw or sf.Qos()

    def _lossless_buffers(self, fabric: FabricSpec | None) -> None:
        """A lossless plan needs switches whose QoS can hold it (a SONiC SKU with lossless buffer profiles)."""
        qos = self.raw.qos or sf.Qos()
        if fabric is None or fabric.transport != "roce" or qos.mode != "lossless" or not qos.pfc_priorities:
            return
        given_core = self.raw.fabric is not None and self.raw.fabric.core is not None
        if self.pools_incomplete:
            return  # the port speeds follow NICs that did not resolve
        for model in (fabric.leaf, fabric.spine, *((fabric.core,) if given_core else ())):
            problem = dialects.platform(model.os).qos_problem(model.model, model.port_gbps, tuple(qos.pfc_priorities))
            if problem is not None:
                self.error(f"{model.path}.port_gbps", *problem)

    def _lossless_storage_buffers(self, fabric: FabricSpec | None, storage: NetworkSpec | None) -> None:
        """A lossless storage network (storage.lossless) needs storage switches whose QoS can hold
        PFC on the storage priority, as the fabric's switches must hold the fabric's plan."""
        if (fabric is None or storage is None or not storage.lossless or "storage" in fabric.shared_with
                or self.pools_incomplete):
            return
        priority = (self.raw.qos or sf.Qos()).storage.priority
        given_spine = self.raw.storage is not None and self.raw.storage.spine is not None
        for model in (storage.leaf, *((storage.spine,) if given_spine else ())):
            problem = dialects.platform(model.os).qos_problem(model.model, model.port_gbps, (priority,))
            if problem is not None:
                self.error(f"{model.path}.port_gbps", problem[0],
                           problem[1].replace("qos.mode: lossy", "storage.lossless: false"))

    def cluster(self) -> ClusterSpec | None:
        raw = self.raw
        cloud_target = raw.target in CLOUD_TARGETS
        cloud = raw.cloud
        if cloud_target:
            if raw.cloud is None:
                self.error("cloud", f"cloud.region is required on {raw.target}", "add `cloud: {region: ..., zone: ...}`")
            elif clouds.cloud(raw.target).zone_suffix is not None and raw.cloud.zone is None:
                self.error("cloud.zone", f"cloud.zone is required on {raw.target}", "add the zone the GPUs are in")
            if raw.cloud is not None:
                self.login(raw.target, raw.cloud)
                self.access(raw.target, raw.cloud)
                self.identity(raw.target, raw.cloud)
                cloud = self.provider_settings(raw.target, raw.cloud)
            for key in ("fabric", "management", "oob"):
                if getattr(raw, key) is not None:
                    self.ignored(key, f"{key} is the provider's on {raw.target}; this section is ignored",
                                 f"remove `{key}` from a cloud stack")
            for key in sorted(raw.storage.model_fields_set - {"filesystem", "home"}) if raw.storage is not None else []:
                self.ignored(f"storage.{key}", f"storage.{key} sizes on-premises switches; on {raw.target} the "
                             "storage network is the provider's, and storage.filesystem and storage.home its file "
                             "systems",
                             f"remove storage.{key}")
        elif raw.cloud is not None:
            self.ignored("cloud", "cloud is ignored on premises", "remove `cloud`, or set a cloud target")
        if raw.provisioning is not None and cloud_target:
            self.ignored("provisioning", f"provisioning is the provider's on {raw.target}; this section is ignored",
                         "remove `provisioning` from a cloud stack")
        if raw.qos is not None and cloud_target:
            self.ignored("qos", f"qos is ignored on {raw.target}: the provider's fabric sets its own",
                         "remove `qos` from a cloud stack", Severity.INFO)
        pools = self.pools()
        fabric = storage = management = oob = None
        if not cloud_target:
            fabric = self.fabric(pools)
            storage = self.network("storage", pools)
            management = self.network("management", pools)
            oob = self.network("oob", pools)
            if fabric is not None and fabric.transport == "infiniband" and raw.qos is not None:
                self.ignored("qos", "qos is ignored on an InfiniBand fabric (the subnet manager sets lanes), except "
                             "qos.storage, qos.cnp, qos.management, qos.ecn and qos.mtu, which the storage "
                             "network's QoS plan reads", "remove `qos`, or use transport: roce", Severity.INFO)
            self._lossless_buffers(fabric)
            self._lossless_storage_buffers(fabric, storage)
        filesystem = None
        if raw.storage is not None and raw.storage.filesystem is not None:
            if cloud_target:
                filesystem, problems = plan_filesystem(raw.target, sum(pool.gpus for pool in pools),
                                                       raw.storage.filesystem)
                self.findings.extend(problems)
            else:
                self.ignored("storage.filesystem", "storage.filesystem is a cloud target's shared file system; on "
                             "premises the storage network's targets are your own", "remove storage.filesystem")
        home = None
        if raw.storage is not None and raw.storage.home is not None:
            if cloud_target:
                home, problems = plan_home(raw.target, raw.storage.home)
                self.findings.extend(problems)
            else:
                self.ignored("storage.home", "storage.home is a cloud target's /home file system; on premises "
                             "/home is your own", "remove storage.home")
        scheduler = self.scheduler(raw.target, cloud, pools)
        self.addressing()
        management_plane = self.management_plane(cloud_target)
        if not cloud_target:
            self.telemetry(management_plane)
        policy = self.policy()
        if any(finding.severity == Severity.ERROR for finding in self.findings):
            return None
        return ClusterSpec.from_stack(
            raw,
            ignored=("provisioning",) if cloud_target else (),  # ignored on cloud targets (reported above)
            cloud=cloud,
            pools=tuple(pools),
            fabric=fabric,
            storage=storage,
            management=management,
            oob=oob,
            default_pools=tuple(key for key in DEFAULT_POOLS if key not in raw.addressing.model_fields_set),
            qos=self.qos(fabric),
            storage_qos=None if cloud_target else raw.qos or sf.Qos(),
            policy=policy,
            management_plane=management_plane,
            filesystem=filesystem,
            home=home,
            scheduler=scheduler,
        )


def _normal(value: str) -> str:
    """A location as the provider writes it, for comparison: `eastus` and `East US` are one."""
    return value.replace(" ", "").lower()


def access_of(cloud: sf.Cloud, target: str) -> str:
    """cloud.access, or the target's default (the first way in its CLOUD offers)."""
    return cloud.access or next(iter(clouds.cloud(target).access), "none")


def resolve(data: dict[str, Any], rule_ids: tuple[str, ...], catalog: Catalog | None = None,
            provider_config: dict[str, str] | None = None) -> tuple[ClusterSpec | None, list[Finding]]:
    """Check the raw mapping against the contract and fill defaults. Never raises on bad input.

    `rule_ids` are the ids `policy.suppress` may name (the rule set's registry, given by the
    pipeline: resolving comes before the rules and imports none of them); `provider_config` the
    stack's provider settings (cluster.loader.PROVIDER_KEYS), checked against `cloud`."""
    try:
        raw = sf.StackFile.model_validate(data)
    except ValidationError as error:
        return None, pydantic_findings(error)
    resolver = _Resolver(raw, catalog or load_catalog(), rule_ids, provider_config)
    spec = resolver.cluster()
    return spec, resolver.findings
