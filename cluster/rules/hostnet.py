"""Host networking on premises: the DHCP server and PXE server are hosts the management network
reaches, and storage targets stay clear of the address pools the design has grown into."""

from __future__ import annotations

import ipaddress
from collections.abc import Iterator

from cluster.addressing import pow2, spread_index
from cluster.dialects import platform, platforms
from cluster.findings import Finding, Severity
from cluster.intent.hostnet import address_owner, host_region
from cluster.rules.base import Rule
from cluster.spec import ClusterSpec
from cluster.topology import Topology


class HostNetworking(Rule):
    """`provisioning.dhcp_server` (and `next_server`) is the planned management address of a host,
    the node that runs the server, which every management leaf's relay reaches over the management
    network; the pools hold management ports to relay from; `storage.targets` stay clear of the
    address pools (widened for a large design) that the hosts route elsewhere."""

    id = "HOST-NET"
    title = "host networking"

    def applies(self, spec: ClusterSpec) -> bool:
        return spec.fabric is not None and not spec.is_cloud

    def check(self, spec: ClusterSpec, topology: Topology) -> Iterator[Finding]:
        yield from self._provisioning(spec, topology)
        if spec.provisioning is not None:
            yield from self._relays(spec, topology)
        yield from self._targets(spec)

    def _provisioning(self, spec: ClusterSpec, topology: Topology) -> Iterator[Finding]:
        provisioning = spec.provisioning
        if provisioning is None:
            return
        if not any(pool.management_nics.ports for pool in spec.pools):
            yield self.finding("provisioning.dhcp_server", "no node pool has a management NIC, so no host port "
                               "relays DHCP to the server", "give the pools management_nics, or remove provisioning")
            return
        example = self._example(spec, topology)
        for key in ("dhcp_server", "next_server"):
            address = getattr(provisioning, key)
            if address is None:
                continue
            if address_owner(spec, topology, "management", address) is None:
                region = host_region(spec, "management")
                where = ("inside the management hosts' range but on no host's port" if
                         ipaddress.IPv4Address(address) in region else f"outside the management hosts' range {region}")
                yield self.finding(
                    f"provisioning.{key}",
                    f"{address} is no host's planned management address ({where}); the management network "
                    "reaches only its hosts' ports, so no leaf or host could reach it",
                    f"give the management address of the node that runs it, such as {example}",
                    Severity.ERROR)

    @staticmethod
    def _example(spec: ClusterSpec, topology: Topology) -> str:
        """The first host's first management address, as an example of a good value."""
        region = host_region(spec, "management")
        blocks = pow2(max([len(spec.pools), *(pool.host_block + 1 for pool in spec.pools)]))
        block = region.num_addresses // blocks
        for pool in spec.pools:
            if pool.management_nics.ports:
                host = topology.hosts_by_pool[pool.name][0]
                value = int(region.network_address) + block * spread_index(pool.host_block, blocks)
                return f"{ipaddress.IPv4Address(value)} ({host}'s)"
        return "a host's management address"

    def _relays(self, spec: ClusterSpec, topology: Topology) -> Iterator[Finding]:
        """A switch with management host ports whose dialect cannot relay DHCP from a routed port."""
        blind: dict[str, list[str]] = {}
        for name, data in topology.switches():
            if platform(data["os"]).relays_on_routed_ports:
                continue
            if any(network == "management" and topology.nodes[peer]["kind"] == "host"
                   for peer, network, _ in topology.cables(name)):
                blind.setdefault(data["os"], []).append(name)
        relaying = [name for name, entry in platforms().items()
                    if entry.relays_on_routed_ports and entry.stack_os and entry.transport == "ethernet"]
        for os, names in sorted(blind.items()):
            yield self.finding(
                "provisioning.dhcp_server",
                f"{platform(os).title} relays DHCP only on VLAN interfaces, not on the routed /31 of a host port: "
                f"the hosts under {', '.join(names[:3])}{' ...' if len(names) > 3 else ''} cannot boot from "
                "the DHCP server (their netplan files still give them their addresses)",
                f"run the management leaves on a dialect that relays on routed ports (management.leaf.os: "
                f"{' or '.join(relaying)}), or install those hosts another way (BMC virtual media)", Severity.WARNING)

    def _targets(self, spec: ClusterSpec) -> Iterator[Finding]:
        if spec.storage is None:
            return
        for index, text in enumerate(spec.storage.targets):
            target = ipaddress.IPv4Network(text)
            for key in ("loopbacks", "fabric_links", "hosts"):
                pool = ipaddress.IPv4Network(getattr(spec.addressing, key))
                if target.overlaps(pool):
                    yield self.finding(f"storage.targets[{index}]",
                                       f"storage target {text} overlaps addressing.{key} {pool} (widened from its "
                                       "default for this design's size)",
                                       f"give the storage systems a range outside {pool}")
