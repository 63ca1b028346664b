"""scheduler aks: the node pools are the AKS cluster's (its VNet, kubelet identity, outbound path and
API server), so the stack creates no network, NAT gateway, Bastion or identity for them; only the file
systems it is asked for take a resource group and a VNet."""

from __future__ import annotations

from typing import Any

from conftest import run
from test_components_support import one, run_program

from cluster.deployment import deployment
from cluster.loader import load_stack
from cluster.pipeline import Valid

UNUSED = ("network:NatGateway", "network:BastionHost", "network:PublicIPAddress", "network:NetworkSecurityGroup",
          "managedidentity:UserAssignedIdentity")


def aks_stack(**extra: Any) -> dict[str, Any]:
    data = load_stack("azure-ndh200-aks").data
    return {**data, **extra}


def _types(outcome: Any) -> list[str]:
    return sorted(item.type for item in outcome.resources if item.custom)


def test_the_aks_stack_creates_only_the_node_pool() -> None:
    outcome = run_program(aks_stack())
    assert outcome.ok, outcome.errors
    assert _types(outcome) == ["azure-native:containerservice:AgentPool", "pulumi:providers:azure-native"]
    assert outcome.outputs["access"] == {"method": "kubectl",
                                         "command": "az aks get-credentials --resource-group ml-rg --name ml"}
    result = run(aks_stack())
    assert isinstance(result, Valid)
    summary = deployment(result.spec)
    assert summary is not None
    assert any(line.startswith("network: none: the node pools join the AKS cluster's VNet") for line in summary.creates)
    assert not any(line.startswith(("way out:", "identity:")) for line in summary.creates)


def test_with_file_systems_only_their_vnet_and_subnets_are_created() -> None:
    outcome = run_program(aks_stack(storage={"filesystem": {"mbps_per_gpu": 100}, "home": {}}))
    assert outcome.ok, outcome.errors
    types = _types(outcome)
    assert not any(kind.endswith(UNUSED) for kind in types)
    subnets = sorted(item.name for item in outcome.resources if item.type.endswith("network:Subnet"))
    assert subnets == ["train-storage-home-subnet", "train-storage-lustre-subnet"]  # no management or storage subnet
    assert one(outcome, "network:VirtualNetwork").inputs["addressSpace"] == {"addressPrefixes": ["10.0.0.0/16"]}
    result = run(aks_stack(storage={"home": {}}))
    assert isinstance(result, Valid)
    summary = deployment(result.spec)
    assert summary is not None
    assert any(line.startswith("network: the node pools are on the AKS cluster's VNet") for line in summary.todo)


def test_bare_azure_still_creates_its_network_and_way_in() -> None:
    outcome = run_program(load_stack("azure-ndh200").data)
    types = _types(outcome)
    assert all(any(kind.endswith(unused) for kind in types) for unused in UNUSED)


def test_aks_needs_no_login_key_and_reports_the_cloud_keys_it_does_not_use() -> None:
    data = aks_stack()
    cloud = {**data["cloud"], "access": "bastion", "ssh_cidrs": ["203.0.113.0/24"], "data_buckets": []}
    found = {(f.rule, f.path) for f in run({**data, "cloud": cloud}).findings}
    assert {("SPEC-IGNORED", f"cloud.{key}") for key in ("access", "ssh_cidrs", "data_buckets")} <= found
    assert "cloud.ssh_public_key" not in {path for _, path in found}  # not required: the cluster's nodes
    bare = {**data, "scheduler": {"kind": "none"}}
    assert ("SCHEMA", "cloud.ssh_public_key") in {(f.rule, f.path) for f in run(bare).findings}
