"""Zone, market and reservation per cloud pool: the reservation a pool draws on holds one instance
type in one zone and a number of instances (AWS EC2 guide, capacity-reservations-launch;
ParallelCluster's CapacityReservationValidator / CapacityReservationSizeValidator), and each
pool's group is built from its own settings."""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Any

import pytest
from conftest import ROOT, run
from test_components_support import cloud_stack, of_type, run_program

from cluster.pipeline import Valid

CLOUD_STACKS = ROOT / "tests" / "data" / "cloud"


def findings(data: dict[str, Any]) -> list[tuple[str, str, str]]:
    return [(finding.rule, str(finding.severity), finding.path) for finding in run(data).findings]


def aws_pools(*pools: dict[str, Any], **cloud: Any) -> dict[str, Any]:
    data = cloud_stack("aws", "p5.48xlarge", **cloud)
    data["node_pools"] = list(pools)
    return data


P5 = {"name": "h100", "nodes": 4, "instance_type": "p5.48xlarge"}
P5EN = {"name": "h200", "nodes": 4, "instance_type": "p5en.48xlarge"}
B200 = {"name": "b200", "nodes": 4, "instance_type": "p6-b200.48xlarge"}


def with_cloud(pool: dict[str, Any], **cloud: Any) -> dict[str, Any]:
    return {**pool, "cloud": cloud}


@pytest.mark.parametrize("data, expected", [
    # One cluster-wide ODCR under pools of three types: two of them can never launch.
    (aws_pools(P5, P5EN, B200, reservation="cr-0123456789abcdef0"),
     [("SCHEMA", "error", "cloud.reservation")] * 2),
    # Per pool, each its own: fine.
    (aws_pools(with_cloud(P5, reservation="cr-0123456789abcdef0"), with_cloud(P5EN, reservation="cr-0123456789abcdef1")),
     []),
    # Two pools of one type on one reservation in two zones.
    (aws_pools(with_cloud(P5, reservation="cr-0123456789abcdef0"),
               with_cloud({**P5, "name": "more"}, reservation="cr-0123456789abcdef0", zone="us-east-1b")),
     [("SCHEMA", "error", "node_pools[1].cloud.zone")]),
    # A described reservation: its type, zone and size against the pools that draw on it.
    (aws_pools(P5, reservation={"id": "cr-0123456789abcdef0", "instance_type": "p5en.48xlarge"}),
     [("SCHEMA", "error", "cloud.reservation.instance_type")]),
    (aws_pools(P5, reservation={"id": "cr-0123456789abcdef0", "zone": "us-east-1c"}),
     [("SCHEMA", "error", "cloud.reservation.zone")]),
    (aws_pools(P5, {**P5, "name": "more"}, reservation={"id": "cr-0123456789abcdef0", "nodes": 6}),
     [("SCHEMA", "error", "cloud.reservation")]),
    (aws_pools(P5, {**P5, "name": "more"}, reservation={"id": "cr-0123456789abcdef0", "nodes": 8,
                                                        "instance_type": "p5.48xlarge", "zone": "us-east-1a"}), []),
    # A Capacity Block is the pool's: needs the pool's reservation, and exists on AWS only.
    (aws_pools(P5, with_cloud(P5EN, market="capacity-block")), [("SCHEMA", "error", "node_pools[1].cloud.market")]),
    ({**cloud_stack("gcp", "a3-ultragpu-8g", market="capacity-block", reservation="r")},
     [("SCHEMA", "error", "cloud.market")]),
    # Zones are the region's.
    (aws_pools(with_cloud(P5, zone="us-west-2a")), [("SCHEMA", "error", "node_pools[0].cloud.zone")]),
    (cloud_stack("gcp", "a3-ultragpu-8g", zone="us-central1b"), [("SCHEMA", "error", "cloud.zone")]),
    # Azure buys the scale set on demand: reservation, market and zone are said to be unused.
    (cloud_stack("azure", "Standard_ND96isr_H200_v5", reservation="r", market="spot"),
     [("SPEC-IGNORED", "warning", "cloud.market"), ("SPEC-IGNORED", "warning", "cloud.reservation")]),
])
def test_reservations_against_the_pools_that_draw_on_them(data: dict[str, Any],
                                                           expected: list[tuple[str, str, str]]) -> None:
    assert sorted(findings(data)) == sorted(expected)


