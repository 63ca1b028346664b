"""The shared Lustre file system of a cloud cluster: sized from the pools' GPUs and the throughput
asked per GPU to a size the provider accepts, on the storage network, mounted by every node at
boot, protected."""

from __future__ import annotations

import base64
from typing import Any

import pytest
from conftest import run
from test_components_support import cloud_stack, of_type, one, run_program

from cluster import stackfile as sf
from cluster.clouds import cloud
from cluster.filesystems import mount_script, plan
from cluster.pipeline import Valid

TYPES = {"aws": "p5e.48xlarge", "gcp": "a3-ultragpu-8g", "azure": "Standard_ND96isr_H200_v5"}


def with_fs(target: str, nodes: int = 16, **fs: Any) -> dict[str, Any]:
    return {**cloud_stack(target, TYPES[target], nodes=nodes), "storage": {"filesystem": fs}}


@pytest.mark.parametrize("target, tier, needed_gib, size", [
    ("aws", 1000, 1, 1_200), ("aws", 1000, 1_201, 2_400), ("aws", 1000, 32_768, 33_600),  # 1.2 TiB, then 2.4 TiB steps
    ("gcp", 1000, 1, 9_000), ("gcp", 1000, 32_768, 36_000), ("gcp", 125, 1, 72_000),
    ("gcp", 1000, 1_600_000, 1_530_000 + 72_000),  # past 1,530,000 GiB the step is 72,000
    ("azure", 500, 65_536, 65_536), ("azure", 500, 65_537, 69_632), ("azure", 40, 1, 49_152),  # 4 and 48 TiB steps
])
def test_sizes_the_providers_accept(target: str, tier: int, needed_gib: float, size: int) -> None:
    assert cloud(target).lustre.size(tier, needed_gib)[0] == size


@pytest.mark.parametrize("target, service, gib, tier", [
    ("aws", "FSx for Lustre (PERSISTENT_2)", 33_600, 1000),
    ("gcp", "Google Cloud Managed Lustre", 36_000, 1000),
    ("azure", "Azure Managed Lustre", 65_536, 500),
])
def test_128_gpus_at_250_mb_per_second_each(target: str, service: str, gib: int, tier: int) -> None:
    sized, problems = plan(target, 128, sf.SharedFileSystem(mbps_per_gpu=250))
    assert problems == [] and sized is not None
    assert (sized.service, sized.capacity_gib, sized.tier) == (service, gib, tier)
    assert sized.throughput_mbps >= 128 * 250


@pytest.mark.parametrize("fs, path", [
    ({}, "storage.filesystem"),
    ({"mbps_per_gpu": 250, "tier": 40}, "storage.filesystem.tier"),  # Azure's tier, not AWS's
    ({"mbps_per_gpu": 100_000, "tier": 125}, None),  # AWS has no maximum here
])
def test_filesystem_settings_aws_refuses(fs: dict[str, Any], path: str | None) -> None:
    found = {(f.rule, f.path) for f in run(with_fs("aws", **fs)).findings if f.severity.name == "ERROR"}
    assert found == ({("SCHEMA", path)} if path else set())


def test_gcp_refuses_beyond_a_tiers_largest_instance() -> None:
    (finding,) = [f for f in run(with_fs("gcp", nodes=2_000, mbps_per_gpu=10_000, tier=125)).findings
                  if f.rule == "SCHEMA"]
    assert finding.path == "storage.filesystem" and "it holds at most 12,240,000 GiB" in finding.message


