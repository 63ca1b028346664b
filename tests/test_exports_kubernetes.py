"""Kubernetes node labels and Kueue TAS objects: parsed back as YAML and checked for structure."""

from __future__ import annotations

import itertools
import re
from typing import Any

import pytest
import yaml
from conftest import run, stack
from test_exports_nccl import cluster_of

from cluster.catalog import load_catalog
from cluster.exports.files import export_files
from cluster.exports.kubernetes import (
    HOSTNAME,
    NVLINK_DOMAIN,
    POD,
    POOL,
    PREFERRED,
    RAIL_GROUP,
    REQUIRED,
    kueue_yaml,
    label_script,
    node_labels_yaml,
)
from cluster.pipeline import Result, Valid, validate
from cluster.topology import FABRIC

LABEL_VALUE = re.compile(r"^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$")
DNS_PREFIX = r"([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?"
LABEL_KEY = re.compile(DNS_PREFIX + r"[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$")
THREE_TIER = stack(
    node_pools=[{"name": "a", "nodes": 60, "gpu": "H200"}, {"name": "b", "nodes": 10, "gpu": "MI300X"}],
    fabric={"leaf": {"ports": 16, "port_gbps": 400}, "spine": {"ports": 16, "port_gbps": 400},
            "core": {"ports": 32, "port_gbps": 400}},
)
NVL72 = stack(
    node_pools=[{"name": "gb200", "nodes": 72, "gpu": "GB200", "gpus_per_node": 4}],
    fabric={"leaf": {"ports": 64, "port_gbps": 400}, "spine": {"ports": 64, "port_gbps": 400}, "leaves": 16},
)


def _parsed(result: Result) -> tuple[dict[str, dict[str, str]], list[dict[str, Any]]]:
    assert isinstance(result, Valid), result.findings
    labels = yaml.safe_load(node_labels_yaml(result.spec, result.topology))
    documents = list(yaml.safe_load_all(kueue_yaml(result.spec, result.topology)))
    return labels, documents


