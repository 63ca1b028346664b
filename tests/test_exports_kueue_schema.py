"""Kueue objects against Kueue's own CRDs: every exported object validates against the
openAPIV3Schema of its kind at its apiVersion (../shared/vendor/kueue, upstream CRDs with
provenance), uses no field the API server would prune, and meets the CEL rules of those CRDs
that our objects can break (hand-written below, each also shown to catch a broken object)."""

from __future__ import annotations

import copy
from collections.abc import Callable
from functools import cache
from typing import Any

import jsonschema
import pytest
import yaml
from conftest import ROOT, run, stack

from cluster.exports.kubernetes import HOSTNAME, kueue_yaml
from cluster.pipeline import Result, Valid, validate

CRDS = ROOT.parent / "shared" / "vendor" / "kueue" / "config" / "components" / "crd" / "bases"
KINDS = {"Topology": "topologies", "ResourceFlavor": "resourceflavors", "ClusterQueue": "clusterqueues",
         "LocalQueue": "localqueues"}
CASES: dict[str, Callable[[], Result]] = {
    "prod": lambda: validate("prod"),
    "superpod": lambda: validate("superpod"),
    "aws-p5e": lambda: validate("aws-p5e"),
    "gcp-a3ultra": lambda: validate("gcp-a3ultra"),
    "azure-ndh200": lambda: validate("azure-ndh200"),
    "aws-p6-eks": lambda: validate("aws-p6-eks"),
    "gcp-a3ultra-gke": lambda: validate("gcp-a3ultra-gke"),
    "azure-ndh200-aks": lambda: validate("azure-ndh200-aks"),
    "three-tier-two-vendors": lambda: run(stack(
        node_pools=[{"name": "a", "nodes": 60, "gpu": "H200"}, {"name": "b", "nodes": 10, "gpu": "MI300X"}],
        fabric={"leaf": {"ports": 16, "port_gbps": 400}, "spine": {"ports": 16, "port_gbps": 400},
                "core": {"ports": 32, "port_gbps": 400}})),
}


@cache
def crd(kind: str) -> dict[str, Any]:
    path = CRDS / f"kueue.x-k8s.io_{KINDS[kind]}.yaml"
    if not path.is_file():
        pytest.fail(f"{path} is missing: the tests need ../shared/vendor beside the repository")
    data: dict[str, Any] = yaml.safe_load(path.read_text())
    return data


def schema(kind: str, api_version: str) -> dict[str, Any]:
    version = api_version.rsplit("/", 1)[-1]
    (served,) = [item for item in crd(kind)["spec"]["versions"] if item["name"] == version]
    assert served["served"] is True and not served.get("deprecated"), f"{kind} {version} is deprecated"
    result: dict[str, Any] = served["schema"]["openAPIV3Schema"]
    return result


def documents(case: str) -> list[dict[str, Any]]:
    result = CASES[case]()
    assert isinstance(result, Valid), result.findings
    return list(yaml.safe_load_all(kueue_yaml(result.spec, result.topology)))


