"""Azure under the SDK's mocks: one scale set per pool, set up for InfiniBand."""

from __future__ import annotations

import base64
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml
from conftest import missing_tool
from test_components_support import EXAMPLE_KEY, ROOT, cloud_stack, of_type, one, run_program

KEY = EXAMPLE_KEY


def _wire(*fields: bytes) -> str:
    """An SSH public key blob (RFC 4253 6.6: length-prefixed strings), base64."""
    return base64.b64encode(b"".join(len(field).to_bytes(4, "big") + field for field in fields)).decode()


RSA_1024 = _wire(b"ssh-rsa", (65537).to_bytes(3, "big"), ((1 << 1023) | 1).to_bytes(129, "big")) + " me"
ECDSA = _wire(b"ecdsa-sha2-nistp256", b"nistp256", b"\x04" + bytes(64)) + " me"


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
    assert set(subnets) == {"t-management-subnet", "t-storage-subnet", "t-management-bastion-subnet"}
    assert {subnet["virtualNetworkName"] for subnet in subnets.values()} == {"t-management-vnet"}
    rules = one(outcome, "NetworkSecurityGroup").inputs["securityRules"]
    assert [(rule["destinationPortRange"], rule["sourceAddressPrefixes"]) for rule in rules] == \
        [("22", ["203.0.113.0/24"])]
    assert one(outcome, "ResourceGroup").inputs["location"] == "eastus"
    # The platform attaches InfiniBand: the fabric component has no children.
    fabric = one(outcome, "GpuFabric")
    assert [registration for registration in outcome.resources if registration.parent == fabric.urn] == []


def test_pool_beyond_one_placement_group_is_an_error_and_deploys_nothing(program: Callable[..., Any]) -> None:
    """A single-placement-group scale set holds at most 100 VMs: Azure refuses 120 at deploy."""
    outcome = program(cloud_stack("azure", "Standard_ND96isr_H200_v5", nodes=120))
    assert outcome.resources == []
    (error,) = [error for error in outcome.errors if error.startswith("CLOUD-PLACEMENT")]
    assert error.startswith("CLOUD-PLACEMENT (error) at node_pools[0].nodes: 120 VMs exceed one placement group")
    assert "split the pool into 2 pools of at most 100 nodes each" in error


def test_a_pool_of_100_fits_one_placement_group(program: Callable[..., Any]) -> None:
    outcome = program(cloud_stack("azure", "Standard_ND96isr_H200_v5", nodes=100))
    assert outcome.ok and outcome.errors == [] and outcome.warnings == []
    assert one(outcome, "VirtualMachineScaleSet").inputs["sku"]["capacity"] == 100


def test_suppressing_cloud_placement_keeps_the_error(program: Callable[..., Any]) -> None:
    stack = {**cloud_stack("azure", "Standard_ND96isr_H200_v5", nodes=101, ssh_public_key=KEY),
             "policy": {"suppress": ["CLOUD-PLACEMENT"]}}
    outcome = program(stack)
    assert outcome.resources == []
    assert any("CLOUD-PLACEMENT cannot be suppressed" in error for error in outcome.errors)


def test_the_admin_key_is_the_scale_sets_login(program: Callable[..., Any]) -> None:
    outcome = program(cloud_stack("azure", "Standard_ND96isr_H200_v5"))
    linux = one(outcome, "VirtualMachineScaleSet").inputs["virtualMachineProfile"]["osProfile"]["linuxConfiguration"]
    assert linux["disablePasswordAuthentication"] is True
    assert linux["ssh"]["publicKeys"] == [{"path": "/home/azureuser/.ssh/authorized_keys", "keyData": KEY}]


