"""GCP under the SDK's mocks: RDMA VPC with a subnet per GPU NIC, or one VPC per GPU NIC."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from test_components_support import cloud_stack, of_type, one, run_program


@pytest.fixture()
def program() -> Callable[..., Any]:
    return run_program


@pytest.mark.parametrize("instance_type", ["a3-ultragpu-8g", "a4-highgpu-8g"])
def test_rdma_vpc_has_a_subnet_per_gpu_nic(program: Callable[..., Any], instance_type: str) -> None:
    outcome = program(cloud_stack("gcp", instance_type, reservation="my-block"))
    assert outcome.ok, outcome.errors
    networks = {network.name: network.inputs for network in of_type(outcome, "compute/network:Network")}
    assert set(networks) == {"t-management-vpc", "t-storage-vpc", "t-fabric-rdma-vpc"}
    assert networks["t-fabric-rdma-vpc"]["networkProfile"] == \
        "projects/<project>/global/networkProfiles/us-central1-b-vpc-roce"
    assert {network["mtu"] for network in networks.values()} == {8896}
    assert all(network["autoCreateSubnetworks"] is False for network in networks.values())
    rdma_subnets = [subnet for subnet in of_type(outcome, "Subnetwork")
                    if subnet.inputs["network"] == "<t-fabric-rdma-vpc>"]
    assert len(rdma_subnets) == 8
    assert len({subnet.inputs["ipCidrRange"] for subnet in of_type(outcome, "Subnetwork")}) == 10
    template = one(outcome, "InstanceTemplate").inputs
    nics = template["networkInterfaces"]
    assert [nic["nicType"] for nic in nics] == ["GVNIC", "GVNIC"] + ["MRDMA"] * 8
    assert [nic["subnetwork"] for nic in nics[:2]] == ["<t-management-subnet>", "<t-storage-subnet>"]
    assert sorted(nic["subnetwork"] for nic in nics[2:]) == sorted(f"<{subnet.name}>" for subnet in rdma_subnets)
    assert template["reservationAffinity"] == {"type": "SPECIFIC_RESERVATION", "specificReservation": {
        "key": "compute.googleapis.com/reservation-name", "values": ["my-block"]}}
    assert template["scheduling"]["onHostMaintenance"] == "TERMINATE"
    assert template["disks"][0]["diskType"] == "hyperdisk-balanced"  # A3 Ultra / A4 boot from Hyperdisk only
    assert not any("accessConfigs" in nic for nic in nics)  # no external IPs
    group = one(outcome, "InstanceGroupManager").inputs
    assert group["targetSize"] == 4 and group["zone"] == "us-central1-b"
    assert group["versions"][0]["instanceTemplate"] == "<t-gpu-template>"


def test_no_firewall_rule_on_the_rdma_vpc(program: Callable[..., Any]) -> None:
    """A RoCE VPC takes only RDMA_ROCE_POLICY firewall policies and admits all traffic itself; a
    plain firewall rule on it fails the deploy (Cluster Toolkit gpu-rdma-vpc: firewall_rules
    cannot be specified)."""
    outcome = program(cloud_stack("gcp", "a3-ultragpu-8g"))
    assert outcome.ok, outcome.errors
    rules = {rule.name: rule.inputs["network"] for rule in of_type(outcome, "Firewall")}
    assert "<t-fabric-rdma-vpc>" not in rules.values()
    assert set(rules.values()) == {"<t-management-vpc>", "<t-storage-vpc>"}  # the gVNIC VPCs keep theirs


@pytest.mark.parametrize("instance_type", ["a3-ultragpu-8g", "a4-highgpu-8g", "a3-megagpu-8g", "a3-highgpu-8g"])
def test_mig_carries_a_high_throughput_workload_policy_and_waits(program: Callable[..., Any],
                                                                 instance_type: str) -> None:
    """Google places GPU VMs of a MIG with a workload policy on the group (about-workload-policies),
    not a compact placement policy in the template; `pulumi up` waits for the VMs."""
    # A3 High is below 200 Gbps per GPU: FAB-GPU-NIC suppressed, the placement is what is tested.
    outcome = program({**cloud_stack("gcp", instance_type), "policy": {"suppress": ["FAB-GPU-NIC"]}})
    assert outcome.ok, outcome.errors
    policy = one(outcome, "ResourcePolicy")
    assert policy.inputs["workloadPolicy"] == {"type": "HIGH_THROUGHPUT"}
    assert "groupPlacementPolicy" not in policy.inputs and policy.inputs["region"] == "us-central1"
    assert "resourcePolicies" not in one(outcome, "InstanceTemplate").inputs
    group = one(outcome, "InstanceGroupManager").inputs
    assert group["resourcePolicies"] == {"workloadPolicy": f"<{policy.name}>"}
    assert group["waitForInstances"] is True and group["waitForInstancesStatus"] == "STABLE"


def test_a3_mega_uses_one_vpc_per_gpu_nic(program: Callable[..., Any]) -> None:
    outcome = program(cloud_stack("gcp", "a3-megagpu-8g"))
    assert outcome.ok, outcome.errors
    gpu_vpcs = [network for network in of_type(outcome, "compute/network:Network") if network.name.startswith("t-fabric-gpu")]
    assert len(gpu_vpcs) == 8
    assert not any("networkProfile" in network.inputs for network in gpu_vpcs)
    nics = one(outcome, "InstanceTemplate").inputs["networkInterfaces"]
    # One gVNIC for the system network (A3 Mega has one), then eight GPU NICs, one per GPU VPC.
    assert len(nics) == 9 and {nic["nicType"] for nic in nics} == {"GVNIC"}
    gpu_subnets = {subnet.name: subnet.inputs["network"] for subnet in of_type(outcome, "Subnetwork")}
    used = [nic["subnetwork"].strip("<>") for nic in nics[1:]]
    assert len({gpu_subnets[name] for name in used}) == 8
    assert one(outcome, "InstanceTemplate").inputs["reservationAffinity"] == {"type": "ANY_RESERVATION"}


def test_ssh_only_from_configured_cidrs(program: Callable[..., Any]) -> None:
    outcome = program(cloud_stack("gcp", "a3-ultragpu-8g", ssh_cidrs=["198.51.100.0/24"]))
    rules = {rule.name: rule.inputs for rule in of_type(outcome, "Firewall")}
    assert rules["t-management-ssh"]["sourceRanges"] == ["198.51.100.0/24"]
    assert rules["t-management-ssh"]["allows"] == [{"protocol": "tcp", "ports": ["22"]}]
    assert all("0.0.0.0/0" not in rule["sourceRanges"] for rule in rules.values())


def test_mixed_pools_get_each_layout_and_keep_their_own_nics(program: Callable[..., Any]) -> None:
    data = cloud_stack("gcp", "a3-ultragpu-8g")
    data["node_pools"].append({"name": "mega", "nodes": 2, "instance_type": "a3-megagpu-8g"})
    outcome = program(data)
    assert outcome.ok, outcome.errors
    templates = {template.name: template.inputs["networkInterfaces"] for template in of_type(outcome, "InstanceTemplate")}
    assert [nic["nicType"] for nic in templates["t-gpu-template"]].count("MRDMA") == 8
    assert all("rdma" not in nic["subnetwork"] for nic in templates["t-mega-template"])
    assert len(of_type(outcome, "compute/network:Network")) == 3 + 8  # management, storage, RDMA + 8 GPU VPCs


def test_ssh_keys_metadata_carries_the_user_gcp_requires() -> None:
    from components.gcp.node_pool import GCP_SSH_USER, gcp_ssh_keys

    key = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIGdwdS1jbHVzdGVyIGV4YW1wbGUga2V5LCByZXBsYWNl me@laptop"
    assert gcp_ssh_keys(key) == f"{GCP_SSH_USER}:{key}"
    assert gcp_ssh_keys(f"alice:{key}") == f"alice:{key}"


@pytest.mark.parametrize("instance_type, bound", [("a3-ultragpu-8g", True), ("a4-highgpu-8g", True),
                                                  ("a3-megagpu-8g", False)])
def test_a_reserved_pool_is_bound_to_its_reservation_without_an_external_policy(
        program: Callable[..., Any], instance_type: str, bound: bool) -> None:
    """Cluster Toolkit: RESERVATION_BOUND with a reservation (a3ultra-vm.yaml, a4high-vm.yaml), no
    external placement policy on a reservation (Slurm resume.py, gke-a3-ultragpu)."""
    outcome = program({**cloud_stack("gcp", instance_type, reservation="my-block"),
                       "policy": {"suppress": ["FAB-GPU-NIC"]}})
    assert outcome.ok, outcome.errors
    template = one(outcome, "InstanceTemplate").inputs
    assert template["reservationAffinity"]["type"] == "SPECIFIC_RESERVATION"
    assert template["scheduling"].get("provisioningModel") == ("RESERVATION_BOUND" if bound else None)
    assert template["scheduling"]["onHostMaintenance"] == "TERMINATE"
    assert of_type(outcome, "ResourcePolicy") == []
    assert "resourcePolicies" not in one(outcome, "InstanceGroupManager").inputs


def test_spot_without_a_reservation_keeps_spot(program: Callable[..., Any]) -> None:
    outcome = program(cloud_stack("gcp", "a3-ultragpu-8g", market="spot"))
    scheduling = one(outcome, "InstanceTemplate").inputs["scheduling"]
    assert scheduling["provisioningModel"] == "SPOT" and scheduling["automaticRestart"] is False
    assert one(outcome, "ResourcePolicy").inputs["workloadPolicy"] == {"type": "HIGH_THROUGHPUT"}


@pytest.mark.parametrize("cloud", [{}, {"reservation": "my-block"}])
def test_a_template_change_never_rolls_the_gpu_vms_with_surge(program: Callable[..., Any],
                                                               cloud: dict[str, Any]) -> None:
    """Without an update policy a MIG rolls every VM on a template change, creating surge VMs a
    reservation has no room for: opportunistic, no surge, recreated under the same name."""
    group = one(program(cloud_stack("gcp", "a3-ultragpu-8g", **cloud)), "InstanceGroupManager").inputs
    assert group["updatePolicy"] == {"type": "OPPORTUNISTIC", "minimalAction": "REPLACE",
                                     "replacementMethod": "RECREATE", "maxSurgeFixed": 0, "maxUnavailableFixed": 1}