def _kind(documents: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    return [doc for doc in documents if doc["kind"] == kind]


CASES = {"prod": lambda: validate("prod"), "superpod": lambda: validate("superpod"),
         "three-tier": lambda: run(THREE_TIER), "nvl72": lambda: run(NVL72)}


@pytest.mark.parametrize("case", sorted(CASES))
def test_kueue_topology_levels_match_the_node_labels(case: str) -> None:
    result = CASES[case]()
    labels, documents = _parsed(result)
    assert isinstance(result, Valid)
    every_host = [host for hosts in result.topology.hosts_by_pool.values() for host in hosts]
    assert list(labels) == every_host
    (topology,) = _kind(documents, "Topology")
    assert topology["apiVersion"] == "kueue.x-k8s.io/v1beta2"
    levels = [level["nodeLabel"] for level in topology["spec"]["levels"]]
    assert 1 <= len(levels) <= 16 and len(set(levels)) == len(levels)
    assert levels[-1] == HOSTNAME and HOSTNAME not in levels[:-1]
    for host, own in labels.items():
        assert set(levels[:-1]) <= set(own), host  # every node carries every level's label
        for key, value in own.items():
            assert LABEL_KEY.match(key) and LABEL_VALUE.match(value) and len(value) <= 63, (key, value)
    # Each level nests in the one above it: a domain never straddles two parents.
    for upper, lower in itertools.pairwise(levels[:-1]):
        parents: dict[str, set[str]] = {}
        for own in labels.values():
            parents.setdefault(own[lower], set()).add(own[upper])
        assert all(len(found) == 1 for found in parents.values()), (upper, lower)
    flavors = _kind(documents, "ResourceFlavor")
    assert {flavor["spec"]["topologyName"] for flavor in flavors} == {topology["metadata"]["name"]}
    assert isinstance(result, Valid)
    assert {flavor["spec"]["nodeLabels"][POOL] for flavor in flavors} == {pool.name for pool in result.spec.pools}
    (queue,) = _kind(documents, "ClusterQueue")
    quotas = {flavor["name"]: flavor["resources"][0]["nominalQuota"]
              for group in queue["spec"]["resourceGroups"] for flavor in group["flavors"]}
    assert quotas == {f"{result.spec.name}-{pool.name}": pool.gpus for pool in result.spec.pools}
    (local,) = _kind(documents, "LocalQueue")
    for job in _kind(documents, "Job"):
        assert job["metadata"]["labels"]["kueue.x-k8s.io/queue-name"] == local["metadata"]["name"]
        assert job["spec"]["template"]["metadata"]["annotations"][REQUIRED] in levels


def test_rail_group_label_follows_the_cabling() -> None:
    result = validate("superpod")
    labels, documents = _parsed(result)
    assert isinstance(result, Valid)
    graph = result.topology.graph
    for host, own in labels.items():
        leaves = sorted(peer for peer in graph[host] if FABRIC in graph[host][peer])
        assert leaves == [f"{own[RAIL_GROUP]}-r{rail}" for rail in range(8)], host
    assert labels["dgx-node-033"][RAIL_GROUP] == "leaf-002"
    assert labels["dgx-node-127"][NVLINK_DOMAIN] == "dgx-nvl-127"  # 8-GPU boards: one node per domain
    jobs = {job["metadata"]["name"]: job for job in _kind(documents, "Job")}
    assert jobs["superpod-one-node"]["spec"]["parallelism"] == 1
    group_job = jobs["superpod-one-rail-group"]
    assert group_job["spec"]["template"]["metadata"]["annotations"][REQUIRED] == RAIL_GROUP
    assert group_job["spec"]["parallelism"] == 31  # the smallest SU holds 31 DGX (one slot is UFM's)
    requests = group_job["spec"]["template"]["spec"]["containers"][0]["resources"]["requests"]
    assert requests == {"nvidia.com/gpu": 8}


def test_three_tiers_add_the_pod_level_and_amd_gets_its_resource() -> None:
    labels, documents = _parsed(run(THREE_TIER))
    (topology,) = _kind(documents, "Topology")
    assert [level["nodeLabel"] for level in topology["spec"]["levels"]] == [POD, RAIL_GROUP, HOSTNAME]
    (queue,) = _kind(documents, "ClusterQueue")
    assert sorted(group["coveredResources"][0] for group in queue["spec"]["resourceGroups"]) == \
        ["amd.com/gpu", "nvidia.com/gpu"]
    assert len({own[POD] for own in labels.values()}) > 1


def test_nvl72_domains_become_a_level_when_they_nest_in_rail_groups() -> None:
    labels, documents = _parsed(run(NVL72))
    (topology,) = _kind(documents, "Topology")
    assert [level["nodeLabel"] for level in topology["spec"]["levels"]] == [RAIL_GROUP, NVLINK_DOMAIN, HOSTNAME]
    assert labels["gb200-node-018"][NVLINK_DOMAIN] == "gb200-nvl-001"
    assert labels["gb200-node-019"][NVLINK_DOMAIN] == "gb200-nvl-002"


def test_label_script_sets_every_label() -> None:
    result = validate("prod")
    assert isinstance(result, Valid)
    script = label_script(result.spec, result.topology)
    lines = [line for line in script.splitlines() if line.startswith("kubectl label node ")]
    assert len(lines) == 64
    assert lines[0] == ("kubectl label node h200-node-001 --overwrite gpu-cluster.io/pool=h200 "
                        "gpu-cluster.io/nvlink-domain=h200-nvl-001 gpu-cluster.io/rail-group=leaf-001 "
                        "gpu-cluster.io/fabric-pod=pod-001")
    assert "&id" not in kueue_yaml(result.spec, result.topology)  # no YAML anchors for kubectl users


def _cloud(stack_name: str, **edit: Any) -> tuple[Result, list[dict[str, Any]]]:
    result = validate(stack_name) if not edit else run(edit["data"])
    assert isinstance(result, Valid), result.findings
    return result, list(yaml.safe_load_all(kueue_yaml(result.spec, result.topology)))


def test_cloud_exports_select_nodes_by_the_providers_labels_not_made_up_names() -> None:
    """Real cloud nodes are ip-10-0-32-7... or MIG / scale set instances: the exports name none,
    they select by the labels the provider's Kubernetes sets."""
    result, docs = _cloud("aws-p5e")
    assert isinstance(result, Valid)
    files = export_files(result.spec, result.topology)
    assert "kubernetes/label-nodes.sh" not in files and "kubernetes/node-labels.yaml" not in files
    assert "-node-0" not in files["kubernetes/kueue.yaml"]
    (topology,) = _kind(docs, "Topology")
    assert [level["nodeLabel"] for level in topology["spec"]["levels"]] == [
        "topology.k8s.aws/network-node-layer-1", "topology.k8s.aws/network-node-layer-2",
        "topology.k8s.aws/network-node-layer-3", HOSTNAME]
    (flavor,) = _kind(docs, "ResourceFlavor")
    assert flavor["metadata"]["name"] == "train-p5e.48xlarge"
    assert flavor["spec"]["nodeLabels"] == {"node.kubernetes.io/instance-type": "p5e.48xlarge",
                                            "topology.kubernetes.io/zone": "us-east-1a"}
    (queue,) = _kind(docs, "ClusterQueue")
    (group,) = queue["spec"]["resourceGroups"]
    assert group["coveredResources"] == ["cpu", "memory", "nvidia.com/gpu", "vpc.amazonaws.com/efa"]
    instance = load_catalog().instance("aws", "p5e.48xlarge")
    assert instance is not None
    assert {item["name"]: item["nominalQuota"] for item in group["flavors"][0]["resources"]} == {
        "cpu": 16 * instance.vcpus, "memory": f"{16 * instance.memory_gib}Gi", "nvidia.com/gpu": 128,
        "vpc.amazonaws.com/efa": 16 * 32}
    jobs = {job["metadata"]["name"]: job for job in _kind(docs, "Job")}
    whole = jobs["train-whole-pool"]["spec"]
    assert whole["parallelism"] == 16
    assert whole["template"]["metadata"]["annotations"] == {PREFERRED: "topology.k8s.aws/network-node-layer-3"}
    assert whole["template"]["spec"]["nodeSelector"] == {"node.kubernetes.io/instance-type": "p5e.48xlarge"}
    assert whole["template"]["spec"]["containers"][0]["resources"]["requests"] == {
        "nvidia.com/gpu": 8, "vpc.amazonaws.com/efa": 32}
    assert jobs["train-one-node"]["spec"]["template"]["metadata"]["annotations"] == {REQUIRED: HOSTNAME}


def test_gke_levels_are_block_subblock_host_and_the_flavor_tolerates_the_gpu_taint() -> None:
    _, docs = _cloud("gcp-a3ultra")
    (topology,) = _kind(docs, "Topology")
    assert [level["nodeLabel"] for level in topology["spec"]["levels"]] == [
        "cloud.google.com/gce-topology-block", "cloud.google.com/gce-topology-subblock",
        "cloud.google.com/gce-topology-host", HOSTNAME]
    (flavor,) = _kind(docs, "ResourceFlavor")
    assert flavor["spec"]["tolerations"] == [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}]
    (queue,) = _kind(docs, "ClusterQueue")
    assert queue["spec"]["resourceGroups"][0]["coveredResources"] == ["cpu", "memory", "nvidia.com/gpu"]
    jobs = {job["metadata"]["name"]: job for job in _kind(docs, "Job")}
    assert jobs["train-whole-pool"]["spec"]["template"]["metadata"]["annotations"] == {
        PREFERRED: "cloud.google.com/gce-topology-subblock"}


