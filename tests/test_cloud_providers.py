"""Every cloud resource of a cluster is created by one explicit provider built from `cloud`
(region, zone, project, subscription), and the stack's own provider settings (aws:region,
gcp:project, azure-native:location, ...) may not disagree with it."""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Any

import pytest
from conftest import ROOT
from test_components_support import assert_well_formed, cloud_stack, one

from cluster.loader import from_config, load_stack
from cluster.pipeline import Valid, check
from components import offline

PACKAGE = {"aws": "aws", "gcp": "gcp", "azure": "azure-native"}
CLOUD_STACKS = ROOT / "tests" / "data" / "cloud"


def run_with(data: dict[str, Any], provider_config: dict[str, str]) -> Any:
    outcome = offline.run("t", data, provider_config=provider_config)
    assert_well_formed(outcome)
    return outcome


@pytest.mark.parametrize("target, instance_type, inputs", [
    ("aws", "p5e.48xlarge", {"region": "us-east-1"}),
    ("gcp", "a3-ultragpu-8g", {"region": "us-central1", "zone": "us-central1-b", "project": "my-gpu-project"}),
    ("azure", "Standard_ND96isr_H200_v5", {"location": "eastus"}),
])
def test_one_provider_from_cloud_creates_every_resource(target: str, instance_type: str,
                                                        inputs: dict[str, str]) -> None:
    settings = {"project": "my-gpu-project"} if target == "gcp" else {}
    outcome = run_with(cloud_stack(target, instance_type, **settings), {})
    assert outcome.ok, outcome.errors
    provider = one(outcome, f"pulumi:providers:{PACKAGE[target]}")
    assert {key: provider.inputs[key] for key in inputs} == inputs
    cloud = [item for item in outcome.resources if item.custom and item is not provider]
    assert cloud and all(item.provider.startswith(provider.urn + "::") for item in cloud), \
        [item.name for item in cloud if not item.provider.startswith(provider.urn)]


def test_the_stacks_gcp_project_goes_to_the_provider_and_the_rdma_profile() -> None:
    outcome = run_with(cloud_stack("gcp", "a3-ultragpu-8g"), {"gcp:project": "my-gpu-project"})
    assert outcome.ok, outcome.errors
    assert one(outcome, "pulumi:providers:gcp").inputs["project"] == "my-gpu-project"
    rdma = next(item for item in outcome.resources if item.name == "t-fabric-rdma-vpc")
    assert rdma.inputs["networkProfile"] == "projects/my-gpu-project/global/networkProfiles/us-central1-b-vpc-roce"


@pytest.mark.parametrize("data, provider_config, path", [
    (cloud_stack("aws", "p5.48xlarge"), {"aws:region": "us-west-2"}, "config.aws:region"),
    (cloud_stack("gcp", "a3-ultragpu-8g"), {"gcp:region": "europe-west4"}, "config.gcp:region"),
    (cloud_stack("gcp", "a3-ultragpu-8g"), {"gcp:zone": "us-central1-a"}, "config.gcp:zone"),
    (cloud_stack("gcp", "a3-ultragpu-8g", project="other-project"), {"gcp:project": "my-gpu-project"},
     "config.gcp:project"),
    (cloud_stack("azure", "Standard_ND96isr_H200_v5"), {"azure-native:location": "westus3"},
     "config.azure-native:location"),
])
def test_a_provider_setting_that_disagrees_with_cloud_registers_nothing(
        data: dict[str, Any], provider_config: dict[str, str], path: str) -> None:
    outcome = run_with(data, provider_config)
    assert outcome.resources == []
    (error,) = outcome.errors
    assert error.startswith(f"SCHEMA (error) at {path}: ") and "the two must not disagree" in error


@pytest.mark.parametrize("data, provider_config", [
    (cloud_stack("aws", "p5.48xlarge"), {"aws:region": "us-east-1"}),
    (cloud_stack("azure", "Standard_ND96isr_H200_v5"), {"azure-native:location": "East US"}),
    (cloud_stack("aws", "p5.48xlarge"), {"gcp:project": "unrelated"}),  # another provider's setting
])
def test_agreeing_provider_settings_pass(data: dict[str, Any], provider_config: dict[str, str]) -> None:
    result = check(from_config("t", data, {}, provider_config))
    assert isinstance(result, Valid) and result.ok, result.findings


@pytest.mark.parametrize("stack, path", [("aws-region-mismatch", "config.aws:region"),
                                         ("aws-zone-elsewhere", "cloud.zone")])
def test_review_stacks_fail_validate_and_plan_with_the_path(stack: str, path: str) -> None:
    source = CLOUD_STACKS / f"Pulumi.{stack}.yaml"
    assert load_stack(str(source)).provider_config == ({"aws:region": "us-west-2"} if "region" in stack else {})
    for verb in ("validate", "plan"):
        done = subprocess.run([sys.executable, "-m", "cluster", verb, str(source), "--format", "json"],
                              capture_output=True, text=True, cwd=ROOT, timeout=120)
        assert done.returncode == 2, done.stdout + done.stderr
        assert "Traceback" not in done.stderr
        assert [finding["path"] for finding in json.loads(done.stdout)["findings"]] == [path]


def test_the_shipped_stacks_provider_settings_agree_with_their_design() -> None:
    for name in ("aws-p5e", "gcp-a3ultra", "azure-ndh200"):
        loaded = load_stack(name)
        assert loaded.provider_config, name  # each sets its provider's region or location
        result = check(loaded)
        assert isinstance(result, Valid) and result.ok, (name, result.findings)
    gcp = check(load_stack("gcp-a3ultra"))
    assert isinstance(gcp, Valid) and gcp.spec.cloud is not None and gcp.spec.cloud.project == "my-gpu-project"