def test_the_message_names_both_pools_and_the_fix() -> None:
    result = run(aws_pools(P5, P5EN, reservation="cr-0123456789abcdef0"))
    (finding,) = result.findings
    assert "pools h100 (p5.48xlarge) and h200 (p5en.48xlarge) draw on one reservation, cr-0123456789abcdef0" \
        in finding.message
    assert "node_pools[1].cloud.reservation" in finding.hint


def test_each_pool_gets_its_own_market_reservation_and_zone() -> None:
    outcome = run_program(aws_pools(
        with_cloud(P5, reservation="cr-0123456789abcdef0"),
        with_cloud(P5EN, market="spot"),
        with_cloud(B200, zone="us-east-1d", market="capacity-block", reservation="cr-0123456789abcdef2")))
    assert outcome.ok, outcome.errors
    templates = {item.name: item.inputs for item in of_type(outcome, "LaunchTemplate")}
    assert templates["t-h100-template"]["capacityReservationSpecification"] == {
        "capacityReservationTarget": {"capacityReservationId": "cr-0123456789abcdef0"}}
    assert "instanceMarketOptions" not in templates["t-h100-template"]
    assert templates["t-h200-template"]["instanceMarketOptions"] == {"marketType": "spot"}
    assert "capacityReservationSpecification" not in templates["t-h200-template"]
    assert templates["t-b200-template"]["instanceMarketOptions"] == {"marketType": "capacity-block"}
    # Only the unreserved pool gets a new cluster placement group.
    assert [group.name for group in of_type(outcome, "PlacementGroup")] == ["t-h200-placement"]
    # The B200 pool's interfaces and group sit in a fabric subnet of its own zone.
    subnets = {item.name: item.inputs for item in of_type(outcome, "ec2/subnet:Subnet")}
    assert subnets["t-fabric-us-east-1d-subnet"]["availabilityZone"] == "us-east-1d"
    assert subnets["t-fabric-us-east-1d-subnet"]["cidrBlock"] not in {
        subnet["cidrBlock"] for name, subnet in subnets.items() if name != "t-fabric-us-east-1d-subnet"}
    groups = {item.name: item.inputs for item in of_type(outcome, "autoscaling/group:Group")}
    assert groups["t-b200-group"]["vpcZoneIdentifiers"] == ["<t-fabric-us-east-1d-subnet>"]
    assert groups["t-h100-group"]["vpcZoneIdentifiers"] == ["<t-fabric-subnet>"]
    assert {nic["subnetId"] for nic in templates["t-b200-template"]["networkInterfaces"]} == \
        {"<t-fabric-us-east-1d-subnet>"}


def test_gcp_pools_in_two_zones_get_an_rdma_vpc_each() -> None:
    data = cloud_stack("gcp", "a3-ultragpu-8g")
    data["node_pools"].append({"name": "west", "nodes": 2, "instance_type": "a4-highgpu-8g",
                               "cloud": {"zone": "us-central1-c", "reservation": "a4-block"}})
    outcome = run_program(data)
    assert outcome.ok, outcome.errors
    profiles = {item.name: item.inputs.get("networkProfile") for item in of_type(outcome, "compute/network:Network")}
    assert profiles["t-fabric-rdma-vpc"].endswith("/us-central1-b-vpc-roce")
    assert profiles["t-fabric-rdma-us-central1-c-vpc"].endswith("/us-central1-c-vpc-roce")
    groups = {item.name: item.inputs for item in of_type(outcome, "InstanceGroupManager")}
    assert groups["t-west-group"]["zone"] == "us-central1-c" and groups["t-gpu-group"]["zone"] == "us-central1-b"
    templates = {item.name: item.inputs for item in of_type(outcome, "InstanceTemplate")}
    west = [nic["subnetwork"] for nic in templates["t-west-template"]["networkInterfaces"] if nic["nicType"] == "MRDMA"]
    assert west and all(subnet.startswith("<t-fabric-rdma-us-central1-c-nic") for subnet in west)
    assert templates["t-west-template"]["reservationAffinity"]["specificReservation"]["values"] == ["a4-block"]
    assert templates["t-gpu-template"]["reservationAffinity"] == {"type": "ANY_RESERVATION"}


