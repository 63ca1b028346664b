"""`scheduler`: the GPU nodes as node pools of the provider's managed Kubernetes, under the SDK's
mocks. The core check walks from every exported Kueue ResourceFlavor to a planned node pool
whose nodes carry every label the flavor selects and whose taints the flavor tolerates, with
the labels and taints read back from what the program registered (the pool's own labels, and
the ones the provider sets from the recorded inputs: its pool-name label and the instance type)."""

from __future__ import annotations

import base64
import copy
import json
from collections.abc import Callable
from typing import Any

import pytest
import yaml
from test_components_support import cloud_stack, of_type, one, run_program

from cluster.deployment import deployment
from cluster.exports.kubernetes import kueue_yaml
from cluster.loader import load_stack
from cluster.pipeline import Valid, validate_mapping

SCHEDULED = ("aws-p6-eks", "gcp-a3ultra-gke", "azure-ndh200-aks")
NODE_POOL_TYPES = ("aws:eks/nodeGroup:NodeGroup", "gcp:container/nodePool:NodePool",
                   "azure-native:containerservice:AgentPool")
INSTANCE_TYPE = "node.kubernetes.io/instance-type"
# Taint effects as each API spells them -> Kubernetes'.
EFFECTS = {"NO_SCHEDULE": "NoSchedule", "NoSchedule": "NoSchedule"}


@pytest.fixture()
def program() -> Callable[..., Any]:
    return run_program


def planned_pools(outcome: Any) -> list[tuple[dict[str, str], list[dict[str, str]]]]:
    """(labels, taints) of the nodes of every registered node pool, as the nodes will carry them."""
    by_name = {f"<{registration.name}>": registration for registration in outcome.resources}
    pools: list[tuple[dict[str, str], list[dict[str, str]]]] = []
    for registration in outcome.resources:
        inputs = registration.inputs
        if registration.type == "aws:eks/nodeGroup:NodeGroup":
            # a GPU pool's type is its launch template's; a created cluster's system group names its own
            instance_type = (by_name[inputs["launchTemplate"]["id"]].inputs["instanceType"]
                             if "launchTemplate" in inputs else inputs["instanceTypes"][0])
            labels = {**inputs.get("labels", {}), "eks.amazonaws.com/nodegroup": inputs["nodeGroupName"],
                      INSTANCE_TYPE: instance_type}
            taints = [{**taint, "effect": EFFECTS[taint["effect"]]} for taint in inputs.get("taints", [])]
        elif registration.type == "gcp:container/nodePool:NodePool":
            config = inputs["nodeConfig"]
            labels = {**config.get("labels", {}), "cloud.google.com/gke-nodepool": inputs["name"],
                      INSTANCE_TYPE: config["machineType"]}
            # GKE taints every GPU node pool nvidia.com/gpu=present:NoSchedule itself ("About GPUs in GKE").
            taints = [{**taint, "effect": EFFECTS[taint["effect"]]} for taint in config.get("taints", [])]
            if config.get("guestAccelerators"):
                taints.append({"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"})
        elif registration.type == "azure-native:containerservice:AgentPool":
            labels = {**inputs.get("nodeLabels", {}), "kubernetes.azure.com/agentpool": inputs["agentPoolName"],
                      INSTANCE_TYPE: inputs["vmSize"]}
            taints = []
            for text in inputs.get("nodeTaints", []):  # key=value:Effect
                pair, effect = text.rsplit(":", 1)
                key, value = pair.split("=", 1)
                taints.append({"key": key, "value": value, "effect": effect})
        else:
            continue
        pools.append((labels, taints))
    return pools


def tolerated(taint: dict[str, str], tolerations: list[dict[str, str]]) -> bool:
    """Kubernetes' toleration match: same key (or an empty key with Exists), the value when Equal,
    the effect when given."""
    for toleration in tolerations:
        if toleration.get("effect") not in (None, "", taint["effect"]):
            continue
        if toleration.get("operator", "Equal") == "Exists":
            if toleration.get("key") in (None, "", taint["key"]):
                return True
        elif toleration.get("key") == taint["key"] and toleration.get("value", "") == taint.get("value", ""):
            return True
    return False


def unmatched_flavors(documents: list[dict[str, Any]], pools: list[tuple[dict[str, str], list[dict[str, str]]]]
                      ) -> list[str]:
    """Flavors no planned node pool satisfies (every selected label carried, every taint tolerated)."""
    missing = []
    for flavor in (doc for doc in documents if doc["kind"] == "ResourceFlavor"):
        selector = flavor["spec"]["nodeLabels"]
        tolerations = flavor["spec"].get("tolerations", [])
        if not any(selector.items() <= labels.items() and all(tolerated(taint, tolerations) for taint in taints)
                   for labels, taints in pools):
            missing.append(flavor["metadata"]["name"])
    return missing


