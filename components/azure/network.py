"""Azure networks: a resource group, one VNet with a management and a storage subnet, and a
network security group that admits SSH only from cloud.ssh_cidrs. The GPU fabric is the
platform's InfiniBand: ND v5 VMs of one scale set (one placement group) get it attached, so
there is nothing to create for it (FACTS.md 1.3)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pulumi
from pulumi_azure_native import authorization, containerservice, managedidentity, netapp, network, resources, storagecache
from pulumi_azure_native import provider as azure_provider

from cluster.resolve import access_of
from cluster.stackfile import Cloud
from components.addressing import CLOUD_BLOCK, network_cidr, subnet_cidr
from components.base import FabricAttachments, NetworkAttachment, child

if TYPE_CHECKING:
    from cluster.spec import ClusterSpec
    from components.fabric import GpuFabricArgs
    from components.management import ManagementNetworkArgs
    from components.storage import StorageNetworkArgs


def provider(parent: pulumi.Resource, name: str, spec: ClusterSpec) -> pulumi.ProviderResource | None:
    """The cluster's Azure provider: cloud.region, and cloud.subscription (or the stack's
    azure-native:subscriptionId, which the resolver fills in)."""
    assert spec.cloud is not None
    return azure_provider.Provider(name, location=spec.cloud.region, subscription_id=spec.cloud.subscription,
                                   opts=pulumi.ResourceOptions(parent=parent))


def holds_file_systems(spec: ClusterSpec) -> bool:
    """The stack creates a file system (storage.filesystem or storage.home)."""
    return spec.filesystem is not None or spec.home is not None


def management(parent: pulumi.Resource, name: str, args: ManagementNetworkArgs) -> NetworkAttachment:
    """Resource group, VNet, NSG and the management subnet.

    With scheduler aks the node pools are the AKS cluster's: they join its VNet (an agent pool's
    subnet must be in the cluster's VNet: AKS "Create node pools", vnetSubnetID), run as its kubelet
    identity, and leave through its outbound path, so the stack creates no management subnet, NSG,
    NAT gateway, Bastion or node identity. Only file systems (storage.filesystem, storage.home) take
    a resource group and a VNet, which the user peers with the cluster's."""
    cloud = args.spec.cloud
    assert cloud is not None
    tags = {"gpu-cluster": args.spec.name}
    if args.spec.scheduler.kind == "aks" and args.spec.scheduler.create:
        return _aks_network(parent, name, args, tags)
    if args.spec.scheduler.kind == "aks":
        if not holds_file_systems(args.spec):
            return NetworkAttachment("management")
        group = resources.ResourceGroup(f"{name}-rg", location=cloud.region, tags=tags, opts=child(parent))
        vnet = network.VirtualNetwork(f"{name}-vnet", resource_group_name=group.name, location=cloud.region,
                                      address_space={"address_prefixes": [CLOUD_BLOCK]}, tags=tags, opts=child(parent))
        return NetworkAttachment("management", network_id=vnet.name, scope=group.name)
    group = resources.ResourceGroup(f"{name}-rg", location=cloud.region, tags=tags, opts=child(parent))
    rules: list[network.SecurityRuleArgsDict] = [{
        "name": "ssh-from-allowed-cidrs", "priority": 100, "direction": "Inbound", "access": "Allow",
        "protocol": "Tcp", "source_address_prefixes": list(cloud.ssh_cidrs), "source_port_range": "*",
        "destination_address_prefix": "*", "destination_port_range": "22",
    }] if cloud.ssh_cidrs else []
    nsg = network.NetworkSecurityGroup(f"{name}-nsg", resource_group_name=group.name, location=cloud.region,
                                       security_rules=rules, tags=tags, opts=child(parent))
    vnet = network.VirtualNetwork(f"{name}-vnet", resource_group_name=group.name, location=cloud.region,
                                  address_space={"address_prefixes": [CLOUD_BLOCK]}, tags=tags, opts=child(parent))
    nat = _nat(parent, name, cloud, group.name, tags) if cloud.egress == "nat" else None
    subnet = network.Subnet(f"{name}-subnet", resource_group_name=group.name, virtual_network_name=vnet.name,
                            address_prefix=network_cidr("management"), network_security_group={"id": nsg.id},
                            nat_gateway=_joined(nat), opts=child(parent))
    bastion = _bastion(parent, name, cloud, group.name, vnet.name, tags) if access_of(cloud, "azure") == "bastion" else None
    return NetworkAttachment("management", (subnet.id,), (nsg.id,), network_id=vnet.name, scope=group.name,
                             egress_id=nat, access_id=bastion, identity=_node_identity(parent, name, cloud, group.name, tags))


