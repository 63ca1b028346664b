"""scheduler.create on EKS and AKS: the stack builds the cluster its GPU node pools join, private, with
what the nodes need to join it (EKS: the control plane in two zones, access entries, the cluster security
group on the nodes; AKS: Azure CNI on the stack's VNet, a system node pool), and the Kueue flavors still
select node pools that exist."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from conftest import run
from test_cloud_scheduler import assert_flavors_and_pools_match, exported, planned_pools
from test_components_support import of_type, one, run_program

from cluster.deployment import deployment
from cluster.loader import load_stack
from cluster.pipeline import Valid

ZONES = ["us-east-1a", "us-east-1b"]


def eks(**scheduler: Any) -> dict[str, Any]:
    """aws-p6-eks creating its cluster in the stack's own VPC."""
    data = copy.deepcopy(load_stack("aws-p6-eks").data)
    data["cloud"].pop("vpc_id")
    data["scheduler"] = {"kind": "eks", "create": True, "zones": ZONES, **scheduler}
    return data


def aks(**scheduler: Any) -> dict[str, Any]:
    data = copy.deepcopy(load_stack("azure-ndh200-aks").data)
    data["scheduler"] = {"kind": "aks", "create": True, "version": "1.33", **scheduler}
    return data


def gpu_pools(outcome: Any) -> list[tuple[dict[str, str], list[dict[str, str]]]]:
    """The planned pools whose nodes carry the GPU taint (not a created cluster's system pool)."""
    return [(labels, taints) for labels, taints in planned_pools(outcome)
            if any(taint["key"] == "nvidia.com/gpu" for taint in taints)]


def test_eks_cluster_is_private_in_two_zones_and_the_node_group_joins_it() -> None:
    outcome = run_program(eks())
    assert outcome.ok, outcome.errors
    cluster = one(outcome, "eks/cluster:Cluster")
    inputs = cluster.inputs
    assert (inputs["name"], inputs["version"]) == ("train", "1.35")  # the stack's name, the default version
    config = inputs["vpcConfig"]
    assert (config["endpointPrivateAccess"], config["endpointPublicAccess"]) == (True, False)
    subnets = {registration.inputs["availabilityZone"]: registration.inputs["cidrBlock"]
               for registration in of_type(outcome, "ec2/subnet:Subnet") if "-eks-" in registration.name}
    assert subnets == {"us-east-1a": "10.0.240.0/28", "us-east-1b": "10.0.240.16/28"}
    assert config["subnetIds"] == ["<train-management-eks-us-east-1a>", "<train-management-eks-us-east-1b>"]
    assert all(registration.inputs["vpcId"] == "<train-management-vpc>"
               for registration in of_type(outcome, "ec2/subnet:Subnet") if "-eks-" in registration.name)
    assert inputs["accessConfig"] == {"authenticationMode": "API", "bootstrapClusterCreatorAdminPermissions": True}
    assert inputs["deletionProtection"] is True
    # the cluster's role is trusted by EKS and carries AmazonEKSClusterPolicy
    (role,) = [item for item in of_type(outcome, "iam/role:Role") if item.name.endswith("-eks-role")]
    assert '"eks.amazonaws.com"' in role.inputs["assumeRolePolicy"]
    assert cluster.dependencies["roleArn"] == (role.urn,)
    attached = {item.inputs["policyArn"] for item in of_type(outcome, "RolePolicyAttachment")
                if item.inputs["role"] == role.inputs.get("name", role.name)}
    assert attached == {"arn:aws:iam::aws:policy/AmazonEKSClusterPolicy"}
    # the GPU node group joins it (a dependency, not a name typed twice) and its nodes carry its security group
    groups = {item.inputs["nodeGroupName"]: item for item in of_type(outcome, "eks/nodeGroup:NodeGroup")}
    assert set(groups) == {"train-b200", "system"}
    assert groups["train-b200"].dependencies["clusterName"] == (cluster.urn,)
    assert groups["train-b200"].inputs["clusterName"] == "train"
    primary = one(outcome, "LaunchTemplate").inputs["networkInterfaces"][0]["securityGroups"]
    assert "<train-management-eks cluster security group>" in primary
    assert "<eks cluster security group>" not in primary  # no lookup of a cluster that does not exist yet
    system = groups["system"].inputs
    assert system["instanceTypes"] == ["m5.xlarge"] and system["subnetIds"] == ["<train-management-subnet>"]
    assert outcome.outputs["network"]["kubernetes_cluster"] == "train"


def test_eks_cluster_in_an_existing_vpc_and_at_a_given_version() -> None:
    data = eks(cluster="ml", version="1.34", zones=["us-east-1c", "us-east-1a", "us-east-1d"])
    data["cloud"]["vpc_id"] = "vpc-0123456789abcdef0"
    outcome = run_program(data)
    assert outcome.ok, outcome.errors
    cluster = one(outcome, "eks/cluster:Cluster").inputs
    assert (cluster["name"], cluster["version"]) == ("ml", "1.34")
    assert len(cluster["vpcConfig"]["subnetIds"]) == 3
    created = [item.inputs for item in of_type(outcome, "ec2/subnet:Subnet") if "-eks-" in item.name]
    assert {item["vpcId"] for item in created} == {"vpc-0123456789abcdef0"}
    assert sorted(item["cidrBlock"] for item in created) == ["10.0.240.0/28", "10.0.240.32/28", "10.0.240.48/28"]


