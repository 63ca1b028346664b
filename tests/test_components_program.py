"""The Pulumi program as a whole, under the SDK's mocks: what it registers, where, and never
anything for a failing design."""

from __future__ import annotations

import copy
import subprocess
import sys
from collections import Counter
from collections.abc import Callable
from typing import Any

import pytest
from test_components_support import ROOT, cloud_stack, of_type, run_program

from cluster.loader import load_stack
from cluster.pipeline import Valid, validate_mapping
from cluster.report import summary

CLOUD_STACKS = [
    cloud_stack("aws", "p5e.48xlarge"),
    cloud_stack("gcp", "a3-ultragpu-8g"),
    cloud_stack("gcp", "a3-megagpu-8g"),
    cloud_stack("azure", "Standard_ND96isr_H200_v5"),
]
COMPONENT_PARENTS = {
    "gpu-cluster:cluster:GpuCluster": "pulumi:pulumi:Stack",
    "gpu-cluster:management:ManagementNetwork": "gpu-cluster:cluster:GpuCluster",
    "gpu-cluster:storage:StorageNetwork": "gpu-cluster:cluster:GpuCluster",
    "gpu-cluster:fabric:GpuFabric": "gpu-cluster:cluster:GpuCluster",
    "gpu-cluster:node_pool:GpuNodePool": "gpu-cluster:cluster:GpuCluster",
}


@pytest.fixture()
def program() -> Callable[..., Any]:
    return run_program


def _ids(data: dict[str, Any]) -> str:
    return f"{data['target']}-{data['node_pools'][0].get('instance_type', 'onprem')}"


@pytest.mark.parametrize("data", [
    cloud_stack("aws", "p4d.24xlarge"),  # 4 x 100G EFA for 8 GPUs: 50 Gbps per GPU
    cloud_stack("gcp", "a3-highgpu-8g"),  # 4 x 200G for 8 GPUs: 100 Gbps per GPU
], ids=_ids)
def test_fab_gpu_nic_stops_the_program_before_any_resource(program: Callable[..., Any], data: dict[str, Any]) -> None:
    outcome = program(data)
    assert outcome.resources == []
    assert outcome.failure is not None and "nothing was registered" in outcome.failure
    assert any(error.startswith("FAB-GPU-NIC (error)") for error in outcome.errors)
    assert outcome.outputs == {}


def test_every_finding_is_logged_not_just_the_first(program: Callable[..., Any]) -> None:
    data = load_stack("legacy").data
    expected = validate_mapping("legacy", data).findings
    outcome = program(data, stack="legacy")
    assert outcome.resources == []
    assert len(outcome.errors) == len(expected) >= 2
    assert {error.split(" ")[0] for error in outcome.errors} >= {"FAB-OVERSUB", "FAB-ISOLATION"}


def test_schema_errors_register_nothing(program: Callable[..., Any]) -> None:
    data = cloud_stack("aws", "p5e.48xlarge")
    data["node_pools"][0]["nodez"] = 3
    outcome = program(data)
    assert outcome.resources == [] and outcome.failure is not None
    assert any(error.startswith("SCHEMA") and "nodez" in error for error in outcome.errors)


@pytest.mark.parametrize("data", [*CLOUD_STACKS, load_stack("prod").data], ids=_ids)
def test_parents_form_the_component_tree(program: Callable[..., Any], data: dict[str, Any]) -> None:
    outcome = program(data)
    by_urn = {registration.urn: registration for registration in outcome.resources}
    for registration in outcome.resources:
        parent_type = by_urn[registration.parent].type if registration.parent in by_urn else "pulumi:pulumi:Stack"
        if registration.custom:
            # Cloud resources and rendered files hang under a concern component (cluster-wide
            # files may hang under GpuCluster itself).
            assert parent_type.startswith("gpu-cluster:"), (registration.name, parent_type)
        else:
            assert COMPONENT_PARENTS[registration.type] == parent_type
        # The URN's type chains every ancestor's type but the stack's, as the engine's does.
        parent = by_urn.get(registration.parent)
        chain = registration.type if parent is None else f"{parent.urn.split('::')[2]}${registration.type}"
        assert registration.urn.split("::")[2] == chain
    assert Counter(r.type for r in outcome.resources if not r.custom) == Counter(dict.fromkeys(COMPONENT_PARENTS, 1))


@pytest.mark.parametrize("data", CLOUD_STACKS, ids=_ids)
def test_cloud_resource_count_does_not_grow_with_nodes(program: Callable[..., Any], data: dict[str, Any]) -> None:
    small, large = copy.deepcopy(data), copy.deepcopy(data)
    small["node_pools"][0]["nodes"] = 2
    large["node_pools"][0]["nodes"] = 96
    counts = [Counter(r.type for r in program(stack).resources) for stack in (small, large)]
    assert counts[0] == counts[1]


@pytest.mark.parametrize("data", [*CLOUD_STACKS, load_stack("dev").data], ids=_ids)
def test_adding_a_pool_keeps_every_existing_name_and_urn(program: Callable[..., Any], data: dict[str, Any]) -> None:
    before = program(data)
    grown = copy.deepcopy(data)
    second = copy.deepcopy(grown["node_pools"][0])
    second["name"] = "second"
    grown["node_pools"].append(second)
    after = program(grown)
    old, new = {r.urn for r in before.resources}, {r.urn for r in after.resources}
    assert old < new
    added = {r.name for r in after.resources if r.urn not in old}
    assert any("second" in name for name in added)


def test_outputs_are_the_design_summary(program: Callable[..., Any]) -> None:
    data = load_stack("prod").data
    outcome = program(data, stack="prod", artifacts_dir="out/prod")
    result = validate_mapping("prod", data)
    assert isinstance(result, Valid)
    design = summary(result.spec, result.topology)
    assert outcome.outputs["gpus"] == design["gpus"] == 512
    assert outcome.outputs["gbps_per_gpu"] == design["gbps_per_gpu"]
    assert outcome.outputs["oversubscription"] == design["oversubscription"]
    assert outcome.outputs["switches"] == design["switches"]
    assert outcome.outputs["artifacts_dir"] == "out/prod"
    assert set(outcome.outputs["node_group_ids"]) == {"h200"}


def test_cloud_outputs_name_the_groups(program: Callable[..., Any]) -> None:
    outcome = program(cloud_stack("aws", "p5e.48xlarge"))
    group = of_type(outcome, "autoscaling/group:Group")[0]
    assert outcome.outputs["node_group_ids"] == {"gpu": f"<{group.name}>"}
    assert outcome.outputs["artifacts_dir"] is None


def test_provider_sdks_load_only_for_their_target() -> None:
    code = (
        "import sys\n"
        "import cluster.cli, cluster.commands.plan\n"
        "assert 'pulumi' not in sys.modules, 'cluster/ imported pulumi'\n"
        "from cluster.loader import load_stack\n"
        "from components import offline\n"
        "assert offline.run('dev', load_stack('dev').data).resources\n"
        "loaded = sorted(m for m in ('pulumi_aws', 'pulumi_gcp', 'pulumi_azure_native') if m in sys.modules)\n"
        "assert loaded == [], loaded\n"
        "offline.run('t', {'name': 't', 'target': 'aws', 'cloud': {'region': 'us-east-1', 'zone': 'us-east-1a'},\n"
        "                  'node_pools': [{'name': 'p', 'nodes': 2, 'instance_type': 'p5.48xlarge'}]})\n"
        "assert 'pulumi_aws' in sys.modules and 'pulumi_gcp' not in sys.modules\n"
    )
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
