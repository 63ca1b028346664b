"""Azure under the SDK's mocks: one scale set per pool, set up for InfiniBand."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from test_components_support import cloud_stack, of_type, one, run_program


@pytest.fixture()
def program() -> Callable[..., Any]:
    return run_program


@pytest.mark.parametrize("size", ["Standard_ND96isr_H100_v5", "Standard_ND96isr_H200_v5", "Standard_ND96isr_MI300X_v5"])
def test_scale_set_for_infiniband(program: Callable[..., Any], size: str) -> None:
    outcome = program(cloud_stack("azure", size, nodes=12, ssh_cidrs=["203.0.113.0/24"]))
    assert outcome.ok, outcome.errors
    scale_set = one(outcome, "VirtualMachineScaleSet").inputs
    assert scale_set["sku"] == {"name": size, "tier": "Standard", "capacity": 12}
    assert scale_set["singlePlacementGroup"] is True
    assert scale_set["overprovision"] is False
    nics = scale_set["virtualMachineProfile"]["networkProfile"]["networkInterfaceConfigurations"]
    assert [nic["ipConfigurations"][0]["subnet"]["id"] for nic in nics] == \
        ["<t-management-subnet>", "<t-storage-subnet>"]
    assert not any("publicIPAddressConfiguration" in nic["ipConfigurations"][0] for nic in nics)
    subnets = {subnet.name: subnet.inputs for subnet in of_type(outcome, "network:Subnet")}
    assert set(subnets) == {"t-management-subnet", "t-storage-subnet"}
    assert {subnet["virtualNetworkName"] for subnet in subnets.values()} == {"t-management-vnet"}
    rules = one(outcome, "NetworkSecurityGroup").inputs["securityRules"]
    assert [(rule["destinationPortRange"], rule["sourceAddressPrefixes"]) for rule in rules] == \
        [("22", ["203.0.113.0/24"])]
    assert one(outcome, "ResourceGroup").inputs["location"] == "eastus"
    # The platform attaches InfiniBand: the fabric component has no children.
    fabric = one(outcome, "GpuFabric")
    assert [registration for registration in outcome.resources if registration.parent == fabric.urn] == []


def test_pool_beyond_one_placement_group_deploys_with_a_warning(program: Callable[..., Any]) -> None:
    outcome = program(cloud_stack("azure", "Standard_ND96isr_H200_v5", nodes=120))
    assert outcome.ok and outcome.errors == []
    assert any(warning.startswith("CLOUD-PLACEMENT (warning)") for warning in outcome.warnings)
    assert one(outcome, "VirtualMachineScaleSet").inputs["sku"]["capacity"] == 120
