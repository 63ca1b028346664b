"""The CrossGuard pack on the example stacks' mock-recorded resources: the good ones pass,
deliberately broken copies are rejected with a message that says what is wrong."""

from __future__ import annotations

import copy
import json
import os
import select
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import grpc
import pytest
from google.protobuf import empty_pb2
from pulumi.runtime import proto
from pulumi.runtime.proto import analyzer_pb2_grpc
from test_components_support import ROOT, cloud_stack, one, run_program
from test_policy_support import EXAMPLES, analyze, analyze_stack, policies, recorded, struct

from cluster import __version__
from cluster.catalog import load_catalog


@pytest.mark.parametrize("stack", EXAMPLES)
def test_example_stacks_pass_every_policy(stack: str) -> None:
    outcome = recorded(stack)
    assert outcome.ok and outcome.resources
    for registration in outcome.resources:
        assert analyze(registration) == [], registration.name
    assert analyze_stack([(registration, registration.inputs) for registration in outcome.resources]) == []


CATALOG_TYPES = [(target, name) for target, types in sorted(load_catalog().instances.items()) for name in sorted(types)]


@pytest.mark.parametrize("target, instance_type", CATALOG_TYPES)
def test_every_catalog_instance_type_passes(target: str, instance_type: str) -> None:
    """What the components build for each cloud instance type meets the policies the catalog
    drives (EFA cards, GPU NICs), so a catalog or component change cannot drift from them."""
    entry = load_catalog().instances[target][instance_type]
    image = {"image": "ami-0123456789abcdef0" if target == "aws" else "example:ubuntu-arm64:2404:latest"} \
        if entry.arch == "arm64" and target != "gcp" else {}
    stack = cloud_stack(target, instance_type, nodes=2, ssh_cidrs=["198.51.100.0/24"], **image)
    stack["policy"] = {"suppress": ["FAB-GPU-NIC"]}  # p4d and A3 High are below 200 Gbps per GPU
    outcome = run_program(stack)
    if entry.not_deployable:  # described, not built: refused before anything is registered
        assert outcome.resources == [] and any("does not deploy it yet" in error for error in outcome.errors)
        return
    assert outcome.ok and outcome.resources
    assert [violation for registration in outcome.resources for violation in analyze(registration)] == []
    assert analyze_stack([(registration, registration.inputs) for registration in outcome.resources]) == []


def _broken(outcome: Any, suffix: str) -> tuple[Any, dict[str, Any]]:
    registration = one(outcome, suffix)
    return registration, copy.deepcopy(dict(registration.inputs))


def _messages(violations: list[Any], policy: str) -> list[str]:
    assert violations, "expected a violation"
    assert {violation.policy for violation in violations} == {policy}, violations
    return [violation.message for violation in violations]


def test_launch_template_missing_efa_cards_is_rejected() -> None:
    template, props = _broken(recorded("aws-p5e"), "LaunchTemplate")
    props["networkInterfaces"] = [nic for nic in props["networkInterfaces"] if nic["networkCardIndex"] < 30]
    (message,) = _messages(analyze(template, props), "gpu-efa-per-network-card")
    assert "p5e.48xlarge has 32 network cards" in message and "missing on card(s) 30, 31" in message


def test_launch_template_without_primary_on_card0_device0_is_rejected() -> None:
    template, props = _broken(recorded("aws-p5e"), "LaunchTemplate")
    props["networkInterfaces"][0]["deviceIndex"] = 2.0
    (message,) = _messages(analyze(template, props), "gpu-efa-per-network-card")
    assert "no primary interface on network card 0 device 0" in message
    props["networkInterfaces"][0].update(deviceIndex=0.0, interfaceType="efa-only")
    violations = analyze(template, props)  # the group policy objects too: that interface now carries 3 groups
    messages = [violation.message for violation in violations if violation.policy == "gpu-efa-per-network-card"]
    assert any("the primary interface (card 0 device 0) is efa-only" in message for message in messages)
    assert any("EFA interfaces on card(s) 0 that p5e.48xlarge does not have or already serves" in message
               for message in messages)  # card 0 now has two EFA devices