# scheduler.create on aks: Azure CNI Overlay (pods take addresses from a private range of their own, not
# from the VNet: AKS "Configure Azure CNI Overlay networking", --network-plugin azure --network-plugin-mode
# overlay), with the pod and service ranges outside the stack's 10.0.0.0/16 (AKS's default service range is
# 10.0.0.0/16, which would overlap it), the DNS service at the service range's .10 as AKS's default is.
AKS_PODS, AKS_SERVICES, AKS_DNS_SERVICE = "10.4.0.0/14", "10.8.0.0/20", "10.8.0.10"
# The system node pool: CoreDNS and metrics-server, kept off the GPU nodes (which are tainted). AKS "Manage
# system node pools": a production cluster's single system pool "at least three nodes", of "at least 4 vCPUs",
# recommending 8 vCPUs for larger clusters "(for example, Standard_DS4_v2)", and the CriticalAddonsOnly=true:
# NoSchedule taint to keep application pods off it.
AKS_SYSTEM_SIZE, AKS_SYSTEM_NODES, AKS_SYSTEM_TAINT = "Standard_DS4_v2", 3, "CriticalAddonsOnly=true:NoSchedule"


def _aks_network(parent: pulumi.Resource, name: str, args: ManagementNetworkArgs, tags: dict[str, str]
                 ) -> NetworkAttachment:
    """scheduler.create on aks: the resource group, a VNet and its node subnet (the management /20), and
    the AKS cluster the GPU node pools join: private (the API server has no public endpoint: AKS "Create a
    private AKS cluster", apiServerAccessProfile.enablePrivateCluster), Azure CNI Overlay on the node
    subnet, a system-assigned managed identity (AKS makes the kubelet identity), a Linux system node pool
    at scheduler.version. The file systems share the VNet, so the nodes reach them without peering."""
    spec = args.spec
    cloud, scheduler = spec.cloud, spec.scheduler
    assert cloud is not None and scheduler.cluster is not None
    group = resources.ResourceGroup(f"{name}-rg", location=cloud.region, tags=tags, opts=child(parent))
    vnet = network.VirtualNetwork(f"{name}-vnet", resource_group_name=group.name, location=cloud.region,
                                  address_space={"address_prefixes": [CLOUD_BLOCK]}, tags=tags, opts=child(parent))
    subnet = network.Subnet(f"{name}-subnet", resource_group_name=group.name, virtual_network_name=vnet.name,
                            address_prefix=network_cidr("management"), opts=child(parent))
    cluster = containerservice.ManagedCluster(
        f"{name}-aks", resource_name_=scheduler.cluster, resource_group_name=group.name, location=cloud.region,
        dns_prefix=spec.first_name[:54], kubernetes_version=scheduler.version,
        identity={"type": containerservice.ResourceIdentityType.SYSTEM_ASSIGNED},
        api_server_access_profile={"enable_private_cluster": True},
        network_profile={"network_plugin": containerservice.NetworkPlugin.AZURE,
                         "network_plugin_mode": containerservice.NetworkPluginMode.OVERLAY,
                         "pod_cidr": AKS_PODS, "service_cidr": AKS_SERVICES, "dns_service_ip": AKS_DNS_SERVICE},
        agent_pool_profiles=[{
            "name": "system", "mode": containerservice.AgentPoolMode.SYSTEM, "vm_size": AKS_SYSTEM_SIZE,
            "count": AKS_SYSTEM_NODES, "os_type": containerservice.OSType.LINUX,
            "os_sku": containerservice.OSSKU.UBUNTU, "vnet_subnet_id": subnet.id, "enable_node_public_ip": False,
            "node_taints": [AKS_SYSTEM_TAINT]}],
        tags=tags, opts=child(parent))
    return NetworkAttachment("management", (subnet.id,), network_id=vnet.name, scope=group.name,
                             kubernetes_cluster=cluster.name)


# Azure built-in role definition ids (learn.microsoft.com "Azure built-in roles"): read blobs, pull images.
STORAGE_BLOB_DATA_READER = "2a2b9908-6ea1-4ae2-8e65-a410df84e7d1"
ACR_PULL = "7f951dda-4ed3-4680-a7ca-43fe172d538d"


def _role(scope: str, role: str) -> str:
    """The role definition id of built-in `role` in the subscription of `scope` (a resource id)."""
    subscription = scope.split("/")[2]
    return f"/subscriptions/{subscription}/providers/Microsoft.Authorization/roleDefinitions/{role}"


