"""The cloud instance catalog's newer types (p4de, p6-b300, p6e-gb200, ND A100 v4, ND GB200 v6,
A4X), each with its source; what a hint may suggest; and the image a pool of each architecture boots."""

from __future__ import annotations

from typing import Any

import pytest
from conftest import run
from test_components_support import cloud_stack, one, run_program

from cluster.catalog import load_catalog
from cluster.pipeline import Valid

NEW = [("aws", "p4de.24xlarge"), ("aws", "p6-b300.48xlarge"), ("aws", "p6e-gb200.36xlarge"),
       ("azure", "Standard_ND96asr_v4"), ("azure", "Standard_ND96amsr_A100_v4"),
       ("azure", "Standard_ND128isr_NDR_GB200_v6"), ("gcp", "a4x-highgpu-4g")]


def rules(data: dict[str, Any]) -> set[tuple[str, str, str]]:
    return {(finding.rule, str(finding.severity), finding.path) for finding in run(data).findings}


@pytest.mark.parametrize("target, instance_type", NEW)
def test_each_new_type_has_a_source_and_its_gpu(target: str, instance_type: str) -> None:
    catalog = load_catalog()
    entry = catalog.instances[target][instance_type]
    assert entry.source.strip() and entry.nccl.source.strip()
    assert entry.gpu in catalog.gpus and catalog.gpus[entry.gpu].gpus_per_node == entry.gpus
    assert entry.fabric.count * entry.fabric.gbps <= entry.total_gbps


@pytest.mark.parametrize("target, instance_type, cloud, expected", [
    # A100 at 4 x 100G EFA for 8 GPUs: 50 Gbps per GPU, as p4d (FACTS.md 1.1).
    ("aws", "p4de.24xlarge", {}, {("FAB-GPU-NIC", "error", "node_pools[0].instance_type"),
                                  ("FAB-GPU-NIC", "warning", "node_pools[0].instance_type")}),
    ("aws", "p6-b300.48xlarge", {}, set()),
    # Azure HDR: 200 Gbps per GPU, at the minimum, below the recommended 400.
    ("azure", "Standard_ND96asr_v4", {}, {("FAB-GPU-NIC", "warning", "node_pools[0].instance_type")}),
    ("azure", "Standard_ND96amsr_A100_v4", {}, {("FAB-GPU-NIC", "warning", "node_pools[0].instance_type")}),
    # Grace (arm64): an image of its own on Azure and AWS; Google has an arm64 default.
    ("azure", "Standard_ND128isr_NDR_GB200_v6", {}, {("SCHEMA", "error", "node_pools[0].cloud.image")}),
    ("azure", "Standard_ND128isr_NDR_GB200_v6", {"image": "example:ubuntu-arm64:2404:latest"}, set()),
    ("gcp", "a4x-highgpu-4g", {}, set()),
    # Described, not deployed: its network cards pair up (ParallelCluster PR 6930).
    ("aws", "p6e-gb200.36xlarge", {"image": "ami-0123456789abcdef0"},
     {("SCHEMA", "error", "node_pools[0].instance_type")}),
])
def test_what_each_new_type_validates_to(target: str, instance_type: str, cloud: dict[str, Any],
                                         expected: set[tuple[str, str, str]]) -> None:
    found = {item for item in rules(cloud_stack(target, instance_type, **cloud)) if item[0] != "SPEC-IGNORED"}
    assert {item for item in found if item[0] in ("FAB-GPU-NIC", "SCHEMA")} == expected


def test_an_unknown_types_hint_suggests_only_types_that_would_pass() -> None:
    """p4d / p4de (50 Gbps per GPU) fail FAB-GPU-NIC, p6e-gb200 is not deployed: never suggested."""
    (finding,) = run(cloud_stack("aws", "p5.48xlargee")).findings
    assert finding.path == "node_pools[0].instance_type"
    suggested = finding.hint.removeprefix("use one of ").split(" (docs")[0].split(", ")
    assert suggested == ["p5.48xlarge", "p5e.48xlarge", "p5en.48xlarge", "p6-b200.48xlarge", "p6-b300.48xlarge"]
    for name in suggested:  # each one it names validates
        result = run(cloud_stack("aws", name))
        assert isinstance(result, Valid) and result.ok, (name, result.findings)
    # A policy that allows less per GPU lets the hint name the A100 types too.
    lenient = {**cloud_stack("aws", "p5.48xlargee"), "policy": {"min_gbps_per_gpu": 50, "recommended_gbps_per_gpu": 400}}
    assert "p4de.24xlarge" in run(lenient).findings[0].hint


def test_a_cluster_image_cannot_serve_two_architectures() -> None:
    data = cloud_stack("gcp", "a4-highgpu-8g", image="projects/p/global/images/x86")
    data["node_pools"].append({"name": "grace", "nodes": 2, "instance_type": "a4x-highgpu-4g"})
    assert {item for item in rules(data) if item[0] == "SCHEMA"} == {
        ("SCHEMA", "error", "node_pools[0].cloud.image"), ("SCHEMA", "error", "node_pools[1].cloud.image")}
    data["node_pools"][1]["cloud"] = {"image": "projects/p/global/images/arm"}
    assert not {item for item in rules(data) if item[0] == "SCHEMA"}


def test_a4x_boots_the_arm64_accelerator_image_on_four_mrdma_nics() -> None:
    outcome = run_program(cloud_stack("gcp", "a4x-highgpu-4g", reservation="a4x-block"))
    assert outcome.ok, outcome.errors
    template = one(outcome, "InstanceTemplate").inputs
    assert template["disks"][0]["sourceImage"].endswith("/family/ubuntu-accelerator-2404-arm64-with-nvidia-580")
    assert [nic["nicType"] for nic in template["networkInterfaces"]] == ["GVNIC", "GVNIC"] + ["MRDMA"] * 4
    assert template["scheduling"]["provisioningModel"] == "RESERVATION_BOUND"


def test_p6_b300_puts_efa_on_cards_1_to_16_and_the_primary_alone_on_card_0() -> None:
    outcome = run_program(cloud_stack("aws", "p6-b300.48xlarge"))
    assert outcome.ok, outcome.errors
    nics = one(outcome, "LaunchTemplate").inputs["networkInterfaces"]
    assert [(int(nic["networkCardIndex"]), int(nic["deviceIndex"]), nic["interfaceType"]) for nic in nics] == \
        [(0, 0, "interface")] + [(card, 0, "efa-only") for card in range(1, 17)]
