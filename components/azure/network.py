"""Azure networks: a resource group, one VNet with a management and a storage subnet, and a
network security group that admits SSH only from cloud.ssh_cidrs. The GPU fabric is the
platform's InfiniBand: ND v5 VMs of one scale set (one placement group) get it attached, so
there is nothing to create for it (FACTS.md 1.3)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pulumi
from pulumi_azure_native import network, resources

from components.addressing import CLOUD_BLOCK, network_cidr
from components.base import FabricAttachments, NetworkAttachment, child

if TYPE_CHECKING:
    from components.fabric import GpuFabricArgs
    from components.management import ManagementNetworkArgs
    from components.storage import StorageNetworkArgs


def management(parent: pulumi.Resource, name: str, args: ManagementNetworkArgs) -> NetworkAttachment:
    """Resource group, VNet, NSG and the management subnet."""
    cloud = args.spec.cloud
    assert cloud is not None
    tags = {"gpu-cluster": args.spec.name}
    group = resources.ResourceGroup(f"{name}-rg", location=cloud.region, tags=tags, opts=child(parent))
    rules = [{
        "name": "ssh-from-allowed-cidrs", "priority": 100, "direction": "Inbound", "access": "Allow",
        "protocol": "Tcp", "source_address_prefixes": list(cloud.ssh_cidrs), "source_port_range": "*",
        "destination_address_prefix": "*", "destination_port_range": "22",
    }] if cloud.ssh_cidrs else []
    nsg = network.NetworkSecurityGroup(f"{name}-nsg", resource_group_name=group.name, location=cloud.region,
                                       security_rules=rules, tags=tags, opts=child(parent))
    vnet = network.VirtualNetwork(f"{name}-vnet", resource_group_name=group.name, location=cloud.region,
                                  address_space={"address_prefixes": [CLOUD_BLOCK]}, tags=tags, opts=child(parent))
    subnet = network.Subnet(f"{name}-subnet", resource_group_name=group.name, virtual_network_name=vnet.name,
                            address_prefix=network_cidr("management"), network_security_group={"id": nsg.id},
                            opts=child(parent))
    return NetworkAttachment("management", (subnet.id,), (nsg.id,), network_id=vnet.name, scope=group.name)


def storage(parent: pulumi.Resource, name: str, args: StorageNetworkArgs) -> NetworkAttachment:
    """The storage subnet in the management VNet."""
    group, vnet = args.management.scope, args.management.network_id
    assert group is not None and vnet is not None
    subnet = network.Subnet(f"{name}-subnet", resource_group_name=group, virtual_network_name=vnet,
                            address_prefix=network_cidr("storage"), opts=child(parent))
    return NetworkAttachment("storage", (subnet.id,), network_id=vnet, scope=group)


def fabric(parent: pulumi.Resource, name: str, args: GpuFabricArgs) -> FabricAttachments:
    """InfiniBand comes with the scale set: no resource, one attachment naming the layout."""
    return FabricAttachments({"infiniband": NetworkAttachment("fabric", scope=args.management.scope)})