def test_public_ip_is_rejected_on_every_cloud() -> None:
    template, props = _broken(recorded("aws-p5e"), "LaunchTemplate")
    props["networkInterfaces"][0]["associatePublicIpAddress"] = "true"  # pulumi-aws takes it as a string
    (message,) = _messages(analyze(template, props), "gpu-no-public-ip")
    assert "networkInterfaces[0].associatePublicIpAddress" in message

    template, props = _broken(recorded("gcp-a3ultra"), "InstanceTemplate")
    props["networkInterfaces"][0]["accessConfigs"] = [{"networkTier": "PREMIUM"}]
    (message,) = _messages(analyze(template, props), "gpu-no-public-ip")
    assert "networkInterfaces[0].accessConfigs" in message

    scale_set, props = _broken(recorded("azure-ndh200"), "VirtualMachineScaleSet")
    nic = props["virtualMachineProfile"]["networkProfile"]["networkInterfaceConfigurations"][0]
    nic["ipConfigurations"][0]["publicIPAddressConfiguration"] = {"name": "pip"}
    (message,) = _messages(analyze(scale_set, props), "gpu-no-public-ip")
    assert "ipConfigurations[0].publicIPAddressConfiguration" in message


@pytest.mark.parametrize("stack, suffix, edit", [
    ("aws-p5e", "management-sg", lambda props: props["ingress"][0].update(cidrBlocks=["0.0.0.0/0"])),
    ("aws-p5e", "management-sg", lambda props: props["ingress"].append(
        {"protocol": "-1", "fromPort": 0.0, "toPort": 0.0, "ipv6CidrBlocks": ["::/0"]})),
    ("gcp-a3ultra", "management-ssh", lambda props: props.update(sourceRanges=["0.0.0.0/0"])),
    ("gcp-a3ultra", "management-ssh", lambda props: props.pop("sourceRanges")),  # GCP's default source: any
    ("azure-ndh200", "management-nsg", lambda props: props["securityRules"][0].update(
        sourceAddressPrefixes=["Internet"])),
])
def test_ssh_open_to_the_world_is_rejected(stack: str, suffix: str, edit: Any) -> None:
    registration = next(item for item in recorded(stack).resources if item.name.endswith(suffix))
    assert analyze(registration) == []
    props = copy.deepcopy(dict(registration.inputs))
    edit(props)
    (message,) = _messages(analyze(registration, props), "ssh-not-open-to-world")
    assert "opens SSH (port 22) to the whole internet" in message


def test_ssh_to_a_cidr_or_other_ports_open_to_the_world_pass() -> None:
    assert list(policies.ssh_world_rules(policies.AWS_SECURITY_GROUP, {"ingress": [
        {"protocol": "tcp", "fromPort": 443, "toPort": 443, "cidrBlocks": ["0.0.0.0/0"]},
        {"protocol": "tcp", "fromPort": 22, "toPort": 22, "cidrBlocks": ["10.0.0.0/8"]}]})) == []
    assert list(policies.ssh_world_rules(policies.AZURE_NSG, {"securityRules": [
        {"direction": "Inbound", "access": "Allow", "protocol": "Tcp", "sourceAddressPrefix": "*",
         "destinationPortRange": "20-25"}]})) == ["securityRules[0]"]


def test_shared_fabric_security_group_is_rejected() -> None:
    def widened(props: dict[str, Any]) -> None:
        props["ingress"].append({"protocol": "tcp", "fromPort": 988.0, "toPort": 988.0, "cidrBlocks": ["10.0.16.0/20"]})

    (message,) = _messages(analyze_stack(_edited("aws-p5e", {"efa-sg": widened})),
                           "gpu-fabric-security-group-not-shared")
    assert "ingress[1] (ingress) admits more than the group itself" in message

    def shared(props: dict[str, Any]) -> None:
        for nic in props["networkInterfaces"][1:]:
            nic["securityGroups"] = list(props["networkInterfaces"][0]["securityGroups"])

    (message,) = _messages(analyze_stack(_edited("aws-p5e", {"h200-template": shared})),
                           "gpu-fabric-security-group-not-shared")
    assert "exactly the fabric's one security group" in message


