"""A design that passes `validate` renders and plans: over generated on-prem designs at the edges
(small pools of addresses, suppressed rules, tiny and odd switches, several pools), every one that
validates also renders every file and runs the Pulumi program offline without a failure."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cluster.artifacts import render_tree
from cluster.pipeline import Valid, validate_mapping
from cluster.rules import RULE_IDS
from cluster.rules.base import UNSUPPRESSIBLE
from components.offline import run as plan_offline

SUPPRESSIBLE = sorted(rule for rule in RULE_IDS if rule != "SCHEMA")

pools = st.lists(
    st.fixed_dictionaries({
        "nodes": st.integers(1, 40),
        "gpu": st.sampled_from(["H200", "H100", "B200"]),
    }),
    min_size=1, max_size=3,
)
designs = st.fixed_dictionaries({
    "pools": pools,
    "design": st.sampled_from(["rail-optimized", "rack-tor"]),
    "leaf_ports": st.sampled_from([16, 32, 64, 128]),
    "transport": st.sampled_from(["roce", "infiniband"]),
    "hosts_prefix": st.integers(18, 30),
    "links_prefix": st.integers(16, 28),
    "loopbacks_prefix": st.integers(20, 30),
    "suppress": st.lists(st.sampled_from(SUPPRESSIBLE), unique=True, max_size=6),
    "mode": st.sampled_from(["lossless", "lossy"]),
})


def stack(drawn: dict[str, Any]) -> dict[str, Any]:
    data: dict[str, Any] = {
        "name": "edge",
        "target": "onprem",
        "node_pools": [{"name": f"p{index}", **pool} for index, pool in enumerate(drawn["pools"])],
        "fabric": {"design": drawn["design"], "transport": drawn["transport"],
                   "leaf": {"ports": drawn["leaf_ports"], "port_gbps": 400},
                   "spine": {"ports": drawn["leaf_ports"], "port_gbps": 400}},
        "addressing": {"loopbacks": f"10.0.0.0/{drawn['loopbacks_prefix']}",
                       "fabric_links": f"10.64.0.0/{drawn['links_prefix']}",
                       "hosts": f"10.128.0.0/{drawn['hosts_prefix']}"},
        "policy": {"suppress": drawn["suppress"]},
    }
    if drawn["transport"] == "roce":
        data["qos"] = {"mode": drawn["mode"]}
    return data


@pytest.mark.slow
@settings(max_examples=60, deadline=None, derandomize=True, database=None,
          suppress_health_check=[HealthCheck.too_slow])
@given(designs)
def test_every_design_that_validates_renders(drawn: dict[str, Any]) -> None:
    data = stack(drawn)
    result = validate_mapping("edge", data)
    if not result.ok:
        return
    assert isinstance(result, Valid)
    files = render_tree(result.spec, result.topology)
    assert files and all(text for text in files.values())


@pytest.mark.slow
@settings(max_examples=12, deadline=None, derandomize=True, database=None,
          suppress_health_check=[HealthCheck.too_slow])
@given(designs)
def test_every_design_that_validates_plans(drawn: dict[str, Any]) -> None:
    data = stack(drawn)
    if not validate_mapping("edge", data).ok:
        return
    outcome = plan_offline("edge", data)
    assert outcome.failure is None and outcome.errors == [], (outcome.failure, outcome.errors)


def test_a_pool_too_small_for_the_design_stays_an_error_when_suppressed() -> None:
    data = stack({"pools": [{"nodes": 40, "gpu": "H200"}], "design": "rail-optimized", "leaf_ports": 64,
                  "transport": "roce", "hosts_prefix": 28, "links_prefix": 16, "loopbacks_prefix": 24,
                  "suppress": sorted(UNSUPPRESSIBLE), "mode": "lossless"})
    result = validate_mapping("edge", data)
    assert not result.ok
    errors = [f for f in result.findings if f.rule in UNSUPPRESSIBLE and str(f.severity) == "error"]
    assert errors and all("cannot be suppressed" in f.hint and not f.suppressed for f in errors)