def kueue(docs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [doc for doc in docs if doc["apiVersion"].startswith("kueue.x-k8s.io/")]


def pruned(value: Any, node: dict[str, Any], path: str = "") -> list[str]:
    """Fields of `value` that `node` does not declare: the API server would drop them silently."""
    found: list[str] = []
    if isinstance(value, dict):
        if "properties" in node:
            for key, item in value.items():
                if key not in node["properties"]:
                    found.append(f"{path}.{key}")
                else:
                    found.extend(pruned(item, node["properties"][key], f"{path}.{key}"))
        elif isinstance(node.get("additionalProperties"), dict):
            for key, item in value.items():
                found.extend(pruned(item, node["additionalProperties"], f"{path}.{key}"))
    elif isinstance(value, list) and isinstance(node.get("items"), dict):
        for index, item in enumerate(value):
            found.extend(pruned(item, node["items"], f"{path}[{index}]"))
    return found


# --- The CEL rules of the v1beta2 CRDs (x-kubernetes-validations) that exported objects can break.


def cel_problems(doc: dict[str, Any]) -> list[str]:
    spec = doc.get("spec", {})
    problems = []
    if doc["kind"] == "Topology":
        labels = [level["nodeLabel"] for level in spec["levels"]]
        if len(set(labels)) != len(labels):
            problems.append("levels: must be unique")
        if HOSTNAME in labels and labels[-1] != HOSTNAME:
            problems.append("levels: the kubernetes.io/hostname label can only be used at the lowest level")
    elif doc["kind"] == "ResourceFlavor":
        if "topologyName" in spec and len(spec.get("nodeLabels", {})) < 1:
            problems.append("at least one nodeLabel is required when topology is set")
    elif doc["kind"] == "ClusterQueue":
        for index, group in enumerate(spec.get("resourceGroups", [])):
            for flavor in group["flavors"]:
                if len(flavor["resources"]) != len(group["coveredResources"]):
                    problems.append(f"resourceGroups[{index}]: flavors must have the same number of resources as "
                                    "the coveredResources")
                # The webhook and the field's description: the same resources, in the same order.
                elif [item["name"] for item in flavor["resources"]] != group["coveredResources"]:
                    problems.append(f"resourceGroups[{index}]: flavor {flavor['name']} lists its resources in "
                                    "another order than coveredResources")
        if "cohortName" not in spec and any("borrowingLimit" in item for group in spec.get("resourceGroups", [])
                                            for flavor in group["flavors"] for item in flavor["resources"]):
            problems.append("borrowingLimit must be nil when cohort is empty")
        resources = [name for group in spec.get("resourceGroups", []) for name in group["coveredResources"]]
        flavors = [flavor["name"] for group in spec.get("resourceGroups", []) for flavor in group["flavors"]]
        if len(set(resources)) != len(resources) or len(set(flavors)) != len(flavors):
            problems.append("each resource and each flavor can only form part of one resource group")
    return problems


@pytest.mark.parametrize("case", sorted(CASES))
def test_every_kueue_object_fits_the_crd_schema_of_its_version(case: str) -> None:
    objects = kueue(documents(case))
    assert {doc["kind"] for doc in objects} == set(KINDS)
    for doc in objects:
        assert doc["apiVersion"] == "kueue.x-k8s.io/v1beta2", doc["kind"]
        node = schema(doc["kind"], doc["apiVersion"])
        jsonschema.validate(doc, node)
        assert pruned(doc["spec"], node["properties"]["spec"], "spec") == [], doc["kind"]
        assert cel_problems(doc) == [], (doc["kind"], doc["metadata"]["name"])


def test_v1beta2_is_the_version_the_crds_store() -> None:
    for kind in KINDS:
        stored = [item["name"] for item in crd(kind)["spec"]["versions"] if item.get("storage")]
        assert stored == ["v1beta2"], kind
        assert [item["name"] for item in crd(kind)["spec"]["versions"] if item.get("deprecated")] == ["v1beta1"]


def _one(objects: list[dict[str, Any]], kind: str) -> dict[str, Any]:
    (found,) = [copy.deepcopy(doc) for doc in objects if doc["kind"] == kind]
    return found


def test_the_checks_catch_broken_objects() -> None:
    """Each check above fails on an object broken the way it guards against."""
    objects = kueue(documents("aws-p5e"))
    queue = _one(objects, "ClusterQueue")
    queue["spec"]["resourceGroups"][0]["flavors"][0]["resources"].pop()
    assert "flavors must have the same number of resources" in cel_problems(queue)[0]
    queue = _one(objects, "ClusterQueue")
    queue["spec"]["resourceGroups"][0]["flavors"][0]["resources"].reverse()
    assert "another order" in cel_problems(queue)[0]
    queue = _one(objects, "ClusterQueue")
    queue["spec"]["resourceGroups"].append(copy.deepcopy(queue["spec"]["resourceGroups"][0]))
    assert "only form part of one resource group" in cel_problems(queue)[0]
    queue = _one(objects, "ClusterQueue")
    queue["spec"]["resourceGroups"][0]["flavors"][0]["resources"][0]["borrowingLimit"] = 1
    assert cel_problems(queue) == ["borrowingLimit must be nil when cohort is empty"]
    topology = _one(objects, "Topology")
    topology["spec"]["levels"].reverse()
    assert "lowest level" in cel_problems(topology)[0]
    flavor = _one(objects, "ResourceFlavor")
    flavor["spec"]["nodeLabels"] = {}
    assert cel_problems(flavor) == ["at least one nodeLabel is required when topology is set"]
    # v1beta1's ClusterQueue field `cohort` is gone in v1beta2: the server would prune it.
    queue = _one(objects, "ClusterQueue")
    queue["spec"]["cohort"] = "all"
    assert pruned(queue["spec"], schema("ClusterQueue", "kueue.x-k8s.io/v1beta2")["properties"]["spec"],
                  "spec") == ["spec.cohort"]
    # A quota that is not a Kubernetes quantity is refused by the schema itself.
    queue = _one(objects, "ClusterQueue")
    queue["spec"]["resourceGroups"][0]["flavors"][0]["resources"][1]["nominalQuota"] = "2 TiB"
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(queue, schema("ClusterQueue", queue["apiVersion"]))


def test_the_vendored_crds_are_the_ones_provenance_names() -> None:
    provenance = (CRDS.parents[3] / "PROVENANCE.md").read_text()
    assert "v1beta2 stored" in provenance and "kubernetes-sigs/kueue" in provenance
    assert all((CRDS / f"kueue.x-k8s.io_{name}.yaml").is_file() for name in KINDS.values())
