"""Renaming a cloud cluster or pool renames its resources in place (aliases to every earlier URN),
and the stack's outputs carry the ids a user needs next."""

from __future__ import annotations

from typing import Any

import pytest
from conftest import run
from test_components_support import cloud_stack, one, run_program

TYPES = {"aws": "p5e.48xlarge", "gcp": "a3-ultragpu-8g", "azure": "Standard_ND96isr_H200_v5"}


def renamed(target: str) -> dict[str, Any]:
    data = cloud_stack(target, TYPES[target])
    data.update(name="prod", previous_names=["t"])
    data["node_pools"][0].update(name="h200", previous_names=["gpu"])
    return data


@pytest.mark.parametrize("target", ["aws", "gcp", "azure"])
def test_renaming_the_cluster_and_a_pool_aliases_every_resource_to_its_old_urn(target: str) -> None:
    before = run_program(cloud_stack(target, TYPES[target]))
    after = run_program(renamed(target))
    assert before.ok and after.ok, after.errors
    old = {item.urn for item in before.resources}
    aliased = {alias for item in after.resources for alias in item.aliases}
    assert old <= aliased, sorted(old - aliased)[:5]
    # Each resource is aliased to the URN it had, one resource per old URN.
    by_old = {alias: item.urn for item in after.resources for alias in item.aliases if alias in old}
    assert len(by_old) == len(old) and len(set(by_old.values())) == len(old)
    # Without previous_names nothing is aliased.
    assert not any(item.aliases for item in before.resources)


def test_host_names_keep_the_first_names() -> None:
    """A rename must not change what names the VMs (a scale set's computerNamePrefix cannot change;
    a MIG's base instance name names its VMs)."""
    gcp = one(run_program(renamed("gcp")), "InstanceGroupManager").inputs
    assert gcp["baseInstanceName"] == "t-gpu"
    azure = one(run_program(renamed("azure")), "VirtualMachineScaleSet").inputs
    assert azure["virtualMachineProfile"]["osProfile"]["computerNamePrefix"] == "t-gpu"


@pytest.mark.parametrize("change, path, rule", [
    (lambda data: data["node_pools"][0].update(previous_names=["h200"]), "node_pools[0].previous_names[0]", "SCHEMA"),
    (lambda data: data["node_pools"].append({"name": "gpu", "nodes": 2, "instance_type": "p5e.48xlarge"}),
     "node_pools[0].previous_names[0]", "SCHEMA"),
    (lambda data: data.update(previous_names=["t", "t"]), "previous_names[1]", "SCHEMA"),
])
def test_previous_names_that_cannot_be_right(change: Any, path: str, rule: str) -> None:
    data = renamed("aws")
    change(data)
    assert (rule, path) in {(finding.rule, finding.path) for finding in run(data).findings}


def test_previous_names_on_premises_are_ignored_with_a_warning() -> None:
    data = {"name": "t", "target": "onprem", "previous_names": ["old"],
            "node_pools": [{"name": "h200", "nodes": 16, "gpu": "H200"}]}
    assert [(f.rule, f.path) for f in run(data).findings if f.rule == "SPEC-IGNORED"] == [
        ("SPEC-IGNORED", "previous_names")]


@pytest.mark.parametrize("target, access", [
    ("aws", {"method": "ssm", "instance_profile": "t-management-node-profile"}),
    ("gcp", {"method": "iap", "firewall_rule": "t-management-iap-ssh"}),
    ("azure", {"method": "bastion", "bastion": "t-management-bastion", "resource_group": "t-management-rg"}),
])
def test_stack_outputs_carry_the_networks_and_the_way_in(target: str, access: dict[str, str]) -> None:
    outcome = run_program(cloud_stack(target, TYPES[target]))
    network, way_in = outcome.outputs["network"], outcome.outputs["access"]
    assert network["vpc"] and network["subnets"]["management"] and network["subnets"]["storage"]
    assert all(network["subnets"]["fabric"].values()) or target == "azure"  # Azure's InfiniBand has no subnet
    assert {key: way_in[key] for key in access} == access and way_in["command"]
    names = {item.name for item in outcome.resources}
    for value in [network["vpc"], *network["subnets"]["management"], *network["subnets"]["storage"]]:
        assert str(value).strip("<>") in names  # every id is one of the stack's own resources
