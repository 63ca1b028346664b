"""Node identity: what a GPU node may read (images, the named data buckets), IMDSv2 that
containers can use, encrypted root volumes, and per provider the least it needs."""

from __future__ import annotations

import json
from typing import Any

import pytest
from conftest import run
from test_components_support import cloud_stack, of_type, one, run_program

SUB = "/subscriptions/00000000-0000-0000-0000-000000000001/resourceGroups/data/providers"
ACCOUNT = f"{SUB}/Microsoft.Storage/storageAccounts/trainingdata"
REGISTRY = f"{SUB}/Microsoft.ContainerRegistry/registries/teamimages"


def test_aws_nodes_read_images_and_only_the_named_buckets() -> None:
    outcome = run_program(cloud_stack("aws", "p5e.48xlarge", data_buckets=["tokens-2026"]))
    assert outcome.ok, outcome.errors
    attached = {item.inputs["policyArn"] for item in of_type(outcome, "RolePolicyAttachment")}
    assert "arn:aws:iam::aws:policy/AmazonEC2ContainerRegistryReadOnly" in attached
    policy = json.loads(one(outcome, "iam/rolePolicy:RolePolicy").inputs["policy"])
    resources = sorted(resource for statement in policy["Statement"] for resource in statement["Resource"])
    assert resources == ["arn:aws:s3:::tokens-2026", "arn:aws:s3:::tokens-2026/*"]
    assert {action for statement in policy["Statement"] for action in statement["Action"]} == {
        "s3:ListBucket", "s3:GetBucketLocation", "s3:GetObject"}
    # Without data buckets there is no data policy at all.
    assert of_type(run_program(cloud_stack("aws", "p5e.48xlarge")), "iam/rolePolicy:RolePolicy") == []


def test_aws_imdsv2_hop_limit_and_encrypted_root() -> None:
    outcome = run_program(cloud_stack("aws", "p5e.48xlarge"))
    template = one(outcome, "LaunchTemplate").inputs
    assert template["metadataOptions"] == {"httpTokens": "required", "httpEndpoint": "enabled",
                                           "httpPutResponseHopLimit": 2}
    (root,) = template["blockDeviceMappings"]
    assert root["deviceName"] == "/dev/sda1" and root["ebs"]["encrypted"] == "true"
    # A named AMI's root device is its own: no mapping (the plan says who encrypts it).
    custom = run_program(cloud_stack("aws", "p5e.48xlarge", image="ami-0123456789abcdef0"))
    assert "blockDeviceMappings" not in one(custom, "LaunchTemplate").inputs


def test_aws_s3_gateway_endpoint_on_the_private_route_table() -> None:
    outcome = run_program(cloud_stack("aws", "p5e.48xlarge"))
    endpoint = one(outcome, "VpcEndpoint").inputs
    assert endpoint["serviceName"] == "com.amazonaws.us-east-1.s3" and endpoint["vpcEndpointType"] == "Gateway"
    assert endpoint["routeTableIds"] == ["<t-management-private-routes>"]


def test_gcp_nodes_run_as_their_own_service_account() -> None:
    outcome = run_program(cloud_stack("gcp", "a3-ultragpu-8g", project="my-gpu-project", data_buckets=["tokens-2026"]))
    assert outcome.ok, outcome.errors
    account = one(outcome, "serviceaccount/account:Account")
    assert account.inputs["accountId"] == "t-gpu-nodes"
    roles = {item.inputs["role"] for item in of_type(outcome, "projects/iAMMember:IAMMember")}
    assert roles == {"roles/logging.logWriter", "roles/monitoring.metricWriter", "roles/monitoring.viewer",
                     "roles/stackdriver.resourceMetadata.writer", "roles/artifactregistry.reader"}
    assert "roles/storage.objectViewer" not in roles  # per bucket, not project-wide
    (bucket,) = of_type(outcome, "BucketIAMMember")
    assert (bucket.inputs["bucket"], bucket.inputs["role"]) == ("tokens-2026", "roles/storage.objectViewer")
    template = one(outcome, "InstanceTemplate").inputs
    assert template["serviceAccount"]["scopes"] == ["cloud-platform"]
    assert one(outcome, "InstanceTemplate").dependencies["serviceAccount"] == (account.urn,)
    assert template["shieldedInstanceConfig"] == {"enableSecureBoot": False, "enableVtpm": True,
                                                  "enableIntegrityMonitoring": True}
    assert template["metadata"] == {"enable-oslogin": "TRUE"}


def test_gcp_an_ssh_key_keeps_metadata_logins() -> None:
    key = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIGdwdS1jbHVzdGVyIGV4YW1wbGUga2V5LCByZXBsYWNl me"
    metadata = one(run_program(cloud_stack("gcp", "a3-ultragpu-8g", ssh_public_key=key)), "InstanceTemplate").inputs[
        "metadata"]
    assert set(metadata) == {"ssh-keys"}


def test_azure_scale_sets_carry_a_managed_identity_with_scoped_grants() -> None:
    outcome = run_program(cloud_stack("azure", "Standard_ND96isr_H200_v5", data_buckets=[ACCOUNT],
                                      registries=[REGISTRY]))
    assert outcome.ok, outcome.errors
    identity = one(outcome, "UserAssignedIdentity")
    scale_set = one(outcome, "VirtualMachineScaleSet").inputs
    assert scale_set["identity"]["type"] == "UserAssigned"
    assert list(scale_set["identity"]["userAssignedIdentities"]) == [f"<{identity.name}>"]
    grants = {item.inputs["scope"]: item.inputs["roleDefinitionId"] for item in of_type(outcome, "RoleAssignment")}
    role = "/subscriptions/00000000-0000-0000-0000-000000000001/providers/Microsoft.Authorization/roleDefinitions/"
    assert grants == {ACCOUNT: role + "2a2b9908-6ea1-4ae2-8e65-a410df84e7d1",
                      REGISTRY: role + "7f951dda-4ed3-4680-a7ca-43fe172d538d"}


@pytest.mark.parametrize("target, cloud, path, rule", [
    ("aws", {"data_buckets": ["Not_A_Bucket"]}, "cloud.data_buckets[0]", "SCHEMA"),
    ("azure", {"data_buckets": ["trainingdata"]}, "cloud.data_buckets[0]", "SCHEMA"),
    ("azure", {"registries": ["teamimages"]}, "cloud.registries[0]", "SCHEMA"),
    ("aws", {"registries": [REGISTRY]}, "cloud.registries[0]", "SPEC-IGNORED"),
])
def test_identity_inputs_in_the_wrong_form(target: str, cloud: dict[str, Any], path: str, rule: str) -> None:
    types = {"aws": "p5e.48xlarge", "azure": "Standard_ND96isr_H200_v5"}
    assert (rule, path) in {(f.rule, f.path) for f in run(cloud_stack(target, types[target], **cloud)).findings}


def test_the_plan_says_what_the_nodes_may_do() -> None:
    from cluster.deployment import deployment
    from cluster.pipeline import Valid

    result = run(cloud_stack("aws", "p5e.48xlarge", data_buckets=["tokens-2026"]))
    assert isinstance(result, Valid)
    summary = deployment(result.spec)
    assert summary is not None
    assert any(line.startswith("identity: an instance profile reading the account's ECR images and the S3 buckets in "
                               "cloud.data_buckets (tokens-2026); IMDSv2 only, hop limit 2") for line in summary.creates)