def assert_flavors_and_pools_match(documents: list[dict[str, Any]],
                                   pools: list[tuple[dict[str, str], list[dict[str, str]]]]) -> None:
    """Every exported flavor selects a node pool that exists, and every node pool is some flavor's
    (no GPU capacity Kueue cannot admit onto)."""
    flavors = [doc for doc in documents if doc["kind"] == "ResourceFlavor"]
    assert flavors and unmatched_flavors(documents, pools) == []
    assert all(any(flavor["spec"]["nodeLabels"].items() <= labels.items() for flavor in flavors)
               for labels, _ in pools)


def exported(data: dict[str, Any]) -> list[dict[str, Any]]:
    result = validate_mapping("t", data)
    assert isinstance(result, Valid) and result.ok, result.findings
    return list(yaml.safe_load_all(kueue_yaml(result.spec, result.topology)))


@pytest.mark.parametrize("name", SCHEDULED)
def test_every_flavor_selects_nodes_a_planned_node_pool_carries(program: Callable[..., Any], name: str) -> None:
    data = load_stack(name).data
    outcome = program(data)
    assert outcome.ok, outcome.errors
    pools = planned_pools(outcome)
    assert len(pools) == len(data["node_pools"])
    documents = exported(data)
    assert_flavors_and_pools_match(documents, pools)
    # the sample Jobs ask for nodes that exist
    for job in (doc for doc in documents if doc["kind"] == "Job"):
        selector = job["spec"]["template"]["spec"]["nodeSelector"]
        assert any(selector.items() <= labels.items() for labels, _ in pools), job["metadata"]["name"]


def test_a_flavor_no_pool_carries_is_caught(program: Callable[..., Any]) -> None:
    """The walk fails when it should: a selector for a pool that was not planned, an untolerated taint,
    and bare nodes (scheduler none), which no node pool carries."""
    data = load_stack("azure-ndh200-aks").data
    pools = planned_pools(program(data))
    documents = exported(data)
    wrong = copy.deepcopy(documents)
    flavor = next(doc for doc in wrong if doc["kind"] == "ResourceFlavor")
    flavor["spec"]["nodeLabels"]["gpu-cluster.io/pool"] = "elsewhere"
    assert unmatched_flavors(wrong, pools) == [flavor["metadata"]["name"]]
    untolerated = copy.deepcopy(documents)
    next(doc for doc in untolerated if doc["kind"] == "ResourceFlavor")["spec"].pop("tolerations")
    assert len(unmatched_flavors(untolerated, pools)) == 1
    bare = load_stack("azure-ndh200").data
    assert planned_pools(program(bare)) == []
    assert unmatched_flavors(exported(bare), []) != []


def test_bare_nodes_are_said_plainly() -> None:
    result = validate_mapping("aws-p5e", load_stack("aws-p5e").data)
    assert isinstance(result, Valid)
    plan = deployment(result.spec)
    assert plan is not None
    (line,) = [item for item in plan.todo if item.startswith("scheduler:")]
    assert "none created (scheduler.kind none)" in line and "bare VMs" in line and "scheduler.kind eks" in line
    assert not any(item.startswith("scheduler:") for item in plan.creates)


