"""Azure node pool: one VM scale set of an ND v5 size, set up for InfiniBand: a single
placement group (InfiniBand does not span placement groups; CLOUD-PLACEMENT refuses more than
its 100 VMs), no overprovisioning (extra VMs would join the fabric), manual upgrades."""

from __future__ import annotations

import base64
from typing import TYPE_CHECKING

import pulumi
from pulumi_azure_native import compute, containerservice

from cluster import scheduler as k8s
from cluster.clouds.azure import host_prefix
from components.base import child

if TYPE_CHECKING:
    from components.node_pool import GpuNodePoolArgs

ADMIN_USER = "azureuser"


def image_reference(image: str) -> compute.ImageReferenceArgsDict:
    """`publisher:offer:sku:version` -> an image reference; anything else is an image resource id."""
    parts = image.split(":")
    if len(parts) == 4:
        publisher, offer, sku, version = parts
        return {"publisher": publisher, "offer": offer, "sku": sku, "version": version}
    return {"id": image}


def _nic(name: str, subnet: pulumi.Input[str], primary: bool, nsg: pulumi.Input[str] | None
         ) -> compute.VirtualMachineScaleSetNetworkConfigurationArgsDict:
    nic: compute.VirtualMachineScaleSetNetworkConfigurationArgsDict = {
        "name": name, "primary": primary, "enable_accelerated_networking": True,
        "ip_configurations": [{"name": name, "primary": primary, "subnet": {"id": subnet}}],
    }
    if nsg is not None:
        nic["network_security_group"] = {"id": nsg}
    return nic


def _custom_data(args: GpuNodePoolArgs) -> pulumi.Output[str] | None:
    """custom_data (base64; cloud-init runs a script given so) that mounts the shared file system."""
    script = args.storage.boot_script(args.spec)
    return script.apply(lambda text: base64.b64encode(text.encode()).decode()) if script is not None else None


def node_pool(parent: pulumi.Resource, name: str, args: GpuNodePoolArgs) -> pulumi.Output[str]:
    """The scale set; returns its id."""
    spec, pool = args.spec, args.pool
    assert pool.instance_type is not None and spec.cloud is not None and pool.capacity is not None
    if spec.scheduler.kind == "aks":
        return _agent_pool(parent, name, args)
    group = args.management.scope
    assert group is not None
    # Password login is off, so the key is the only way in: the resolver requires it on Azure
    # and refuses a `user:` prefix, which keyData does not take (cluster/sshkeys.py).
    assert spec.cloud.ssh_public_key is not None
    linux: compute.LinuxConfigurationArgsDict = {"disable_password_authentication": True, "ssh": {"public_keys": [{
        "path": f"/home/{ADMIN_USER}/.ssh/authorized_keys", "key_data": spec.cloud.ssh_public_key}]}}
    nsg = args.management.security_group_ids[0] if args.management.security_group_ids else None
    os_profile: compute.VirtualMachineScaleSetOSProfileArgsDict = {
        "computer_name_prefix": host_prefix(spec.first_name, pool.first_name), "admin_username": ADMIN_USER,
        "linux_configuration": linux}
    custom_data = _custom_data(args)
    if custom_data is not None:
        os_profile["custom_data"] = custom_data
    profile: compute.VirtualMachineScaleSetVMProfileArgsDict = {
        "os_profile": os_profile,
        "storage_profile": {"image_reference": image_reference(pool.capacity.image),
                            "os_disk": {"create_option": "FromImage", "caching": compute.CachingTypes.READ_WRITE,
                                        "managed_disk": {"storage_account_type": "Premium_LRS"}}},
        "network_profile": {"network_interface_configurations": [
            _nic("management", args.management.subnet_ids[0], True, nsg),
            _nic("storage", args.storage.subnet_ids[0], False, None),
        ]},
    }
    scale_set = compute.VirtualMachineScaleSet(
        f"{name}-vmss",
        resource_group_name=group,
        location=spec.cloud.region,
        sku={"name": pool.instance_type, "tier": "Standard", "capacity": pool.nodes},
        single_placement_group=True,
        overprovision=False,
        platform_fault_domain_count=1,
        orchestration_mode="Uniform",
        upgrade_policy={"mode": compute.UpgradeMode.MANUAL},
        virtual_machine_profile=profile,
        identity=({"type": compute.ResourceIdentityType.USER_ASSIGNED,
                   "user_assigned_identities": [args.management.identity]}
                  if args.management.identity is not None else None),
        tags={"gpu-cluster": spec.name, "gpu-cluster-pool": pool.name},
        opts=child(parent),
    )
    return scale_set.id


def _agent_pool(parent: pulumi.Resource, name: str, args: GpuNodePoolArgs) -> pulumi.Output[str]:
    """An AKS node pool of the ND size in the existing cluster (scheduler aks), in place of the
    scale set: a User pool of `nodes` Ubuntu nodes (the InfiniBand stack's OS: github.com/Azure/
    aks-rdma-infiniband, "Prerequisites", AKS node pools), labelled for the pool's Kueue flavor and
    tainted for GPU pods only. One node pool is one scale set and, with the subscription's
    AKSInfinibandSupport feature, one InfiniBand network. It joins the cluster's own network (a
    node pool's subnet must be in the cluster's VNet), not the stack's. Returns its id."""
    spec, pool = args.spec, args.pool
    scheduler = spec.scheduler
    created = args.management.kubernetes_cluster
    group = args.management.scope if created is not None else scheduler.resource_group
    assert scheduler.cluster is not None and group is not None
    agent_pool = containerservice.AgentPool(
        f"{name}-agentpool",
        resource_group_name=group,
        resource_name_=created if created is not None else scheduler.cluster,
        # a created cluster's pools share its node subnet (AKS: every pool of a cluster on a VNet of yours
        # names a subnet of that VNet, vnetSubnetID)
        vnet_subnet_id=args.management.subnet_ids[0] if created is not None else None,
        agent_pool_name=k8s.pool_name(spec, pool),
        mode=containerservice.AgentPoolMode.USER,
        os_type=containerservice.OSType.LINUX,
        os_sku=containerservice.OSSKU.UBUNTU,
        vm_size=pool.instance_type,
        count=pool.nodes,
        enable_node_public_ip=False,
        node_labels=k8s.node_labels(pool),
        node_taints=[f"{k8s.GPU_TAINT_KEY}={k8s.GPU_TAINT_VALUE}:NoSchedule"],
        tags={"gpu-cluster": spec.name, "gpu-cluster-pool": pool.name},
        opts=child(parent),
    )
    return agent_pool.id