def _edited(stack: str | Any, edits: dict[str, Any]) -> list[tuple[Any, Any]]:
    """(registration, props) for every resource of a recorded run, props edited per name suffix."""
    outcome = recorded(stack) if isinstance(stack, str) else stack
    pairs = []
    for registration in outcome.resources:
        props = copy.deepcopy(dict(registration.inputs))
        for suffix, edit in edits.items():
            if registration.name.endswith(suffix):
                edit(props)
        pairs.append((registration, props))
    return pairs


def test_missing_or_wrong_placement_is_rejected() -> None:
    outcome = run_program(cloud_stack("aws", "p5e.48xlarge"))  # no reservation: a cluster placement group
    assert analyze_stack(_edited(outcome, {})) == []
    (message,) = _messages(analyze_stack(_edited(outcome, {"gpu-group": lambda props: props.pop("placementGroup")})),
                           "gpu-placement-group")
    assert "no placementGroup for p5e.48xlarge without a reservation" in message
    (message,) = _messages(analyze_stack(_edited(outcome, {"gpu-placement": lambda props: props.update(
        strategy="spread")})), "gpu-placement-group")
    assert "strategy 'spread'" in message


@pytest.mark.parametrize("reservation", [
    {"market": "capacity-block", "reservation": "cr-0123456789abcdef0"}, {"reservation": "cr-0123456789abcdef0"}])
def test_a_new_placement_group_with_a_reservation_is_rejected(reservation: dict[str, Any]) -> None:
    """Today's shape (a new cluster placement group beside a Capacity Block or targeted ODCR)
    fails; the shape the component builds (no group) passes."""
    reserved = run_program(cloud_stack("aws", "p5e.48xlarge", **reservation))
    assert analyze_stack(_edited(reserved, {})) == []
    plain = run_program(cloud_stack("aws", "p5e.48xlarge"))
    template = one(reserved, "LaunchTemplate")
    # The unreserved stack's group and placement group, with the reserved stack's template.
    pairs = _edited(plain, {"gpu-template": lambda props: props.update(copy.deepcopy(dict(template.inputs)))})
    (message,) = _messages(analyze_stack(pairs), "gpu-placement-group")
    capacity = "a Capacity Block" if "market" in reservation else "a targeted ODCR"
    assert f"a new placement group (t-gpu-placement) with {capacity}" in message


def test_groups_of_cpu_nodes_need_no_placement_group() -> None:
    """A login or bastion group (no catalog GPU type) passes without a placement group."""
    outcome = run_program(cloud_stack("aws", "p5e.48xlarge"))
    def cpu(props: dict[str, Any]) -> None:
        props.update(instanceType="m7i.xlarge", networkInterfaces=props["networkInterfaces"][:1])
    pairs = _edited(outcome, {"gpu-template": cpu, "gpu-group": lambda props: props.pop("placementGroup")})
    assert analyze_stack(pairs) == []
    assert [violation for registration, props in pairs for violation in analyze(registration, props)] == []


def test_gcp_mig_without_a_workload_policy_is_rejected() -> None:
    unreserved = run_program(cloud_stack("gcp", "a3-ultragpu-8g"))
    assert analyze_stack(_edited(unreserved, {})) == []
    (message,) = _messages(analyze_stack(_edited(unreserved, {"gpu-group": lambda props: props.pop(
        "resourcePolicies")})), "gpu-placement-group")
    assert "no workload policy (resourcePolicies.workloadPolicy)" in message
    (message,) = _messages(analyze_stack(_edited(unreserved, {"gpu-placement": lambda props: props.update(
        workloadPolicy={"type": "HIGH_AVAILABILITY"})})), "gpu-placement-group")
    assert "type 'HIGH_AVAILABILITY'; GPU VMs need HIGH_THROUGHPUT" in message