def test_eks_node_group_is_built_on_the_launch_template(program: Callable[..., Any]) -> None:
    outcome = program(load_stack("aws-p6-eks").data)
    assert outcome.ok, outcome.errors
    assert of_type(outcome, "autoscaling/group:Group") == []  # the node group makes its own
    group = one(outcome, "eks/nodeGroup:NodeGroup").inputs
    template = one(outcome, "LaunchTemplate").inputs
    assert group["clusterName"] == "ml" and group["nodeGroupName"] == "train-b200"
    assert group["launchTemplate"]["id"] == "<train-b200-template>"
    assert group["subnetIds"] == ["<train-fabric-subnet>"]
    assert group["capacityType"] == "CAPACITY_BLOCK" and group["amiType"] == "AL2023_x86_64_NVIDIA"
    assert group["scalingConfig"] == {"minSize": 8.0, "maxSize": 8.0, "desiredSize": 8.0}
    # EKS refuses a template with a subnet or an instance profile; every EFA stays
    assert "iamInstanceProfile" not in template and "imageId" not in template
    interfaces = template["networkInterfaces"]
    assert not any("subnetId" in nic for nic in interfaces)
    assert [nic["interfaceType"] for nic in interfaces].count("efa-only") == 8
    assert "<eks cluster security group>" in interfaces[0]["securityGroups"]
    assert template["instanceMarketOptions"] == {"marketType": "capacity-block"}
    assert base64.b64decode(template["userData"]).decode().startswith("MIME-Version: 1.0\n")
    # the node role of the managed node group carries EKS's node policies
    policies = {registration.inputs["policyArn"] for registration in of_type(outcome, "RolePolicyAttachment")}
    assert {"arn:aws:iam::aws:policy/AmazonEKSWorkerNodePolicy", "arn:aws:iam::aws:policy/AmazonEKS_CNI_Policy",
            "arn:aws:iam::aws:policy/AmazonEC2ContainerRegistryReadOnly"} <= policies
    node_group = one(outcome, "eks/nodeGroup:NodeGroup")
    assert node_group.dependencies["nodeRoleArn"] == (one(outcome, "iam/role:Role").urn,)


def topologies(documents: list[dict[str, Any]]) -> dict[str, list[str]]:
    return {doc["metadata"]["name"]: [level["nodeLabel"] for level in doc["spec"]["levels"]]
            for doc in documents if doc["kind"] == "Topology"}


def test_p6_b200_has_a_fourth_topology_layer() -> None:
    layers = [f"topology.k8s.aws/network-node-layer-{layer}" for layer in (1, 2, 3, 4)]
    documents = exported(load_stack("aws-p6-eks").data)
    assert topologies(documents) == {"train-fabric": [*layers, "kubernetes.io/hostname"]}
    whole = next(doc for doc in documents if doc["kind"] == "Job" and doc["metadata"]["name"].endswith("whole-pool"))
    assert whole["spec"]["template"]["metadata"]["annotations"] == {
        "kueue.x-k8s.io/podset-preferred-topology": layers[3]}
    # p5e and p6-b200 in one stack: each flavor names the Topology of its own layers
    data = load_stack("aws-p6-eks").data
    data["node_pools"].append({"name": "h200", "nodes": 2, "instance_type": "p5e.48xlarge",
                               "cloud": {"reservation": "none", "market": "on-demand"}})
    mixed = exported(data)
    assert topologies(mixed) == {"train-fabric": [*layers, "kubernetes.io/hostname"],
                                 "train-fabric-3": [*layers[:3], "kubernetes.io/hostname"]}
    assert {doc["metadata"]["name"]: doc["spec"]["topologyName"] for doc in mixed if doc["kind"] == "ResourceFlavor"} \
        == {"train-b200": "train-fabric", "train-h200": "train-fabric-3"}


def test_gke_jobs_attach_the_rdma_networks_the_stack_declares(program: Callable[..., Any]) -> None:
    data = load_stack("gcp-a3ultra-gke").data
    outcome = program(data)
    assert outcome.ok, outcome.errors
    pool = one(outcome, "container/nodePool:NodePool").inputs
    assert pool["cluster"] == "ml" and pool["location"] == "us-central1" and pool["nodeLocations"] == ["us-central1-b"]
    assert pool["nodeConfig"]["guestAccelerators"][0]["type"] == "nvidia-h200-141gb"
    assert pool["nodeConfig"]["reservationAffinity"]["values"] == ["a3ultra-reservation"]
    additional = pool["networkConfig"]["additionalNodeNetworkConfigs"]
    assert [item["subnetwork"] for item in additional] == [
        "<train-storage-subnet>", *(f"<train-fabric-rdma-nic{index}>" for index in range(8))]
    assert of_type(outcome, "InstanceGroupManager") == [] and of_type(outcome, "InstanceTemplate") == []
    objects = list(yaml.safe_load_all(outcome.outputs["kubernetes_networks"]))
    networks = {doc["metadata"]["name"] for doc in objects if doc["kind"] == "Network"}
    params = {doc["metadata"]["name"]: doc["spec"] for doc in objects if doc["kind"] == "GKENetworkParamSet"}
    assert params["rdma-3"] == {"vpc": "<train-fabric-rdma-vpc>", "vpcSubnet": "<train-fabric-rdma-nic3>",
                                "deviceMode": "RDMA"}
    assert params["gvnic-1"]["deviceMode"] == "NetDevice"
    for job in (doc for doc in exported(data) if doc["kind"] == "Job"):
        annotations = job["spec"]["template"]["metadata"]["annotations"]
        assert annotations["networking.gke.io/default-interface"] == "eth0"
        interfaces = json.loads(annotations["networking.gke.io/interfaces"])
        assert interfaces[0] == {"interfaceName": "eth0", "network": "default"}
        assert [item["interfaceName"] for item in interfaces[1:]] == [f"eth{index}" for index in range(2, 10)]
        assert {item["network"] for item in interfaces[1:]} <= networks  # every one declared by the stack
        # the gIB plugin is where GKE's installer puts it on the node, mounted where NCCL looks
        volumes = {volume["name"]: volume["hostPath"]["path"] for volume in job["spec"]["template"]["spec"]["volumes"]}
        mounts = {mount["name"]: mount["mountPath"]
                  for mount in job["spec"]["template"]["spec"]["containers"][0]["volumeMounts"]}
        assert [(volumes[name], mounts[name]) for name in volumes] == [("/home/kubernetes/bin/gib", "/usr/local/gib")]


