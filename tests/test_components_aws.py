"""AWS under the SDK's mocks: the launch template follows the instance's network cards."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from test_components_support import cloud_stack, of_type, one, run_program

from cluster.catalog import load_catalog


@pytest.fixture()
def program() -> Callable[..., Any]:
    return run_program


@pytest.mark.parametrize("instance_type, cards", [
    ("p5.48xlarge", 32), ("p5e.48xlarge", 32), ("p5en.48xlarge", 16), ("p6-b200.48xlarge", 8),
])
def test_one_efa_per_network_card(program: Callable[..., Any], instance_type: str, cards: int) -> None:
    outcome = program(cloud_stack("aws", instance_type))
    assert outcome.ok, outcome.errors
    interfaces = one(outcome, "LaunchTemplate").inputs["networkInterfaces"]
    efa = [nic for nic in interfaces if nic["interfaceType"] == "efa-only"]
    ena = [nic for nic in interfaces if nic["interfaceType"] == "interface"]
    assert len(efa) == cards == load_catalog().instance("aws", instance_type).fabric.count  # type: ignore[union-attr]
    assert sorted(int(nic["networkCardIndex"]) for nic in efa) == list(range(cards))
    assert len(interfaces) == cards + 1
    # Primary ENA on card 0 device 0; EFA-only on card 0 device 1, device 0 on every other card.
    assert [(nic["networkCardIndex"], nic["deviceIndex"]) for nic in ena] == [(0, 0)]
    assert {(int(nic["networkCardIndex"]), int(nic["deviceIndex"])) for nic in efa} == \
        {(0, 1)} | {(card, 0) for card in range(1, cards)}
    # The provider takes these flags as strings ("true" / "false" / unset).
    assert all(nic.get("associatePublicIpAddress") in (None, "false") for nic in interfaces)
    assert ena[0]["associatePublicIpAddress"] == "false"
    assert all(nic["deleteOnTermination"] == "true" for nic in interfaces)
    # One subnet per node, the auto scaling group's: EFA stays within a subnet.
    assert {nic["subnetId"] for nic in interfaces} == {"<t-fabric-subnet>"}
    assert one(outcome, "autoscaling/group:Group").inputs["vpcZoneIdentifiers"] == ["<t-fabric-subnet>"]
    assert all(nic["securityGroups"] == ["<t-fabric-efa-sg>"] for nic in efa)
    assert ena[0]["securityGroups"] == ["<t-management-sg>", "<t-storage-sg>", "<t-fabric-efa-sg>"]


def test_efa_group_allows_all_traffic_with_itself_only(program: Callable[..., Any]) -> None:
    outcome = program(cloud_stack("aws", "p5e.48xlarge", ssh_cidrs=["203.0.113.0/24"]))
    groups = {group.name: group.inputs for group in of_type(outcome, "SecurityGroup")}
    efa = groups["t-fabric-efa-sg"]
    for rule in efa["ingress"] + efa["egress"]:
        assert (rule["protocol"], rule["fromPort"], rule["toPort"], rule["self"]) == ("-1", 0, 0, True)
        assert not rule.get("cidrBlocks")
    management = groups["t-management-sg"]
    assert [(rule["fromPort"], rule["toPort"], rule["cidrBlocks"]) for rule in management["ingress"]] == \
        [(22, 22, ["203.0.113.0/24"])]
    open_to_world = [name for name, group in groups.items() for rule in group.get("ingress", [])
                     if "0.0.0.0/0" in rule.get("cidrBlocks", [])]
    assert open_to_world == []


def test_no_ssh_cidrs_means_no_ingress(program: Callable[..., Any]) -> None:
    outcome = program(cloud_stack("aws", "p5e.48xlarge"))
    management = next(group for group in of_type(outcome, "SecurityGroup") if group.name == "t-management-sg")
    assert management.inputs.get("ingress", []) == []


def test_capacity_block_sets_market_type_and_reservation(program: Callable[..., Any]) -> None:
    outcome = program(cloud_stack("aws", "p5e.48xlarge", nodes=16, market="capacity-block",
                                  reservation="cr-0123456789abcdef0"))
    template = one(outcome, "LaunchTemplate").inputs
    assert template["instanceMarketOptions"] == {"marketType": "capacity-block"}
    assert template["capacityReservationSpecification"] == {
        "capacityReservationTarget": {"capacityReservationId": "cr-0123456789abcdef0"}}
    group = one(outcome, "autoscaling/group:Group").inputs
    assert (group["minSize"], group["maxSize"], group["desiredCapacity"]) == (16, 16, 16)
    assert {subnet.inputs["availabilityZone"] for subnet in of_type(outcome, "Subnet")} == {"us-east-1a"}


@pytest.mark.parametrize("cloud", [
    {"market": "capacity-block", "reservation": "cr-0123456789abcdef0"},  # a Capacity Block
    {"reservation": "cr-0fedcba9876543210"},  # a targeted ODCR
])
def test_no_new_placement_group_with_a_reservation(program: Callable[..., Any], cloud: dict[str, Any]) -> None:
    """The reservation's capacity is not in a placement group made for the pool: launches into a
    new group fail for capacity while the reservation has room (ParallelCluster's
    PlacementGroupCapacityTypeValidator / PlacementGroupCapacityReservationValidator)."""
    outcome = program(cloud_stack("aws", "p5e.48xlarge", nodes=16, **cloud))
    assert outcome.ok, outcome.errors
    assert of_type(outcome, "PlacementGroup") == []
    assert "placementGroup" not in one(outcome, "autoscaling/group:Group").inputs


def test_without_a_reservation_the_pool_gets_a_cluster_placement_group(program: Callable[..., Any]) -> None:
    outcome = program(cloud_stack("aws", "p5e.48xlarge", nodes=16))
    placement = one(outcome, "PlacementGroup")
    assert placement.inputs["strategy"] == "cluster"
    assert one(outcome, "autoscaling/group:Group").inputs["placementGroup"] == f"<{placement.name}>"


def test_odcr_targets_the_reservation_on_demand(program: Callable[..., Any]) -> None:
    outcome = program(cloud_stack("aws", "p5en.48xlarge", reservation="cr-0fedcba9876543210"))
    template = one(outcome, "LaunchTemplate").inputs
    assert "instanceMarketOptions" not in template
    assert template["capacityReservationSpecification"]["capacityReservationTarget"] == {
        "capacityReservationId": "cr-0fedcba9876543210"}


def test_without_reservation_no_reservation_settings(program: Callable[..., Any]) -> None:
    template = one(program(cloud_stack("aws", "p5e.48xlarge")), "LaunchTemplate").inputs
    assert "capacityReservationSpecification" not in template and "instanceMarketOptions" not in template
    assert template["metadataOptions"]["httpTokens"] == "required"


def test_existing_vpc_and_subnets_are_used_not_created(program: Callable[..., Any]) -> None:
    outcome = program(cloud_stack("aws", "p5.48xlarge", vpc_id="vpc-0a1b2c3d4e5f60718",
                                  subnet_ids={"fabric": "subnet-0123456789abcdef0"}))
    assert of_type(outcome, "ec2/vpc:Vpc") == []
    assert sorted(subnet.name for subnet in of_type(outcome, "Subnet")) == ["t-management-subnet", "t-storage-subnet"]
    assert {subnet.inputs["vpcId"] for subnet in of_type(outcome, "Subnet")} == {"vpc-0a1b2c3d4e5f60718"}
    assert {group.inputs["vpcId"] for group in of_type(outcome, "SecurityGroup")} == {"vpc-0a1b2c3d4e5f60718"}
    interfaces = one(outcome, "LaunchTemplate").inputs["networkInterfaces"]
    assert {nic["subnetId"] for nic in interfaces} == {"subnet-0123456789abcdef0"}
    assert one(outcome, "autoscaling/group:Group").inputs["vpcZoneIdentifiers"] == ["subnet-0123456789abcdef0"]


@pytest.mark.parametrize("cloud, path, message", [
    ({"market": "capacity-block"}, "cloud.market", "capacity-block needs reservation"),
    ({"subnet_ids": {"fabric": "subnet-0123456789abcdef0"}}, "cloud", "subnet_ids need vpc_id"),
])
def test_cloud_settings_the_aws_target_cannot_deploy_are_schema_errors(
        program: Callable[..., Any], cloud: dict[str, Any], path: str, message: str) -> None:
    outcome = program(cloud_stack("aws", "p5e.48xlarge", **cloud))
    assert outcome.resources == []
    assert any(error.startswith(f"SCHEMA (error) at {path}:") and message in error for error in outcome.errors)