@pytest.mark.parametrize("stack, code, path", [
    ("aws-three-types", 2, "cloud.reservation"),
    ("aws-odcr-too-small", 2, "cloud.reservation"),
    ("aws-spot-reservation", 2, "cloud.reservation"),
    ("aws-three-reservations", 0, None),
    ("azure-ndh100-2x60", 0, None),
])
def test_review_stacks_through_the_cli(stack: str, code: int, path: str | None) -> None:
    """The stack files as a user runs them: exit 2 with the finding, never a traceback."""
    done = subprocess.run([sys.executable, "-m", "cluster", "validate", str(CLOUD_STACKS / f"Pulumi.{stack}.yaml"),
                           "--format", "json"], capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert done.returncode == code, done.stdout + done.stderr
    assert "Traceback" not in done.stderr
    report = json.loads(done.stdout)
    assert {finding["path"] for finding in report["findings"] if finding["severity"] == "error"} == \
        ({path} if path else set())


def test_the_spec_carries_each_pools_capacity() -> None:
    """A pool takes the cluster's settings, or its own; `reservation: none` opts a pool out of the
    cluster's reservation."""
    result = run(aws_pools(P5, with_cloud(P5EN, zone="us-east-1b", market="spot", reservation="none"),
                           reservation={"id": "cr-0123456789abcdef0", "instance_type": "p5.48xlarge"}))
    assert isinstance(result, Valid), result.findings
    first, second = (pool.capacity for pool in result.spec.pools)
    assert first is not None and second is not None
    assert (first.zone, first.market, first.reservation) == ("us-east-1a", "on-demand", "cr-0123456789abcdef0")
    assert (second.zone, second.market, second.reservation) == ("us-east-1b", "spot", None)
    assert (second.zone_path, second.reservation_path) == ("node_pools[1].cloud.zone", "node_pools[1].cloud.reservation")


@pytest.mark.parametrize("data, path", [
    (cloud_stack("aws", "p5.48xlarge", market="spot", reservation="cr-0123456789abcdef0"), "cloud.reservation"),
    (aws_pools(with_cloud(P5, market="spot"), reservation="cr-0123456789abcdef0"), "node_pools[0].cloud.market"),
    (aws_pools(with_cloud(P5, reservation="cr-0123456789abcdef0"), market="spot"), "node_pools[0].cloud.reservation"),
    (cloud_stack("gcp", "a3-ultragpu-8g", market="spot", reservation="a3u-block"), "cloud.reservation"),
])
def test_spot_with_a_reservation_is_refused(data: dict[str, Any], path: str) -> None:
    """A reservation holds On-Demand capacity: Spot instances would leave it empty."""
    (finding,) = run(data).findings
    assert (finding.rule, str(finding.severity), finding.path) == ("SCHEMA", "error", path)
    assert "a reservation holds On-Demand capacity" in finding.message and "on-demand" in finding.hint


def test_spot_without_a_reservation_and_a_pool_taken_off_the_clusters_reservation_pass() -> None:
    assert findings(cloud_stack("aws", "p5.48xlarge", market="spot")) == []
    data = aws_pools(P5, with_cloud(P5EN, market="spot", reservation="none"),
                     reservation={"id": "cr-0123456789abcdef0", "instance_type": "p5.48xlarge"})
    assert findings(data) == []


@pytest.mark.parametrize("data, fabrics", [
    (aws_pools(P5, with_cloud({**P5, "name": "east-d"}, zone="us-east-1d")), 2),  # EFA stays in a subnet
    (aws_pools(P5, P5EN), 1),  # one zone, one fabric subnet
    ({**cloud_stack("gcp", "a3-ultragpu-8g"), "node_pools": [
        {"name": "b", "nodes": 2, "instance_type": "a3-ultragpu-8g"},
        {"name": "c", "nodes": 2, "instance_type": "a3-ultragpu-8g", "cloud": {"zone": "us-central1-c"}}]}, 2),
])
def test_pools_that_share_no_fabric_are_a_warning(data: dict[str, Any], fabrics: int) -> None:
    warnings = [finding for finding in run(data).findings if finding.rule == "CLOUD-FABRICS"]
    assert len(warnings) == (fabrics > 1)
    if warnings:
        assert warnings[0].message.startswith(f"{fabrics} ") and warnings[0].severity.name == "WARNING"