@pytest.mark.parametrize("cloud, message", [
    ({"ssh_public_key": None}, "cloud.ssh_public_key is required on azure: password login is disabled"),
    ({"ssh_public_key": f"azureuser:{KEY}"}, "Azure's keyData takes the key alone; the 'azureuser': prefix"),
    ({"ssh_public_key": "ssh-ed25519 " + _wire(b"ssh-ed25519", bytes(16)) + " me"}, "one 32-byte point"),
    ({"ssh_public_key": "ssh-ed25519 bm90IGEga2V5 me"}, "does not decode to an SSH public key"),
    ({"ssh_public_key": "ssh-ed25519 " + _wire(b"ssh-rsa", bytes(32)) + " me"}, "not a ssh-ed25519 key"),
    ({"ssh_public_key": "ecdsa-sha2-nistp256 " + ECDSA}, "Azure takes RSA (at least 2048 bits) or Ed25519 keys"),
    ({"ssh_public_key": "ssh-rsa " + RSA_1024}, "at least 2048 bits; this one has 1024"),
])
def test_azure_login_key_problems_are_schema_errors(program: Callable[..., Any], cloud: dict[str, Any],
                                                    message: str) -> None:
    outcome = program(cloud_stack("azure", "Standard_ND96isr_H200_v5", **cloud))
    assert outcome.resources == []
    (error,) = [error for error in outcome.errors if error.startswith("SCHEMA")]
    assert error.startswith("SCHEMA (error) at cloud.ssh_public_key:") and message in error, error
    assert "hint:" in error or "id_ed25519" in error


def test_the_example_key_is_one_openssh_reads(tmp_path: Path) -> None:
    """The example stack's key parses with the real ssh-keygen (it is an example, never a login)."""
    keygen = shutil.which("ssh-keygen")
    if keygen is None:
        missing_tool("ssh-keygen (openssh-client) is not installed")
    key = yaml.safe_load((ROOT / "stacks" / "Pulumi.azure-ndh200.yaml").read_text())[
        "config"]["gpu-cluster:cluster"]["cloud"]["ssh_public_key"]
    assert key == KEY
    path = tmp_path / "example.pub"
    path.write_text(key + "\n")
    done = subprocess.run([keygen, "-l", "-f", str(path)], capture_output=True, text=True, timeout=30)
    assert done.returncode == 0, done.stderr
    assert done.stdout.rstrip().endswith("example-only-replace-with-your-key (ED25519)")
    # Its 32 key bytes say what it is.
    assert base64.b64decode(key.split()[1])[-32:] == b"gpu-cluster example key, replace"


def test_two_pools_of_one_cluster_never_share_host_names(program: Callable[..., Any]) -> None:
    """computerNamePrefix holds 15 characters (Azure compute API); cutting `<cluster>-<pool>` at 15
    gave prod-cluster-h200-a and -b one prefix, so their VMs shared host names."""
    data = {**cloud_stack("azure", "Standard_ND96isr_H100_v5", nodes=60), "name": "prod-cluster"}
    data["node_pools"] = [{"name": "h200-a", "nodes": 60, "instance_type": "Standard_ND96isr_H100_v5"},
                          {"name": "h200-b", "nodes": 60, "instance_type": "Standard_ND96isr_H100_v5"}]
    outcome = program(data)
    assert outcome.ok, outcome.errors
    prefixes = [item.inputs["virtualMachineProfile"]["osProfile"]["computerNamePrefix"]
                for item in of_type(outcome, "VirtualMachineScaleSet")]
    assert len(set(prefixes)) == 2 and all(1 <= len(prefix) <= 15 for prefix in prefixes), prefixes
    # A short name stays as it was.
    short = one(program(cloud_stack("azure", "Standard_ND96isr_H100_v5")), "VirtualMachineScaleSet")
    assert short.inputs["virtualMachineProfile"]["osProfile"]["computerNamePrefix"] == "t-gpu"


def test_splitting_past_100_vms_warns_of_two_infiniband_fabrics(program: Callable[..., Any]) -> None:
    data = cloud_stack("azure", "Standard_ND96isr_H100_v5", nodes=60)
    data["node_pools"].append({"name": "gpu2", "nodes": 60, "instance_type": "Standard_ND96isr_H100_v5"})
    outcome = program(data)
    assert outcome.ok and len(of_type(outcome, "VirtualMachineScaleSet")) == 2
    (warning,) = outcome.warnings
    assert warning.startswith("CLOUD-FABRICS (warning) at node_pools: 2 InfiniBand fabrics (one per scale set): "
                              "gpu (60 nodes, 480 GPUs); gpu2 (60 nodes, 480 GPUs); a job spans one of them at most")
    # The split CLOUD-PLACEMENT asks for says what it costs.
    refused = program(cloud_stack("azure", "Standard_ND96isr_H100_v5", nodes=120))
    assert any("one job spans at most 100 VMs over InfiniBand (CLOUD-FABRICS)" in error for error in refused.errors)