def test_azure_scale_set_outside_one_placement_group_is_rejected() -> None:
    (message,) = _messages(analyze_stack(_edited("azure-ndh200", {"h200-vmss": lambda props: props.update(
        singlePlacementGroup=False)})), "gpu-placement-group")
    assert "singlePlacementGroup is not true" in message


def test_gcp_template_with_fewer_rdma_nics_than_gpus_is_rejected() -> None:
    template, props = _broken(recorded("gcp-a3ultra"), "InstanceTemplate")
    props["networkInterfaces"] = props["networkInterfaces"][:-1]
    (message,) = _messages(analyze(template, props), "gcp-rdma-subnet-per-gpu-nic")
    assert "7 MRDMA NICs, a3-ultragpu-8g has 8 GPU NICs" in message

    template, props = _broken(recorded("gcp-a3ultra"), "InstanceTemplate")
    props["networkInterfaces"][-1]["subnetwork"] = props["networkInterfaces"][-2]["subnetwork"]
    (message,) = _messages(analyze(template, props), "gcp-rdma-subnet-per-gpu-nic")
    assert "GPU NICs share subnets (7 distinct for 8 NICs)" in message


def _stack_with(stack: str, edit: Any) -> list[tuple[Any, Any]]:
    pairs = []
    for registration in recorded(stack).resources:
        props = copy.deepcopy(dict(registration.inputs))
        if registration.type == policies.CLUSTER_TYPE:
            edit(props)
        pairs.append((registration, props))
    return pairs


def test_tampered_recorded_design_fails_the_stack_policy() -> None:
    def shrink_leaf(props: dict[str, Any]) -> None:
        cluster = json.loads(props[policies.CARRIER])
        cluster["fabric"]["leaf"]["ports"] = 8
        props[policies.CARRIER] = json.dumps(cluster)

    violations = analyze_stack(_stack_with("prod", shrink_leaf))
    messages = _messages(violations, "gpu-cluster-design")
    cluster_urn = one(recorded("prod"), "GpuCluster").urn
    assert all(violation.urn == cluster_urn for violation in violations)
    assert any(" at fabric." in message and "(error)" in message for message in messages), messages


def test_unreadable_or_missing_record_fails_the_stack_policy() -> None:
    (message,) = _messages(analyze_stack(_stack_with("aws-p5e", lambda props: props.update(
        {policies.CARRIER: json.dumps({"name": "train", "target": "aws", "node_pools": "many"})}))),
        "gpu-cluster-design")
    assert message.count("SCHEMA") >= 1 and "node_pools" in message
    (message,) = _messages(analyze_stack(_stack_with("aws-p5e", lambda props: props.pop(policies.CARRIER))),
                           "gpu-cluster-design")
    assert "records no validated_cluster" in message
    # A stack with no GpuCluster (a bastion, a bucket) is told so, advisory, and not refused.
    others = [(item, item.inputs) for item in recorded("aws-p5e").resources if item.type != policies.CLUSTER_TYPE]
    violations = analyze_stack(others)
    assert [violation.policy for violation in violations] == ["gpu-cluster-present"]
    assert "no gpu-cluster:cluster:GpuCluster resource" in violations[0].message
    present = next(policy for policy in policies.policies() if policy.name == "gpu-cluster-present")
    assert present.enforcement_level == policies.EnforcementLevel.ADVISORY


