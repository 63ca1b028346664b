"""GCP node pool: a HIGH_THROUGHPUT workload policy, instance template (gVNIC management and storage
NICs, then one NIC per GPU NIC: MRDMA on the RDMA VPC, gVNIC on the GPU VPCs), reservation
affinity when the stack names one, and a managed instance group of `nodes` VMs that carries the
workload policy and that `pulumi up` waits for."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import pulumi
import pulumi_gcp as gcp

from cluster.catalog import load_catalog
from cluster.sshkeys import split_user
from components.base import child

if TYPE_CHECKING:
    from components.node_pool import GpuNodePoolArgs

DEFAULT_IMAGE = "projects/ubuntu-os-accelerator-images/global/images/family/ubuntu-accelerator-2204-amd64-with-nvidia-580"
GPU_NIC_TYPE = {"rdma-vpc": "MRDMA", "multi-vpc": "GVNIC"}
# A3 Ultra and A4 boot only from Hyperdisk (cluster-toolkit a3ultra-vm.yaml: disk_type
# hyperdisk-balanced); A3 High and Mega take Persistent Disk.
BOOT_DISK_TYPE = {"rdma-vpc": "hyperdisk-balanced", "multi-vpc": "pd-balanced"}


def network_interfaces(layout: str, other_nics: int, management: pulumi.Input[str], storage: pulumi.Input[str],
                       gpu_subnets: Sequence[pulumi.Input[str]]) -> list[gcp.compute.InstanceTemplateNetworkInterfaceArgsDict]:
    """Management gVNIC, storage gVNIC when the machine has a second one, then the GPU NICs."""
    interfaces: list[gcp.compute.InstanceTemplateNetworkInterfaceArgsDict] = [{"subnetwork": management, "nic_type": "GVNIC"}]
    if other_nics >= 2:
        interfaces.append({"subnetwork": storage, "nic_type": "GVNIC"})
    interfaces += [{"subnetwork": subnet, "nic_type": GPU_NIC_TYPE[layout]} for subnet in gpu_subnets]
    return interfaces


def node_pool(parent: pulumi.Resource, name: str, args: GpuNodePoolArgs) -> pulumi.Output[str]:
    """Placement policy, instance template and managed instance group; returns the group's id."""
    spec, pool, capacity = args.spec, args.pool, args.pool.capacity
    assert pool.instance_type is not None and spec.cloud is not None and capacity is not None
    instance = load_catalog().instance("gcp", pool.instance_type)
    assert instance is not None and instance.layout is not None
    fabric = args.fabric.layouts[instance.layout]
    labels = {"gpu-cluster": spec.name, "gpu-cluster-pool": pool.name}
    # A workload policy of type HIGH_THROUGHPUT on the managed instance group, not a compact
    # placement policy in its template: Google's way to place A3 High / Mega / Ultra and A4 VMs
    # of a MIG close together (cloud.google.com/compute/docs/instance-groups/about-workload-policies
    # and create-workload-policies; pulumi-gcp ResourcePolicy.workload_policy and
    # InstanceGroupManager.resource_policies.workload_policy, a full or partial URL: the
    # policy's id is `projects/<p>/regions/<r>/resourcePolicies/<name>`).
    placement = gcp.compute.ResourcePolicy(
        f"{name}-placement", region=spec.cloud.region,
        workload_policy={"type": "HIGH_THROUGHPUT"}, opts=child(parent))
    reservation: gcp.compute.InstanceTemplateReservationAffinityArgsDict = {"type": "ANY_RESERVATION"}
    if capacity.reservation:
        reservation = {"type": "SPECIFIC_RESERVATION", "specific_reservation": {
            "key": "compute.googleapis.com/reservation-name", "values": [capacity.reservation]}}
    scheduling: gcp.compute.InstanceTemplateSchedulingArgsDict = {"on_host_maintenance": "TERMINATE", "automatic_restart": True}
    if capacity.market == "spot":
        scheduling = {"on_host_maintenance": "TERMINATE", "automatic_restart": False, "provisioning_model": "SPOT",
                      "preemptible": True}
    other = instance.other_nics.count if instance.other_nics else 1
    metadata = {"ssh-keys": gcp_ssh_keys(spec.cloud.ssh_public_key)} if spec.cloud.ssh_public_key else {}
    template = gcp.compute.InstanceTemplate(
        f"{name}-template",
        machine_type=pool.instance_type,
        disks=[{"boot": True, "auto_delete": True, "source_image": spec.cloud.image or DEFAULT_IMAGE,
                "disk_size_gb": 200, "disk_type": BOOT_DISK_TYPE[instance.layout]}],
        network_interfaces=network_interfaces(instance.layout, other, args.management.subnet_ids[0],
                                              args.storage.subnet_ids[0],
                                              list(fabric.subnets_in(capacity.zone)[:instance.fabric.count])),
        reservation_affinity=reservation,
        scheduling=scheduling,
        metadata=metadata,
        labels=labels,
        opts=child(parent),
    )
    group = gcp.compute.InstanceGroupManager(
        f"{name}-group",
        base_instance_name=f"{spec.name}-{pool.name}",
        zone=capacity.zone,
        versions=[{"instance_template": template.id, "name": "primary"}],
        target_size=pool.nodes,
        resource_policies={"workload_policy": placement.id},
        # `pulumi up` returns only when every VM is running (STABLE), so a missing reservation or
        # quota fails the update instead of leaving an empty group that looks deployed.
        wait_for_instances=True,
        wait_for_instances_status="STABLE",
        opts=child(parent),
    )
    return group.id


GCP_SSH_USER = "gpu-cluster"  # the login a key without `user:` gets on GCP


def gcp_ssh_keys(key: str) -> str:
    """The `ssh-keys` metadata entry: GCP reads `USERNAME:KEY_VALUE` and ignores a line without the
    user (cloud.google.com/compute/docs/connect/add-ssh-keys, "Add SSH keys to VM metadata"); a key
    given without one logs in as GCP_SSH_USER."""
    user, bare = split_user(key)
    return f"{user or GCP_SSH_USER}:{bare}"
