"""Access and egress under the SDK's mocks: private subnets with a way out by default, the
declared way in (SSM, IAP, Azure Bastion), never a public IP on a GPU node."""

from __future__ import annotations

from typing import Any

import pytest
from test_components_support import cloud_stack, of_type, one, run_program

AWS_SUBNETS = {"t-management-subnet", "t-storage-subnet", "t-fabric-subnet"}


def test_aws_private_subnets_route_out_through_a_nat_gateway() -> None:
    outcome = run_program(cloud_stack("aws", "p5e.48xlarge"))
    assert outcome.ok, outcome.errors
    gateway = one(outcome, "InternetGateway")
    nat = one(outcome, "NatGateway").inputs
    public = next(subnet for subnet in of_type(outcome, "ec2/subnet:Subnet") if subnet.name == "t-management-public")
    assert nat["subnetId"] == f"<{public.name}>" and nat["connectivityType"] == "public"
    assert nat["allocationId"] == f"<{one(outcome, 'ec2/eip:Eip').name}>"
    tables = {table.name: table.inputs["routes"] for table in of_type(outcome, "ec2/routeTable:RouteTable")}
    assert tables["t-management-public-routes"] == [{"cidrBlock": "0.0.0.0/0", "gatewayId": f"<{gateway.name}>"}]
    assert tables["t-management-private-routes"] == [{"cidrBlock": "0.0.0.0/0", "natGatewayId": "<t-management-nat>"}]
    joined = {association.inputs["subnetId"].strip("<>"): association.inputs["routeTableId"].strip("<>")
              for association in of_type(outcome, "RouteTableAssociation")}
    assert joined == {**dict.fromkeys(AWS_SUBNETS, "t-management-private-routes"),
                      "t-management-public": "t-management-public-routes"}
    # Only the NAT gateway's subnet is public; nothing maps public IPs, no node interface takes one.
    assert all(subnet.inputs["mapPublicIpOnLaunch"] is False for subnet in of_type(outcome, "ec2/subnet:Subnet"))
    interfaces = one(outcome, "LaunchTemplate").inputs["networkInterfaces"]
    assert all(nic.get("associatePublicIpAddress") in (None, "false") for nic in interfaces)


def test_aws_nodes_carry_the_ssm_instance_profile() -> None:
    outcome = run_program(cloud_stack("aws", "p5e.48xlarge"))
    profile = one(outcome, "InstanceProfile")
    # The mock echoes a resource's name as its name output (real runs auto-name it).
    assert one(outcome, "LaunchTemplate").inputs["iamInstanceProfile"] == {"name": profile.name}
    attached = {item.inputs["policyArn"] for item in of_type(outcome, "RolePolicyAttachment")}
    assert attached == {"arn:aws:iam::aws:policy/AmazonSSMManagedInstanceCore",
                        "arn:aws:iam::aws:policy/AmazonEC2ContainerRegistryReadOnly"}
    role = one(outcome, "iam/role:Role").inputs
    assert '"Service": "ec2.amazonaws.com"' in role["assumeRolePolicy"]


def test_aws_existing_vpc_keeps_its_own_routes_and_access_none_adds_no_ssm_policy() -> None:
    outcome = run_program(cloud_stack("aws", "p5e.48xlarge", vpc_id="vpc-0a1b2c3d4e5f60718", access="none"))
    assert outcome.ok, outcome.errors
    for kind in ("InternetGateway", "NatGateway", "RouteTable", "RouteTableAssociation", "VpcEndpoint"):
        assert of_type(outcome, kind) == [], kind
    # The nodes' identity stays (images, data); only Session Manager's policy goes.
    assert one(outcome, "LaunchTemplate").inputs["iamInstanceProfile"] == {"name": "t-management-node-profile"}
    assert [item.inputs["policyArn"] for item in of_type(outcome, "RolePolicyAttachment")] == [
        "arn:aws:iam::aws:policy/AmazonEC2ContainerRegistryReadOnly"]