def test_the_pack_serves_every_policy_over_grpc() -> None:
    """policy/__main__.py as the CLI starts it: it prints its port, serves the analyzer, and a
    real gRPC Analyze rejects the broken template."""
    # pulumi_policy writes the port without a flush: it relies on an unbuffered stdout, as the CLI
    # starts the pack; the select bounds the wait (a pack that never answers fails, not hangs).
    pack = subprocess.Popen([sys.executable, str(ROOT / "policy" / "__main__.py")], stdout=subprocess.PIPE,
                            cwd=ROOT / "policy", env={**os.environ, "PYTHONUNBUFFERED": "1"})
    try:
        assert pack.stdout is not None
        ready, _, _ = select.select([pack.stdout], [], [], 120)
        assert ready, "the policy pack printed no port in 120 s"
        port = int(pack.stdout.readline())
        channel = grpc.insecure_channel(f"127.0.0.1:{port}")
        stub = analyzer_pb2_grpc.AnalyzerStub(channel)
        info = stub.GetAnalyzerInfo(empty_pb2.Empty(), timeout=20)
        assert info.name == "gpu-cluster"
        assert sorted(policy.name for policy in info.policies) == sorted(policy.name for policy in policies.policies())
        template, props = _broken(recorded("aws-p5e"), "LaunchTemplate")
        props["networkInterfaces"] = props["networkInterfaces"][:4]
        request = proto.AnalyzeRequest(type=template.type, urn=template.urn, name=template.name,
                                       properties=struct(props))
        diagnostics = stub.Analyze(request, timeout=20).diagnostics
        assert [item.policyName for item in diagnostics] == ["gpu-efa-per-network-card"]
        assert diagnostics[0].enforcementLevel == proto.MANDATORY
        assert "missing on card(s) 3, 4, 5" in diagnostics[0].message
        channel.close()
    finally:
        pack.kill()
        pack.wait(timeout=10)


def test_preview_unknowns_defer_only_the_checks_that_need_them() -> None:
    """In preview the security group ids are unknown: the EFA layout is still checked, the
    group check becomes the engine's advisory "can't run during preview" (it runs at `up`)."""
    unknown = "04da6b54-80e4-46f7-96ec-b56ff0331ba9"  # the engine's unknown-value sentinel

    def unknown_groups(props: dict[str, Any]) -> None:
        for nic in props["networkInterfaces"]:
            nic["securityGroups"] = [unknown]

    pairs = _edited("aws-p5e", {"h200-template": unknown_groups})
    template, props = next((item, props) for item, props in pairs if item.name.endswith("h200-template"))
    assert analyze(template, props) == []
    violations = [violation for violation in analyze_stack(pairs)
                  if violation.policy == "gpu-fabric-security-group-not-shared"]
    assert violations and all("during preview" in violation.message for violation in violations)
    props["networkInterfaces"] = props["networkInterfaces"][:-1]
    assert {violation.policy for violation in analyze(template, props)} == {"gpu-efa-per-network-card"}




def test_the_pack_folder_is_self_contained_for_publishing(tmp_path: Path) -> None:
    """`pulumi policy publish` archives the pack's folder: its requirements name no path outside
    it (the `..` it had), and a copy of the folder loads its policies with the gpu-cluster package
    importable from elsewhere (here the checkout on PYTHONPATH stands for the installed wheel)."""
    requirements = [line.strip() for line in (ROOT / "policy" / "requirements.txt").read_text().splitlines()
                    if line.strip() and not line.startswith("#")]
    assert not any(line.startswith((".", "/", "-e", "file:")) for line in requirements), requirements
    assert f"gpu-cluster=={__version__}" in requirements
    shutil.copytree(ROOT / "policy", tmp_path / "pack", ignore=shutil.ignore_patterns("__pycache__"))
    probe = ("import runpy, sys, pulumi_policy\n"
             "pulumi_policy.PolicyPack = lambda **kw: print(sorted(p.name for p in kw['policies']))\n"
             "runpy.run_path(sys.argv[1], run_name='__main__')\n")
    done = subprocess.run([sys.executable, "-c", probe, str(tmp_path / "pack" / "__main__.py")], capture_output=True,
                          text=True, cwd=tmp_path, timeout=120, env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == str(sorted(policy.name for policy in policies.policies()))