def _with(name: str, **scheduler: Any) -> dict[str, Any]:
    data = load_stack(name).data
    data["scheduler"] = scheduler
    return data


@pytest.mark.parametrize("data, rule, path, words", [
    (_with("aws-p5e", kind="gke", cluster="ml"), "SCHEMA", "scheduler.kind", "use kind: eks"),
    (_with("aws-p6-eks", kind="eks"), "SCHEMA", "scheduler.cluster", "required with kind eks"),
    (_with("aws-p5e", kind="eks", cluster="ml"), "SCHEMA", "cloud.vpc_id", "cluster's VPC"),
    (_with("azure-ndh200", kind="aks", cluster="ml"), "SCHEMA", "scheduler.resource_group", "resource group"),
    (_with("gcp-a3ultra", kind="gke", cluster="ml", resource_group="rg"), "SPEC-IGNORED",
     "scheduler.resource_group", "kind aks only"),
    (_with("gcp-a3ultra", kind="none", cluster="ml"), "SPEC-IGNORED", "scheduler.cluster", "kind none"),
    (_with("prod", kind="eks", cluster="ml"), "SPEC-IGNORED", "scheduler", "cloud target's"),
], ids=["wrong-kind", "no-cluster", "eks-own-vpc", "aks-no-group", "gke-resource-group", "none-cluster", "onprem"])
def test_scheduler_mistakes_name_the_key(data: dict[str, Any], rule: str, path: str, words: str) -> None:
    found = [finding for finding in validate_mapping("t", data).findings if finding.path == path]
    assert found and found[0].rule == rule and words in found[0].message + found[0].hint, found


def test_aks_pool_names_fit_and_stay_apart() -> None:
    data = _with("azure-ndh200", kind="aks", cluster="ml", resource_group="rg")
    data["node_pools"] = [{"name": "h200-pool-number-one", "nodes": 2, "instance_type": "Standard_ND96isr_H200_v5"}]
    (long,) = [f for f in validate_mapping("t", data).findings if f.path == "node_pools[0].name"]
    assert long.rule == "SCHEMA" and "1-12" in long.message
    data["node_pools"] = [{"name": name, "nodes": 2, "instance_type": "Standard_ND96isr_H200_v5"}
                          for name in ("h-200", "h2-00")]
    (clash,) = [f for f in validate_mapping("t", data).findings if f.path == "node_pools[1].name"]
    assert "both be node pool 'h200'" in clash.message


def test_gke_refuses_tcpx_machines() -> None:
    data = cloud_stack("gcp", "a3-megagpu-8g")
    data["scheduler"] = {"kind": "gke", "cluster": "ml"}
    (found,) = [f for f in validate_mapping("t", data).findings if f.path == "node_pools[0].instance_type"]
    assert found.rule == "SCHEMA" and "GPUDirect-TCPX" in found.message


def test_renaming_a_pool_keeps_its_node_pool(program: Callable[..., Any]) -> None:
    """A node pool cannot be renamed in place: a renamed stack pool keeps the provider's name and
    carries the old URN as an alias, so the GPU nodes are not replaced."""
    data = load_stack("aws-p6-eks").data
    before = one(program(data), "eks/nodeGroup:NodeGroup")
    data["node_pools"][0].update(name="blackwell", previous_names=["b200"])
    after = one(program(data), "eks/nodeGroup:NodeGroup")
    assert after.inputs["nodeGroupName"] == before.inputs["nodeGroupName"] == "train-b200"
    assert after.inputs["labels"] == {"gpu-cluster.io/pool": "blackwell"}
    assert before.urn in after.aliases