def test_gcp_cloud_nat_and_iap_on_the_management_vpc() -> None:
    outcome = run_program(cloud_stack("gcp", "a3-ultragpu-8g"))
    assert outcome.ok, outcome.errors
    router = one(outcome, "compute/router:Router").inputs
    assert router["network"] == "<t-management-vpc>" and router["region"] == "us-central1"
    nat = one(outcome, "RouterNat").inputs
    assert nat["sourceSubnetworkIpRangesToNat"] == "ALL_SUBNETWORKS_ALL_IP_RANGES"
    assert nat["natIpAllocateOption"] == "AUTO_ONLY"
    rules = {rule.name: rule.inputs for rule in of_type(outcome, "Firewall")}
    assert rules["t-management-iap-ssh"]["sourceRanges"] == ["35.235.240.0/20"]
    assert rules["t-management-iap-ssh"]["allows"] == [{"protocol": "tcp", "ports": ["22"]}]
    assert rules["t-management-iap-ssh"]["network"] == "<t-management-vpc>"
    nics = one(outcome, "InstanceTemplate").inputs["networkInterfaces"]
    assert not any("accessConfigs" in nic for nic in nics)


def test_gcp_egress_none_and_access_none_create_neither() -> None:
    outcome = run_program(cloud_stack("gcp", "a3-ultragpu-8g", egress="none", access="none"))
    assert outcome.ok, outcome.errors
    assert of_type(outcome, "RouterNat") == [] and of_type(outcome, "compute/router:Router") == []
    assert "t-management-iap-ssh" not in {rule.name for rule in of_type(outcome, "Firewall")}


def test_azure_nat_gateway_on_both_subnets_and_bastion_in_its_own_subnet() -> None:
    outcome = run_program(cloud_stack("azure", "Standard_ND96isr_H200_v5"))
    assert outcome.ok, outcome.errors
    nat = one(outcome, "NatGateway")
    assert nat.inputs["sku"] == {"name": "Standard"}
    subnets = {subnet.name: subnet.inputs for subnet in of_type(outcome, "network:Subnet")}
    assert subnets["t-management-subnet"]["natGateway"] == {"id": f"<{nat.name}>"}
    assert subnets["t-storage-subnet"]["natGateway"] == {"id": f"<{nat.name}>"}
    bastion_subnet = subnets["t-management-bastion-subnet"]
    assert bastion_subnet["subnetName"] == "AzureBastionSubnet"
    bastion = one(outcome, "BastionHost").inputs
    assert bastion["sku"] == {"name": "Standard"} and bastion["enableTunneling"] is True
    (ip_config,) = bastion["ipConfigurations"]
    assert ip_config["subnet"] == {"id": "<t-management-bastion-subnet>"}
    assert {address.name for address in of_type(outcome, "PublicIPAddress")} == {"t-management-nat-ip",
                                                                                 "t-management-bastion-ip"}
    nics = one(outcome, "VirtualMachineScaleSet").inputs["virtualMachineProfile"]["networkProfile"][
        "networkInterfaceConfigurations"]
    assert not any("publicIPAddressConfiguration" in nic["ipConfigurations"][0] for nic in nics)


@pytest.mark.parametrize("target, instance_type, cloud, message", [
    ("gcp", "a3-ultragpu-8g", {"access": "ssm"}, "access ssm is not offered on gcp"),
    ("aws", "p5e.48xlarge", {"access": "iap"}, "access iap is not offered on aws"),
    ("azure", "Standard_ND96isr_H200_v5", {"access": "iap"}, "access iap is not offered on azure"),
    ("aws", "p5e.48xlarge", {"access": "ssm", "egress": "none"}, "the SSM agent on the nodes cannot reach"),
])
def test_an_access_path_the_target_cannot_give_is_a_schema_error(target: str, instance_type: str,
                                                                 cloud: dict[str, Any], message: str) -> None:
    outcome = run_program(cloud_stack(target, instance_type, **cloud))
    assert outcome.resources == []
    (error,) = [error for error in outcome.errors if error.startswith("SCHEMA")]
    assert error.startswith("SCHEMA (error) at cloud.access:") and message in error
    assert "hint:" in error


@pytest.mark.parametrize("key, value", [("egress", "internet"), ("access", "ssh")])
def test_unknown_access_or_egress_values_are_schema_errors(key: str, value: str) -> None:
    outcome = run_program(cloud_stack("aws", "p5e.48xlarge", **{key: value}))
    assert outcome.resources == []
    assert any(error.startswith(f"SCHEMA (error) at cloud.{key}:") for error in outcome.errors), outcome.errors