@pytest.mark.parametrize("target, kind, capacity", [
    ("aws", "fsx/lustreFileSystem:LustreFileSystem", ("storageCapacity", 33_600)),
    ("gcp", "lustre/instance:Instance", ("capacityGib", "36000")),
    ("azure", "storagecache:AmlFilesystem", ("storageCapacityTiB", 64)),
])
def test_the_file_system_is_on_the_storage_network_protected_and_mounted(target: str, kind: str,
                                                                         capacity: tuple[str, Any]) -> None:
    outcome = run_program(with_fs(target, mbps_per_gpu=250))
    assert outcome.ok, outcome.errors
    fs = one(outcome, kind)
    assert fs.protect and fs.inputs[capacity[0]] == capacity[1]
    assert [item.name for item in outcome.resources if item.protect] == [fs.name]  # only the stateful one
    if target == "aws":
        assert fs.inputs["subnetIds"] == "<t-storage-subnet>" and fs.inputs["securityGroupIds"] == ["<t-storage-sg>"]
        assert fs.inputs["deploymentType"] == "PERSISTENT_2"
        script = base64.b64decode(one(outcome, "LaunchTemplate").inputs["userData"]).decode()
        assert "'<t-storage-lustre.fsx>@tcp:/<mountname> /lustre lustre relatime,flock,_netdev 0 0'" in script
    elif target == "gcp":
        assert fs.inputs["network"] == "<t-storage-vpc>" and fs.inputs["location"] == "us-central1-b"
        (peering,) = of_type(outcome, "servicenetworking/connection:Connection")
        assert peering.inputs["network"] == "<t-storage-vpc>"
        script = one(outcome, "InstanceTemplate").inputs["metadata"]["startup-script"]
        assert "'<t-storage-lustre ip>@tcp:/lustrefs /lustre lustre" in script
    else:
        lustre_subnet = next(item for item in of_type(outcome, "network:Subnet") if item.name.endswith("lustre-subnet"))
        assert fs.inputs["filesystemSubnet"] == f"<{lustre_subnet.name}>"
        assert fs.inputs["sku"] == {"name": "AMLFS-Durable-Premium-500"}
        profile = one(outcome, "VirtualMachineScaleSet").inputs["virtualMachineProfile"]["osProfile"]
        assert "'<t-storage-lustre mgs>@tcp:/lustrefs /lustre lustre" in base64.b64decode(profile["customData"]).decode()
    assert outcome.outputs["network"]["filesystem"]["mount"] == "/lustre"


def test_a3_mega_puts_the_file_system_on_the_management_vpc() -> None:
    """A3 High / Mega VMs have one gVNIC, on the management VPC; Managed Lustre must share a VPC with them."""
    data = {**cloud_stack("gcp", "a3-megagpu-8g"), "storage": {"filesystem": {"mbps_per_gpu": 100}},
            "policy": {"suppress": ["FAB-GPU-NIC"]}}
    outcome = run_program(data)
    assert outcome.ok, outcome.errors
    assert one(outcome, "lustre/instance:Instance").inputs["network"] == "<t-management-vpc>"


def test_without_a_filesystem_nothing_is_created_and_the_plan_says_so() -> None:
    outcome = run_program(cloud_stack("aws", "p5e.48xlarge"))
    assert of_type(outcome, "LustreFileSystem") == [] and "userData" not in one(outcome, "LaunchTemplate").inputs
    from cluster.deployment import deployment

    result = run(cloud_stack("aws", "p5e.48xlarge"))
    assert isinstance(result, Valid)
    summary = deployment(result.spec)
    assert summary is not None and any(line.startswith("shared storage: none created") for line in summary.todo)


def test_on_premises_and_switch_keys_on_cloud_are_reported_ignored() -> None:
    cloud = {**with_fs("aws", mbps_per_gpu=250)}
    cloud["storage"]["leaves"] = 2
    assert ("SPEC-IGNORED", "storage.leaves") in {(f.rule, f.path) for f in run(cloud).findings}
    onprem = {"name": "t", "target": "onprem", "node_pools": [{"name": "h200", "nodes": 16, "gpu": "H200"}],
              "storage": {"filesystem": {"mbps_per_gpu": 250}}}
    assert ("SPEC-IGNORED", "storage.filesystem") in {(f.rule, f.path) for f in run(onprem).findings}


def test_the_mount_script_waits_for_the_network_and_leaves_no_duplicate_fstab_line() -> None:
    script = mount_script("10.0.16.5@tcp:/lustrefs", "/lustre")
    assert script.startswith("#!/bin/bash\n") and "_netdev" in script
    assert "grep -q ' /lustre lustre ' /etc/fstab ||" in script and "mountpoint -q /lustre ||" in script