def _node_identity(parent: pulumi.Resource, name: str, cloud: Cloud, group: pulumi.Output[str],
                   tags: dict[str, str]) -> pulumi.Output[str]:
    """A user-assigned managed identity for the scale sets, with Storage Blob Data Reader on the
    storage accounts of cloud.data_buckets and AcrPull on the registries of cloud.registries, each
    at that resource's scope only. Returns its id."""
    identity = managedidentity.UserAssignedIdentity(f"{name}-nodes", resource_group_name=group,
                                                    location=cloud.region, tags=tags, opts=child(parent))
    grants = [(f"data{index}", scope, STORAGE_BLOB_DATA_READER) for index, scope in enumerate(cloud.data_buckets)]
    grants += [(f"registry{index}", scope, ACR_PULL) for index, scope in enumerate(cloud.registries)]
    for suffix, scope, role in grants:
        authorization.RoleAssignment(f"{name}-nodes-{suffix}", scope=scope, role_definition_id=_role(scope, role),
                                     principal_id=identity.principal_id, principal_type="ServicePrincipal",
                                     opts=child(parent))
    return identity.id


def _joined(nat: pulumi.Output[str] | None) -> network.SubResourceArgsDict | None:
    """A subnet's reference to the NAT gateway `nat` (its id), when there is one."""
    return {"id": nat} if nat is not None else None


def _nat(parent: pulumi.Resource, name: str, cloud: Cloud, group: pulumi.Output[str], tags: dict[str, str]
         ) -> pulumi.Output[str]:
    """A NAT gateway with one static Standard public IP: the subnets' way out for images and
    packages, since new VNets have no default outbound access (learn.microsoft.com "Default
    outbound access in Azure"; "What is Azure NAT Gateway?"). Returns its id."""
    address = network.PublicIPAddress(f"{name}-nat-ip", resource_group_name=group, location=cloud.region,
                                      sku={"name": "Standard"}, public_ip_allocation_method="Static", tags=tags,
                                      opts=child(parent))
    return network.NatGateway(f"{name}-nat", resource_group_name=group, location=cloud.region,
                              sku={"name": "Standard"}, public_ip_addresses=[{"id": address.id}], tags=tags,
                              opts=child(parent)).id


def _bastion(parent: pulumi.Resource, name: str, cloud: Cloud, group: pulumi.Output[str], vnet: pulumi.Output[str],
             tags: dict[str, str]) -> pulumi.Output[str]:
    """Azure Bastion (Standard, native-client tunneling) in its own AzureBastionSubnet: `az network
    bastion ssh` reaches the nodes' private addresses, and no node has a public IP
    (learn.microsoft.com "Connect to a VM using Bastion and a native client": Standard SKU or
    higher, enableTunneling; the subnet must be named AzureBastionSubnet and be a /26 or larger)."""
    subnet = network.Subnet(f"{name}-bastion-subnet", subnet_name="AzureBastionSubnet", resource_group_name=group,
                            virtual_network_name=vnet, address_prefix=network_cidr("public"), opts=child(parent))
    address = network.PublicIPAddress(f"{name}-bastion-ip", resource_group_name=group, location=cloud.region,
                                      sku={"name": "Standard"}, public_ip_allocation_method="Static", tags=tags,
                                      opts=child(parent))
    return network.BastionHost(f"{name}-bastion", resource_group_name=group, location=cloud.region,
                               sku={"name": "Standard"}, enable_tunneling=True,
                               ip_configurations=[{"name": "bastion", "subnet": {"id": subnet.id},
                                                   "public_ip_address": {"id": address.id}}],
                               tags=tags, opts=child(parent)).name


def storage(parent: pulumi.Resource, name: str, args: StorageNetworkArgs) -> NetworkAttachment:
    """The storage subnet in the management VNet, and the shared file systems. With scheduler aks no
    storage subnet (no VM of the stack has a NIC there), only the file systems' own subnets."""
    group, vnet = args.management.scope, args.management.network_id
    if group is None or vnet is None:  # scheduler aks without file systems: nothing of the stack's
        return NetworkAttachment("storage")
    assert args.spec.cloud is not None
    nat = args.management.egress_id
    subnet_ids: tuple[pulumi.Output[str], ...] = () if args.spec.scheduler.kind == "aks" else (network.Subnet(
        f"{name}-subnet", resource_group_name=group, virtual_network_name=vnet,
        address_prefix=network_cidr("storage"), nat_gateway=_joined(nat), opts=child(parent)).id,)
    home, home_id = _home(parent, name, args, group, vnet) if args.spec.home is not None else (None, None)
    fs = args.spec.filesystem
    if fs is None:
        return NetworkAttachment("storage", subnet_ids, network_id=vnet, scope=group, home=home, home_id=home_id)
    # Azure Managed Lustre takes a subnet of its own (no VMs in it: learn.microsoft.com
    # azure-managed-lustre network prerequisites), in the VNet the nodes' storage NIC is on.
    # Protected: `pulumi destroy` stops at it instead of deleting the data.
    lustre_subnet = network.Subnet(f"{name}-lustre-subnet", resource_group_name=group, virtual_network_name=vnet,
                                   address_prefix=subnet_cidr(AZURE_FILESYSTEM_SUBNET), opts=child(parent))
    lustre = storagecache.AmlFilesystem(
        f"{name}-lustre", resource_group_name=group, location=args.spec.cloud.region,
        sku={"name": f"AMLFS-Durable-Premium-{fs.tier}"}, storage_capacity_ti_b=fs.capacity_gib / 1024,
        filesystem_subnet=lustre_subnet.id,
        maintenance_window={"day_of_week": storagecache.MaintenanceDayOfWeekType.SUNDAY, "time_of_day_utc": "02:00"},
        tags={"gpu-cluster": args.spec.name}, opts=pulumi.ResourceOptions(parent=parent, protect=True))
    source = lustre.client_info.apply(lambda info: f"{info.mgs_address if info else ''}@tcp:/lustrefs")
    return NetworkAttachment("storage", subnet_ids, network_id=vnet, scope=group, filesystem=source,
                             filesystem_id=lustre.id, home=home, home_id=home_id)


