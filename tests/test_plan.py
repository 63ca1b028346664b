"""`python -m cluster plan`: validates first, then the program's own registrations, offline."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from test_components_support import EXAMPLE_KEY, ROOT

from cluster.cli import main
from cluster.pipeline import Valid, validate


@pytest.mark.parametrize("stack", ["dev", "prod", "superpod", "aws-p5e", "gcp-a3ultra", "azure-ndh200"])
def test_every_example_stack_plans(capsys: pytest.CaptureFixture[str], stack: str) -> None:
    assert main(["plan", stack, "--format", "json"]) == 0
    plan = json.loads(capsys.readouterr().out)
    assert plan["ok"] and plan["errors"] == []
    resources = plan["resources"]
    assert plan["counts"]["resources"] == len(resources) == len({r["urn"] for r in resources})
    assert plan["counts"]["by_type"]["gpu-cluster:cluster:GpuCluster"] == 1
    names = {r["name"] for r in resources} | {None}
    assert all(r["parent"] in names for r in resources)
    assert not any("__provider" in r["inputs"] for r in resources)


def test_text_tree_shows_the_efa_layout(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["plan", "aws-p5e"]) == 0
    out = capsys.readouterr().out
    # provider, NAT, S3 endpoint, node identity (role, ECR and SSM policies, profile), FSx for Lustre and for
    # OpenZFS (/home); no placement group
    assert out.startswith("aws-p5e: 32 resources (5 components)")
    assert "PlacementGroup" not in out
    assert "networkInterfaces=33 (efa-only x32, interface x1) on cards 0-31" in out
    assert "    aws:ec2/launchTemplate:LaunchTemplate  train-h200-template" in out  # under its pool
    assert "desiredCapacity=16" in out
    assert "\nCOUNTS\n" in out and '  node_group_ids: {"h200": "<train-h200-group>"}' in out


def test_json_lists_files_not_content(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["plan", "dev", "--format", "json", "--artifacts-dir", "out/dev"]) == 0
    plan = json.loads(capsys.readouterr().out)
    files = [r for r in plan["resources"] if r["type"].endswith("RenderedFiles")]
    assert files and all(r["inputs"]["files"] == [p for p in r["inputs"]["files"] if isinstance(p, str)] for r in files)
    assert {r["inputs"]["directory"] for r in files} == {"out/dev"}
    assert plan["outputs"]["artifacts_dir"] == "out/dev"


def test_failing_stack_prints_findings_and_plans_nothing(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["plan", "legacy", "--format", "json"]) == 1
    report = json.loads(capsys.readouterr().out)
    assert report["ok"] is False and "resources" not in report
    assert {f["rule"] for f in report["findings"]} >= {"FAB-OVERSUB", "FAB-ISOLATION"}


def test_unreadable_stack_exits_2(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["plan", "no-such-stack"]) == 2
    assert "not found" in capsys.readouterr().out


def test_plan_from_the_shell_never_imports_pulumi_for_a_failing_stack() -> None:
    code = ("import sys\nfrom cluster.cli import main\ncode = main(['plan', 'legacy'])\n"
            "assert 'pulumi' not in sys.modules\nraise SystemExit(code)\n")
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert done.returncode == 1, done.stderr
    assert "FAB-OVERSUB" in done.stdout and "Traceback" not in done.stderr


def test_warnings_are_shown_with_the_plan(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    stack = tmp_path / "Pulumi.big-azure.yaml"
    stack.write_text("config:\n  gpu-cluster:cluster:\n    name: t\n    target: aws\n"
                     "    cloud: {region: us-east-1, zone: us-east-1a}\n    fabric: {design: rack-tor}\n"
                     "    node_pools: [{name: h100, nodes: 4, instance_type: p5.48xlarge}]\n")
    assert main(["plan", str(stack)]) == 0
    out = capsys.readouterr().out
    assert "  warning: SPEC-IGNORED (warning) at fabric: fabric is the provider's on aws" in out


def test_an_azure_pool_beyond_one_placement_group_plans_nothing(capsys: pytest.CaptureFixture[str],
                                                                tmp_path: Path) -> None:
    stack = tmp_path / "Pulumi.big-azure.yaml"
    stack.write_text("config:\n  gpu-cluster:cluster:\n    name: t\n    target: azure\n"
                     f"    cloud: {{region: eastus, ssh_public_key: {EXAMPLE_KEY}}}\n"
                     "    node_pools: [{name: h100, nodes: 150, instance_type: Standard_ND96isr_H100_v5}]\n")
    assert main(["plan", str(stack)]) == 1
    out = capsys.readouterr().out
    assert "CLOUD-PLACEMENT at node_pools[0].nodes: 150 VMs exceed one placement group (100)" in out
    assert "split the pool into 2 pools of at most 100 nodes each" in out and "resources (" not in out


def test_json_gives_card_and_device_indexes_as_integers(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["plan", "aws-p5e", "--format", "json"]) == 0
    plan = json.loads(capsys.readouterr().out)
    template = next(r for r in plan["resources"] if r["type"] == "aws:ec2/launchTemplate:LaunchTemplate")
    nics = template["inputs"]["networkInterfaces"]
    assert [(nic["networkCardIndex"], nic["deviceIndex"], nic["interfaceType"]) for nic in nics[:3]] == [
        (0, 0, "interface"), (0, 1, "efa-only"), (1, 0, "efa-only")]
    assert all(isinstance(nic["networkCardIndex"], int) for nic in nics)


@pytest.mark.parametrize("stack, creates, todo", [
    ("aws-p5e", ["16 x p5e.48xlarge (128 H200 GPUs) in one auto scaling group in us-east-1a, placed by its "
                 "reservation (no new placement group)", "way out: a NAT gateway", "way in: Session Manager"],
     ["quota: 3,072 vCPUs of EC2 'Running On-Demand P instances' in us-east-1",
      "reservation: Capacity Block cr-0123456789abcdef0 must exist in us-east-1a", "image: the default is the Deep "
      "Learning Base OSS Nvidia Driver GPU AMI", "client: the AWS CLI with the Session Manager plugin"]),
    ("gcp-a3ultra", ["placed by its reservation (no workload policy), template updates applied only when a VM is "
                     "recreated; `pulumi up` waits until every VM runs",
                     "way out: Cloud NAT", "way in: IAP TCP forwarding"],
     ["quota: 128 H200 GPUs in us-central1", "reservation: reservation a3ultra-reservation must exist in "
      "us-central1-b", "network profile: us-central1-b-vpc-roce must exist"]),
    ("azure-ndh200", ["in one placement group (one InfiniBand fabric)", "way out: a NAT gateway",
                      "way in: Azure Bastion"],
     ["quota: 1,536 vCPUs of the Standard_ND96isr_H200_v5 family in eastus",
      "login: the scale set's only login is cloud.ssh_public_key"]),
])
def test_plan_says_what_exists_after_up_and_what_is_still_yours(capsys: pytest.CaptureFixture[str], stack: str,
                                                                creates: list[str], todo: list[str]) -> None:
    assert main(["plan", stack, "--format", "json"]) == 0
    summary = json.loads(capsys.readouterr().out)["deployment"]
    for expected, lines in ((creates, summary["creates"]), (todo, summary["todo"])):
        for fragment in expected:
            assert any(fragment in line for line in lines), (fragment, lines)
    assert any("no public IP on any node" in line for line in summary["creates"])
    assert main(["plan", stack]) == 0
    out = capsys.readouterr().out
    after, still = out.index("\nAFTER pulumi up\n"), out.index("\nSTILL YOURS\n")
    assert after < still and all(f"  {line}" in out[still:] for line in summary["todo"])


@pytest.mark.parametrize("stack", ["aws-p5e", "gcp-a3ultra", "azure-ndh200"])
def test_still_yours_says_what_the_stack_does_not_create(capsys: pytest.CaptureFixture[str], stack: str) -> None:
    """No scheduler is created: the plan says so, not a hint that the nodes are somehow
    part of a Kubernetes cluster; the shared file system the example asks for is in what up creates,
    with what it still needs (the Lustre client in the image)."""
    assert main(["plan", stack, "--format", "json"]) == 0
    deployment = json.loads(capsys.readouterr().out)["deployment"]
    todo, creates = deployment["todo"], deployment["creates"]
    scheduler = [line for line in todo
                 if line.startswith("scheduler: none created (scheduler.kind none): the nodes boot as bare VMs")]
    assert len(scheduler) == 1 and "schedule nothing until these nodes join" in scheduler[0]
    assert any(line.startswith("shared storage: the node image must carry the Lustre client") for line in todo)
    assert any(line.startswith("home: the NFS share covers each node's /home at boot") for line in todo)
    assert any(line.startswith("home: ") and "mounted at /home on every node at boot; protected" in line
               for line in creates)
    assert any(line.startswith("shared storage: ") and "mounted at /lustre on every node at boot" in line
               for line in creates)
    assert any(line.startswith("data: the nodes' identity reads no bucket") for line in todo)


@pytest.mark.parametrize("stack, pool", [("aws-p6-eks", "managed node group train-b200 of Amazon EKS cluster ml"),
                                         ("gcp-a3ultra-gke", "node pool train-h200 of Google Kubernetes Engine cluster ml"),
                                         ("azure-ndh200-aks", "node pool h200 of Azure Kubernetes Service cluster ml")])
def test_plan_shows_the_node_pools_of_the_scheduler(capsys: pytest.CaptureFixture[str], stack: str, pool: str) -> None:
    """With a scheduler the nodes are in the provider's node pools, and the plan says which, and what the
    cluster still needs; it never says the nodes are bare."""
    assert main(["plan", stack, "--format", "json"]) == 0
    plan = json.loads(capsys.readouterr().out)
    creates, todo = plan["deployment"]["creates"], plan["deployment"]["todo"]
    assert any(line.startswith("pool ") and pool in line for line in creates)
    assert any(line.startswith("scheduler: the GPU nodes join") for line in creates)
    assert any(line.startswith("scheduler: ") for line in todo)
    assert not any("bare VMs" in line for line in [*creates, *todo])


def test_plan_states_the_path_the_stack_declares(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    stack = tmp_path / "Pulumi.own-vpn.yaml"
    stack.write_text("config:\n  gpu-cluster:cluster:\n    name: t\n    target: aws\n"
                     "    cloud: {region: us-east-1, zone: us-east-1a, access: none, egress: none,"
                     " ssh_cidrs: [198.51.100.0/24]}\n"
                     "    node_pools: [{name: h100, nodes: 4, instance_type: p5.48xlarge}]\n")
    assert main(["plan", str(stack), "--format", "json"]) == 0
    plan = json.loads(capsys.readouterr().out)
    creates, todo = plan["deployment"]["creates"], plan["deployment"]["todo"]
    assert any("way in: none created (cloud.access none): SSH from cloud.ssh_cidrs (198.51.100.0/24)" in line
               for line in creates)
    assert any("way out: none (cloud.egress none)" in line for line in creates)
    assert any(line.startswith("reservation: none:") for line in todo)
    assert {"aws:ec2/natGateway:NatGateway", "aws:ec2/vpcEndpoint:VpcEndpoint"}.isdisjoint(plan["counts"]["by_type"])
    # The nodes keep their identity (images, data) without Session Manager's policy.
    assert plan["counts"]["by_type"]["aws:iam/rolePolicyAttachment:RolePolicyAttachment"] == 1
    assert "in a new cluster placement group" in creates[0]


def test_on_premises_plans_have_no_cloud_summary(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["plan", "dev", "--format", "json"]) == 0
    assert "deployment" not in json.loads(capsys.readouterr().out)


@pytest.mark.parametrize("stack, access", [("aws-p5e", "Session Manager"), ("gcp-a3ultra", "IAP TCP forwarding"),
                                           ("azure-ndh200", "Azure Bastion")])
def test_cloud_examples_plan_with_zero_findings_and_the_access_path_they_declare(
        capsys: pytest.CaptureFixture[str], stack: str, access: str) -> None:
    result = validate(stack)
    assert result.ok and result.findings == [], [(f.rule, f.path, f.message) for f in result.findings]
    assert isinstance(result, Valid) and result.spec.cloud is not None and result.spec.cloud.access is not None
    assert main(["plan", stack, "--format", "json"]) == 0
    plan = json.loads(capsys.readouterr().out)
    assert plan["ok"] and plan["errors"] == [] and plan["warnings"] == []
    assert any(line.startswith(f"way in: {access}") for line in plan["deployment"]["creates"])


def test_urns_are_the_engine_s(capsys: pytest.CaptureFixture[str]) -> None:
    """Found by the engine (tests/test_engine.py): the SDK's mock monitor put the stack's type in
    top-level URNs and only the direct parent's type in nested ones; the engine chains every
    ancestor's type but the stack's."""
    assert main(["plan", "dev", "--format", "json"]) == 0
    urns = {resource["name"]: resource["urn"] for resource in json.loads(capsys.readouterr().out)["resources"]}
    assert urns["dev"] == "urn:pulumi:dev::gpu-cluster::gpu-cluster:cluster:GpuCluster::dev"
    assert urns["leaf-001-r0"] == ("urn:pulumi:dev::gpu-cluster::gpu-cluster:cluster:GpuCluster$gpu-cluster:fabric:GpuFabric"
                                   "$pulumi-python:dynamic/gpu-cluster:RenderedFiles::leaf-001-r0")
