"""GCP node pool: a HIGH_THROUGHPUT workload policy unless the pool draws on a reservation, an
instance template (gVNIC management and storage NICs, then one NIC per GPU NIC: MRDMA on the RDMA
VPC, gVNIC on the GPU VPCs) bound to the pool's reservation when it has one, and a managed
instance group of `nodes` VMs that `pulumi up` waits for and that never rolls its VMs on its own."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import pulumi
import pulumi_gcp as gcp

from cluster import scheduler as k8s
from cluster.catalog import load_catalog
from cluster.spec import PoolCapacity
from cluster.sshkeys import split_user
from components.base import child

if TYPE_CHECKING:
    from components.node_pool import GpuNodePoolArgs

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


# A template change (an image, an SSH key) must not roll GPU VMs by itself, nor create a VM beside
# the one it replaces: a reservation has no room for a surge VM, and GPU quota rarely does.
# OPPORTUNISTIC applies the new template only when a VM is recreated anyway; RECREATE with no surge
# deletes a VM before making its replacement under the same name (Cluster Toolkit's HTCondor
# access point MIG: "max_surge_fixed = 0 # must be 0 to preserve hostnames", replacement_method
# RECREATE, type OPPORTUNISTIC by default, community/modules/scheduler/htcondor-access-point/main.tf
# at 1047080375af; pulumi-gcp InstanceGroupManagerUpdatePolicy: RECREATE needs max_unavailable > 0).
UPDATE_POLICY: gcp.compute.InstanceGroupManagerUpdatePolicyArgsDict = {
    "type": "OPPORTUNISTIC", "minimal_action": "REPLACE", "replacement_method": "RECREATE",
    "max_surge_fixed": 0, "max_unavailable_fixed": 1,
}
# Machine series sold through dense (blocks, calendar) reservations: a VM on one is bound to it.
BOUND_LAYOUTS = ("rdma-vpc",)


def _capacity(capacity: PoolCapacity, layout: str) -> tuple[gcp.compute.InstanceTemplateReservationAffinityArgsDict,
                                                             gcp.compute.InstanceTemplateSchedulingArgsDict]:
    """The template's reservation affinity and scheduling, as Cluster Toolkit sets them: with a
    reservation, SPECIFIC_RESERVATION and, for A3 Ultra / A4, provisioning model RESERVATION_BOUND
    (examples/machine-learning/a3-ultragpu-8g/a3ultra-vm.yaml and a4-highgpu-8g/a4high-vm.yaml
    `provisioning_model: RESERVATION_BOUND`; the Slurm controller's resume.py sets it for a dense
    reservation); SPOT only without one; otherwise standard on-demand."""
    scheduling: gcp.compute.InstanceTemplateSchedulingArgsDict = {"on_host_maintenance": "TERMINATE",
                                                                  "automatic_restart": True}
    if capacity.reservation:
        if layout in BOUND_LAYOUTS:
            scheduling["provisioning_model"] = "RESERVATION_BOUND"
        return ({"type": "SPECIFIC_RESERVATION", "specific_reservation": {
            "key": "compute.googleapis.com/reservation-name", "values": [capacity.reservation]}}, scheduling)
    if capacity.market == "spot":
        scheduling = {"on_host_maintenance": "TERMINATE", "automatic_restart": False, "provisioning_model": "SPOT",
                      "preemptible": True}
    return {"type": "ANY_RESERVATION"}, scheduling


def node_pool(parent: pulumi.Resource, name: str, args: GpuNodePoolArgs) -> pulumi.Output[str]:
    """Placement policy (without a reservation), instance template and managed instance group;
    returns the group's id.

    Without a reservation a HIGH_THROUGHPUT workload policy on the group places its VMs close
    together: Google's way for A3 High / Mega / Ultra and A4 MIGs
    (cloud.google.com/compute/docs/instance-groups/about-workload-policies; pulumi-gcp
    ResourcePolicy.workload_policy and InstanceGroupManager.resource_policies.workload_policy). With
    one, none: the reservation's own blocks place the VMs, and "vanilla reservations don't support
    external policies" (Cluster Toolkit's Slurm resume.py update_reservation_props; its
    gke-a3-ultragpu blueprint sets the reservation affinity and no placement policy)."""
    spec, pool, capacity = args.spec, args.pool, args.pool.capacity
    assert pool.instance_type is not None and spec.cloud is not None and capacity is not None
    instance = load_catalog().instance("gcp", pool.instance_type)
    assert instance is not None and instance.layout is not None
    fabric = args.fabric.layouts[instance.layout]
    if spec.scheduler.kind == "gke":
        return _gke_node_pool(parent, name, args)
    labels = {"gpu-cluster": spec.name, "gpu-cluster-pool": pool.name}
    placement = None if capacity.reservation else gcp.compute.ResourcePolicy(
        f"{name}-placement", region=spec.cloud.region,
        workload_policy={"type": "HIGH_THROUGHPUT"}, opts=child(parent))
    reservation, scheduling = _capacity(capacity, instance.layout)
    other = instance.other_nics.count if instance.other_nics else 1
    # OS Login (IAM-granted logins, Cluster Toolkit's vm-instance default `enable_oslogin = ENABLE`)
    # unless the stack gives a key, which lives in the ssh-keys metadata OS Login would ignore.
    metadata: dict[str, pulumi.Input[str]] = (
        {"ssh-keys": gcp_ssh_keys(spec.cloud.ssh_public_key)} if spec.cloud.ssh_public_key
        else {"enable-oslogin": "TRUE"})
    mount = args.storage.boot_script(spec)
    if mount is not None:
        metadata["startup-script"] = mount  # mounts the shared file system at every boot
    template = gcp.compute.InstanceTemplate(
        f"{name}-template",
        machine_type=pool.instance_type,
        disks=[{"boot": True, "auto_delete": True, "source_image": capacity.image,
                "disk_size_gb": 200, "disk_type": BOOT_DISK_TYPE[instance.layout]}],
        network_interfaces=network_interfaces(instance.layout, other, args.management.subnet_ids[0],
                                              args.storage.subnet_ids[0],
                                              list(fabric.subnets_in(capacity.zone)[:instance.fabric.count])),
        reservation_affinity=reservation,
        scheduling=scheduling,
        metadata=metadata,
        service_account=({"email": args.management.identity, "scopes": ["cloud-platform"]}
                         if args.management.identity is not None else None),
        # Shielded VM: vTPM and integrity monitoring. Secure Boot stays off: an NVIDIA or fabric
        # driver built on the node (DKMS) is unsigned and would not load.
        shielded_instance_config={"enable_secure_boot": False, "enable_vtpm": True,
                                  "enable_integrity_monitoring": True},
        labels=labels,
        opts=child(parent),
    )
    group = gcp.compute.InstanceGroupManager(
        f"{name}-group",
        base_instance_name=f"{spec.first_name}-{pool.first_name}",  # host names survive a rename
        zone=capacity.zone,
        versions=[{"instance_template": template.id, "name": "primary"}],
        target_size=pool.nodes,
        resource_policies={"workload_policy": placement.id} if placement is not None else None,
        update_policy=UPDATE_POLICY,
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


def _name(resource_id: pulumi.Input[str]) -> pulumi.Output[str]:
    """A network's or subnetwork's name from its id (`projects/.../subnetworks/<name>`)."""
    return pulumi.Output.from_input(resource_id).apply(lambda value: value.rsplit("/", 1)[-1])


def _gke_node_pool(parent: pulumi.Resource, name: str, args: GpuNodePoolArgs) -> pulumi.Output[str]:
    """A GKE node pool of the pool's machines in the existing cluster (scheduler gke), in place of
    the template and MIG: the storage gVNIC and one interface per RDMA subnet as additional node
    networks (Cluster Toolkit examples/gke-a3-ultragpu/gke-a3-ultragpu.yaml, a3-ultragpu-pool:
    `additional_networks` of the gVNIC VPC and the RDMA VPC's subnets, `guest_accelerator`, the
    reservation affinity); the cluster itself must have multi-networking on and the Network objects
    the export writes. GKE taints the GPU nodes nvidia.com/gpu itself. Returns the node pool's id."""
    spec, pool, capacity = args.spec, args.pool, args.pool.capacity
    assert pool.instance_type is not None and capacity is not None and spec.scheduler.cluster is not None
    instance = load_catalog().instance("gcp", pool.instance_type)
    assert instance is not None and instance.layout is not None and instance.gke_accelerator
    fabric = args.fabric.layouts[instance.layout]
    networks: list[gcp.container.NodePoolNetworkConfigAdditionalNodeNetworkConfigArgsDict] = []
    if (instance.other_nics.count if instance.other_nics else 1) >= 2 and args.storage.network_id is not None:
        networks.append({"network": _name(args.storage.network_id), "subnetwork": _name(args.storage.subnet_ids[0])})
    assert fabric.network_id is not None
    networks += [{"network": _name(fabric.network_id), "subnetwork": _name(subnet)}
                 for subnet in fabric.subnets_in(capacity.zone)[:instance.fabric.count]]
    reservation: gcp.container.NodePoolNodeConfigReservationAffinityArgsDict = (
        {"consume_reservation_type": "SPECIFIC_RESERVATION", "key": "compute.googleapis.com/reservation-name",
         "values": [capacity.reservation]} if capacity.reservation else {"consume_reservation_type": "ANY_RESERVATION"})
    node_pool = gcp.container.NodePool(
        f"{name}-nodepool",
        name=k8s.pool_name(spec, pool),
        cluster=args.management.kubernetes_cluster or spec.scheduler.cluster,  # the stack's own when it made one
        location=spec.scheduler.location,
        node_locations=[capacity.zone] if capacity.zone else None,
        node_count=pool.nodes,
        node_config={
            "machine_type": pool.instance_type,
            "disk_size_gb": 200, "disk_type": BOOT_DISK_TYPE[instance.layout],
            "gvnic": {"enabled": True},
            "guest_accelerators": [{"type": instance.gke_accelerator, "count": instance.gpus,
                                    "gpu_driver_installation_config": {"gpu_driver_version": "LATEST"}}],
            "labels": k8s.node_labels(pool),
            "reservation_affinity": reservation,
            "spot": capacity.market == "spot" and not capacity.reservation,
            "service_account": args.management.identity,
            "oauth_scopes": ["https://www.googleapis.com/auth/cloud-platform"],
            "shielded_instance_config": {"enable_secure_boot": False, "enable_integrity_monitoring": True},
        },
        # private nodes: no external IP on any GPU node, whatever the cluster's default
        network_config={"additional_node_network_configs": networks, "enable_private_nodes": True},
        # as the MIG's update policy: never a surge node (a reservation has no room for one), and
        # no automatic upgrade rolling the GPU nodes under a running job
        upgrade_settings={"max_surge": 0, "max_unavailable": 1},
        management={"auto_upgrade": False, "auto_repair": True},
        opts=child(parent),
    )
    return node_pool.id