AZURE_FILESYSTEM_SUBNET = 4  # the /20 after the public one: Azure carves no GPU or zone subnets
AZURE_HOME_SUBNET = 5  # the next: Azure NetApp Files' delegated subnet
HOME_POOL = "home"


def _home(parent: pulumi.Resource, name: str, args: StorageNetworkArgs, group: pulumi.Output[str],
          vnet: pulumi.Output[str]) -> tuple[pulumi.Output[str], pulumi.Output[str]]:
    """Azure NetApp Files for /home, as CycleCloud Workspace for Slurm creates its shared file system
    (Azure/cyclecloud-slurm-workspace bicep/anf.bicep): a NetApp account, one capacity pool of the
    volume's size, and one NFSv3 volume (unix security style, 0755, root access for the export's
    clients) in a subnet delegated to Microsoft.NetApp/volumes (learn.microsoft.com "Delegate a
    subnet to Azure NetApp Files"), exported to the VNet's block only. The volume is protected (the
    pool and account cannot be deleted while it exists). Returns the mount source
    (`<mount target ip>:/<creation token>`) and the volume's id."""
    spec = args.spec
    assert spec.cloud is not None and spec.home is not None
    tags = {"gpu-cluster": spec.name}
    subnet = network.Subnet(f"{name}-home-subnet", resource_group_name=group, virtual_network_name=vnet,
                            address_prefix=subnet_cidr(AZURE_HOME_SUBNET),
                            delegations=[{"name": "netapp", "service_name": "Microsoft.NetApp/volumes"}],
                            opts=child(parent))
    account = netapp.Account(f"{name}-netapp", account_name=f"{spec.first_name}-netapp", resource_group_name=group,
                             location=spec.cloud.region, tags=tags, opts=child(parent))
    size = spec.home.capacity_gib * 1024 ** 3  # whole TiB: the resolver rounds it up
    pool = netapp.CapacityPool(f"{name}-home-pool", account_name=account.name, pool_name=HOME_POOL,
                               resource_group_name=group, location=spec.cloud.region,
                               service_level=netapp.ServiceLevel.PREMIUM, size=size, tags=tags, opts=child(parent))
    token = f"{spec.first_name}-home"
    volume = netapp.CapacityPoolVolume(
        f"{name}-home", account_name=account.name, pool_name=HOME_POOL,
        volume_name="home", resource_group_name=group, location=spec.cloud.region, creation_token=token,
        service_level=netapp.ServiceLevel.PREMIUM, usage_threshold=size, subnet_id=subnet.id,
        protocol_types=["NFSv3"], security_style=netapp.SecurityStyle.UNIX, unix_permissions="0755",
        network_features=netapp.NetworkFeatures.STANDARD,
        export_policy={"rules": [{"rule_index": 1, "allowed_clients": CLOUD_BLOCK, "nfsv3": True, "nfsv41": False,
                                  "unix_read_write": True, "unix_read_only": False, "has_root_access": True,
                                  "cifs": False}]},
        tags=tags, opts=pulumi.ResourceOptions(parent=parent, protect=True, depends_on=[pool]))
    source = volume.mount_targets.apply(
        lambda targets: f"{targets[0].ip_address if targets else ''}:/{token}")
    return source, volume.id


def fabric(parent: pulumi.Resource, name: str, args: GpuFabricArgs) -> FabricAttachments:
    """InfiniBand comes with the scale set: no resource, one attachment naming the layout."""
    return FabricAttachments({"infiniband": NetworkAttachment("fabric", scope=args.management.scope)})


def kubernetes_networks(spec: ClusterSpec, storage: NetworkAttachment, fabric: FabricAttachments
                        ) -> pulumi.Output[str] | None:
    """No objects to apply: AKS's node pools reach InfiniBand through NVIDIA's Network Operator."""
    return None
