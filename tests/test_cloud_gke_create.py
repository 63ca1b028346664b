"""scheduler.create (gke): the stack creates the GKE cluster its node pools join, with what the RDMA
node networks need (multi-networking, GKE Dataplane V2), private nodes and a private endpoint, at the
stack file's version; the Kueue flavors still select node pools that exist."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from conftest import run
from test_cloud_scheduler import exported, planned_pools, unmatched_flavors
from test_components_support import of_type, one, run_program

from cluster.deployment import deployment
from cluster.loader import load_stack
from cluster.pipeline import Valid


def created(**scheduler: Any) -> dict[str, Any]:
    data = copy.deepcopy(load_stack("gcp-a3ultra-gke").data)
    data["scheduler"] = {"kind": "gke", "create": True, **scheduler}
    return data


def test_the_cluster_is_created_for_rdma_node_networks_and_private() -> None:
    outcome = run_program(created())
    assert outcome.ok, outcome.errors
    cluster = one(outcome, "container/cluster:Cluster")
    inputs = cluster.inputs
    assert (inputs["name"], inputs["location"]) == ("train", "us-central1")  # the stack's name, cloud.region
    assert inputs["enableMultiNetworking"] is True and inputs["datapathProvider"] == "ADVANCED_DATAPATH"
    assert inputs["privateClusterConfig"] == {"enablePrivateNodes": True, "enablePrivateEndpoint": True,
                                              "masterIpv4CidrBlock": "172.16.0.32/28"}
    assert (inputs["network"], inputs["subnetwork"]) == ("<train-management-vpc>", "<train-management-subnet>")
    assert (inputs["minMasterVersion"], inputs["releaseChannel"]) == ("1.35", {"channel": "REGULAR"})
    assert inputs["removeDefaultNodePool"] is True and inputs["deletionProtection"] is True
    # the project from the provider (the mock answers its invoke with a placeholder)
    assert inputs["workloadIdentityConfig"] == {"workloadPool": "<project>.svc.id.goog"}
    (pool,) = of_type(outcome, "container/nodePool:NodePool")
    assert pool.inputs["cluster"] == "train" and pool.inputs["location"] == "us-central1"
    assert outcome.outputs["network"]["kubernetes_cluster"] == "train"


def test_the_version_comes_from_the_stack_file() -> None:
    cluster = one(run_program(created(cluster="ml", version="1.34")), "container/cluster:Cluster")
    assert (cluster.inputs["name"], cluster.inputs["minMasterVersion"]) == ("ml", "1.34")


def test_joining_an_existing_cluster_creates_none() -> None:
    outcome = run_program(load_stack("gcp-a3ultra-gke").data)
    assert of_type(outcome, "container/cluster:Cluster") == []
    assert one(outcome, "container/nodePool:NodePool").inputs["cluster"] == "ml"


def test_every_flavor_selects_a_node_pool_of_the_created_cluster() -> None:
    data = created()
    pools = planned_pools(run_program(data))
    assert pools and unmatched_flavors(exported(data), pools) == []


@pytest.mark.parametrize("stack, scheduler, rule, path", [
    ("aws-p6-eks", {"kind": "eks", "cluster": "ml", "create": True}, "SCHEMA", "scheduler.zones"),
    ("azure-ndh200-aks", {"kind": "aks", "cluster": "ml", "create": True}, "SCHEMA", "scheduler.version"),
    ("gcp-a3ultra-gke", {"kind": "gke", "create": True, "zones": ["us-east-1a", "us-east-1b"]}, "SPEC-IGNORED",
     "scheduler.zones"),
    ("gcp-a3ultra-gke", {"kind": "gke", "cluster": "ml", "version": "1.34"}, "SPEC-IGNORED", "scheduler.version"),
    ("gcp-a3ultra-gke", {"kind": "gke", "cluster": "ML_cluster", "create": True}, "SCHEMA", "scheduler.cluster"),
])
def test_what_create_refuses(stack: str, scheduler: dict[str, Any], rule: str, path: str) -> None:
    data = {**load_stack(stack).data, "scheduler": scheduler}
    assert (rule, path) in {(f.rule, f.path) for f in run(data).findings}


def test_the_plan_shows_the_control_plane_and_how_to_reach_it() -> None:
    result = run(created())
    assert isinstance(result, Valid)
    summary = deployment(result.spec)
    assert summary is not None
    (line,) = [line for line in summary.creates if line.startswith("control plane: ")]
    assert "Google Kubernetes Engine cluster train (us-central1, created by the stack), Kubernetes 1.35" in line
    assert "private endpoint only" in line
    assert any("run kubectl from inside the management VPC" in line for line in summary.todo)
    assert not any("must have multi-networking" in line for line in summary.todo)