def test_aks_cluster_is_private_with_azure_cni_and_a_system_pool() -> None:
    outcome = run_program(aks())
    assert outcome.ok, outcome.errors
    cluster = one(outcome, "containerservice:ManagedCluster")
    inputs = cluster.inputs
    assert (inputs["resourceName"], inputs["kubernetesVersion"]) == ("train", "1.33")
    assert inputs["apiServerAccessProfile"] == {"enablePrivateCluster": True}
    assert inputs["identity"] == {"type": "SystemAssigned"}
    network = inputs["networkProfile"]
    assert (network["networkPlugin"], network["networkPluginMode"]) == ("azure", "overlay")
    assert (network["podCidr"], network["serviceCidr"], network["dnsServiceIP"]) == (
        "10.4.0.0/14", "10.8.0.0/20", "10.8.0.10")  # outside the VNet's 10.0.0.0/16
    (system,) = inputs["agentPoolProfiles"]
    assert (system["mode"], system["vmSize"], system["count"]) == ("System", "Standard_DS4_v2", 3.0)
    assert system["vnetSubnetID"] == "<train-management-subnet>" and system["enableNodePublicIP"] is False
    assert system["nodeTaints"] == ["CriticalAddonsOnly=true:NoSchedule"]
    subnet = next(item for item in of_type(outcome, "network:Subnet") if item.name == "train-management-subnet")
    assert subnet.inputs["addressPrefix"] == "10.0.0.0/20"
    # the GPU node pool joins the created cluster in the stack's resource group, on the cluster's subnet
    pool = one(outcome, "containerservice:AgentPool")
    assert (pool.inputs["resourceName"], pool.inputs["vnetSubnetID"]) == ("train", "<train-management-subnet>")
    assert pool.dependencies["resourceName"] == (cluster.urn,)
    assert pool.inputs["resourceGroupName"] == inputs["resourceGroupName"]


@pytest.mark.parametrize("build", [eks, aks], ids=["eks", "aks"])
def test_every_flavor_selects_a_node_pool_of_the_created_cluster(build: Any) -> None:
    data = build()
    pools = gpu_pools(run_program(data))
    assert len(pools) == len(data["node_pools"])
    assert_flavors_and_pools_match(exported(data), pools)


@pytest.mark.parametrize("data, rule, path, words", [
    (eks(zones=None), "SCHEMA", "scheduler.zones", "at least 2"),
    (eks(zones=["us-east-1a"]), "SCHEMA", "scheduler.zones", "at least 2"),
    (eks(zones=["us-east-1a", "us-east-1a"]), "SCHEMA", "scheduler.zones[1]", "twice"),
    (eks(zones=["us-east-1a", "us-west-2b"]), "SCHEMA", "scheduler.zones[1]", "not a zone of cloud.region"),
    (eks(zones=["us-east-1a", "us-east-1l"]), "SCHEMA", "scheduler.zones[1]", "not a zone of cloud.region"),
    (eks(version="1.35.2"), "SCHEMA", "scheduler.version", "minor"),
    (aks(version=None), "SCHEMA", "scheduler.version", "required"),
    (aks(version="1.33.2-gke.100"), "SCHEMA", "scheduler.version", "minor or a patch"),
    (aks(cluster="ml-"), "SCHEMA", "scheduler.cluster", "1-63"),
    (aks(resource_group="ml-rg"), "SPEC-IGNORED", "scheduler.resource_group", "stack's own"),
    ({**load_stack("aws-p6-eks").data, "scheduler": {"kind": "eks", "cluster": "ml", "zones": ZONES}},
     "SPEC-IGNORED", "scheduler.zones", "creates"),
], ids=["no-zones", "one-zone", "zone-twice", "other-region", "reserved-letter", "eks-patch", "aks-no-version",
        "aks-gke-version", "aks-name", "aks-group", "zones-without-create"])
def test_what_create_refuses(data: dict[str, Any], rule: str, path: str, words: str) -> None:
    found = [finding for finding in run(data).findings if finding.path == path]
    assert found and found[0].rule == rule and words in found[0].message + found[0].hint, found


def test_a_created_eks_cluster_needs_no_vpc_id() -> None:
    assert run(eks()).ok
    assert not any(finding.path == "cloud.vpc_id" for finding in run(eks()).findings)


@pytest.mark.parametrize("build, words, todo", [
    (eks, ["Amazon EKS cluster train (us-east-1, created by the stack), Kubernetes 1.35",
           "a private endpoint only", "us-east-1a, us-east-1b"], "run kubectl from inside the VPC"),
    (aks, ["Azure Kubernetes Service cluster train (the stack's resource group, created by the stack), "
           "Kubernetes 1.33", "a private cluster", "Azure CNI Overlay"], "AKSInfinibandSupport"),
], ids=["eks", "aks"])
def test_the_plan_shows_the_control_plane(build: Any, words: list[str], todo: str) -> None:
    result = run(build())
    assert isinstance(result, Valid)
    summary = deployment(result.spec)
    assert summary is not None
    (line,) = [line for line in summary.creates if line.startswith("control plane: ")]
    assert all(word in line for word in words), line
    assert any(todo in line for line in summary.todo)
    assert not any("must exist in the VPC" in line or "peer the two" in line for line in summary.todo)