def test_azure_keeps_a_job_in_one_agent_pool_and_mixes_gpu_vendors_in_one_group() -> None:
    data = cluster_of("azure-ndh200")
    data["node_pools"] += [{"name": "more", "nodes": 4, "instance_type": "Standard_ND96isr_H200_v5"},
                           {"name": "amd", "nodes": 2, "instance_type": "Standard_ND96isr_MI300X_v5"}]
    _, docs = _cloud("", data=data)
    (topology,) = _kind(docs, "Topology")
    assert [level["nodeLabel"] for level in topology["spec"]["levels"]] == ["kubernetes.azure.com/agentpool", HOSTNAME]
    flavors = {flavor["metadata"]["name"]: flavor["spec"] for flavor in _kind(docs, "ResourceFlavor")}
    assert sorted(flavors) == ["train-standard-nd96isr-h200-v5", "train-standard-nd96isr-mi300x-v5"]
    assert flavors["train-standard-nd96isr-h200-v5"]["nodeLabels"] == {
        "node.kubernetes.io/instance-type": "Standard_ND96isr_H200_v5"}  # Azure: no cloud.zone
    (queue,) = _kind(docs, "ClusterQueue")
    (group,) = queue["spec"]["resourceGroups"]
    assert group["coveredResources"] == ["cpu", "memory", "amd.com/gpu", "nvidia.com/gpu"]
    quotas = {flavor["name"]: {item["name"]: item["nominalQuota"] for item in flavor["resources"]}
              for flavor in group["flavors"]}
    assert quotas["train-standard-nd96isr-h200-v5"]["nvidia.com/gpu"] == (16 + 4) * 8  # two pools, one type
    assert quotas["train-standard-nd96isr-h200-v5"]["amd.com/gpu"] == 0
    assert quotas["train-standard-nd96isr-mi300x-v5"]["amd.com/gpu"] == 16
    jobs = {job["metadata"]["name"]: job for job in _kind(docs, "Job")}
    assert jobs["train-whole-pool"]["spec"]["template"]["metadata"]["annotations"] == {
        REQUIRED: "kubernetes.azure.com/agentpool"}
