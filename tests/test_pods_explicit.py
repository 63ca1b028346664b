"""Explicit pods take whole leaf groups as the sizer splits them: ceil(groups / pods) each, the last
pod what is left. So a split the sizer chose (11 groups in 3 pods: 4, 4, 3) can be written as
designed, and only a split that leaves a pod without a leaf group is refused."""

from __future__ import annotations

from typing import Any

from cluster.pipeline import Valid, validate_mapping
from cluster.verify.expected import expected_cables

POOL = {"name": "h200", "nodes": 20, "gpu": "H200", "fabric_nics": {"count": 2, "gbps": 400}}
#: One rail: a leaf group is one leaf, and the sizer splits 44 nodes into 11 groups in 3 pods.
UNEVEN = {"name": "h200", "nodes": 44, "gpu": "H200", "fabric_nics": {"count": 1, "gbps": 400}}
LEAF = {"ports": 8, "port_gbps": 400}


def design(pool: dict[str, Any] = POOL, **fabric: Any) -> dict[str, Any]:
    return {"name": "pods", "target": "onprem", "node_pools": [pool], "fabric": {"leaf": LEAF, **fabric}}


def test_the_sizers_uneven_split_written_as_designed_builds_the_same_fabric() -> None:
    auto = validate_mapping("pods", design(UNEVEN))
    assert isinstance(auto, Valid) and auto.topology.fabric_plan is not None
    plan = auto.topology.fabric_plan
    assert (plan.groups, plan.pods) == (11, 3)
    written = validate_mapping("pods", design(UNEVEN, leaves=plan.leaves, spines=plan.spines, cores=plan.cores,
                                              pods=plan.pods, leaf_uplinks=plan.leaf_uplinks,
                                              spine_uplinks=plan.spine_uplinks))
    assert isinstance(written, Valid) and not written.schema_failed, [f.message for f in written.findings]
    assert ({(c.lower, c.upper) for c in expected_cables(written.spec, written.topology)}
            == {(c.lower, c.upper) for c in expected_cables(auto.spec, auto.topology)})


def test_a_split_that_leaves_a_pod_empty_is_still_refused() -> None:
    """6 groups in 4 pods: 2, 2, 2 and none."""
    result = validate_mapping("pods", design(leaves=12, spines=16, cores=8, pods=4))
    [finding] = [finding for finding in result.findings if finding.rule == "SCHEMA"]
    assert finding.path == "fabric.pods" and "would have no leaves" in finding.message
    assert "1, 2, 3, 6" in finding.hint
