"""The example stacks give the verdicts the README promises."""

from __future__ import annotations

import pytest

from cluster.pipeline import Valid, validate


@pytest.mark.parametrize("name", ["dev", "prod", "superpod"])
def test_passing_examples(name: str) -> None:
    result = validate(name)
    assert result.exit_code == 0, [f.message for f in result.findings]
    assert not [f for f in result.findings if str(f.severity) == "error"]


def test_legacy_fails_on_oversubscription_and_isolation() -> None:
    result = validate("legacy")
    assert result.exit_code == 1
    errors = {f.rule for f in result.findings if str(f.severity) == "error"}
    assert {"FAB-OVERSUB", "FAB-ISOLATION"} <= errors


def test_superpod_matches_the_published_bill_of_switches() -> None:
    result = validate("superpod")
    assert isinstance(result, Valid)
    graph = result.topology.graph
    tiers = [data["tier"] for _, data in result.topology.switches("fabric")]
    assert tiers.count("leaf") == 32 and tiers.count("spine") == 16
    host_links = sum(d["links"] for _, _, d in graph.edges(data=True)
                     if d["network"] == "fabric" and graph.nodes[d["lower"]]["kind"] == "host")
    spine_links = sum(d["links"] for _, _, d in graph.edges(data=True)
                      if d["network"] == "fabric" and graph.nodes[d["lower"]]["kind"] == "switch")
    assert host_links == 1016  # 127 nodes x 8 rails; the published 1,020 add four UFM links
    assert spine_links == 1024
    assert isinstance(result, Valid) and result.spec.qos is None  # InfiniBand: no RoCE QoS rule
    assert not any(f.rule.startswith("QOS") for f in result.findings)


def test_the_contract_example_passes() -> None:
    """DESIGN.md's own stack-file example, verbatim: fields that do not apply on premises
    (cloud, instance_type) are SPEC-IGNORED warnings, everything else is clean."""
    result = validate("contract")
    assert result.exit_code == 0
    assert {f.rule for f in result.findings} == {"SPEC-IGNORED"}
    assert isinstance(result, Valid)
    tiers = [data["tier"] for _, data in result.topology.switches("fabric")]
    assert (tiers.count("leaf"), tiers.count("spine")) == (16, 8)  # as designed: leaves 16, spines 8
