"""Training-step estimates: what each parallel dimension sends, overlap, and the article's designs."""

from __future__ import annotations

import pytest

from cluster.estimate.model import hardware
from cluster.estimate.step import StepEstimate, Workload, step_estimate
from cluster.pipeline import Valid, validate

LLAMA70 = Workload(params=70e9, dp=16, tp=8, pp=4, step_compute_s=7.0)
DATA_PARALLEL = Workload(params=70e9, dp=64, tp=8, pp=1, step_compute_s=7.0)


def step(stack: str, workload: Workload = LLAMA70, placement: str = "packed") -> StepEstimate:
    result = validate(stack)
    assert isinstance(result, Valid)
    return step_estimate(stack, result.spec, result.topology, workload, result.spec.pools[0], placement)  # type: ignore[arg-type]


def item(estimate: StepEstimate, prefix: str):  # type: ignore[no-untyped-def]
    return next(entry for entry in estimate.items if entry.name.startswith(prefix))


def test_step_accounts_for_every_dimension() -> None:
    result = step("article-c")
    assert [entry.name.split()[0] for entry in result.items] == ["DP", "TP", "PP"]
    dp = item(result, "DP")
    assert dp.size_bytes == int(70e9 / 32 * 2)  # bf16 gradients of one tp x pp shard
    assert dp.group_gpus == 16 and dp.group_nodes == 16 and dp.algorithm == "ring"
    tp = item(result, "TP")
    assert tp.group_nodes == 1 and tp.algorithm == "nvls"  # TP 8 stays inside the node
    assert tp.count == 4 * (80 // 4) * (1024 // 16)
    assert tp.size_bytes == 4096 * 8192 * 2
    for entry in result.items:
        assert 0 <= entry.exposed_s <= entry.time_s + 1e-12
    assert result.step_s == pytest.approx(result.compute_s + result.exposed_s)
    assert 0 < result.communication_share < 1


def test_dp_time_follows_the_nic_bandwidth_per_gpu() -> None:
    """Each DP ring has one GPU per node and all eight rings run at once: a GPU gets 1/8 of the
    node's NICs, so DP time scales with 1 / (NIC Gbps per node): 800 / 1,600 / 3,200 Gbps."""
    times = {name: item(step(name, DATA_PARALLEL), "DP").time_s for name in ("article-a", "article-b", "article-c")}
    assert times["article-a"] / times["article-c"] == pytest.approx(4, rel=0.05)
    assert times["article-b"] / times["article-c"] == pytest.approx(2, rel=0.05)


def test_article_designs_rank_as_the_article_reports() -> None:
    """Full 1:1 fat-tree fastest, NIC per GPU pair next, 2:1 standard leaf-spine slowest, for
    both placements and both parallel layouts."""
    for workload in (LLAMA70, DATA_PARALLEL):
        for placement in ("packed", "worst"):
            a, b, c = (step(name, workload, placement) for name in ("article-a", "article-b", "article-c"))
            assert c.step_s < b.step_s < a.step_s
            assert c.communication_share < b.communication_share < a.communication_share


def test_oversubscription_shows_when_ranks_cross_busy_leaves() -> None:
    """On the 2:1 design, spreading the job over busy leaves halves what crossing flows get;
    on the 1:1 designs placement changes nothing."""
    a_packed, a_worst = step("article-a", DATA_PARALLEL, "packed"), step("article-a", DATA_PARALLEL, "worst")
    assert item(a_worst, "DP").time_s == pytest.approx(2 * item(a_packed, "DP").time_s, rel=0.05)
    assert "leaf uplinks" in item(a_worst, "DP").bottleneck
    c_packed, c_worst = step("article-c", DATA_PARALLEL, "packed"), step("article-c", DATA_PARALLEL, "worst")
    assert c_packed.step_s == pytest.approx(c_worst.step_s)


def test_pipeline_sends_cross_the_2_to_1_uplinks_even_when_packed() -> None:
    """Stage s+1 is 16 nodes away: every node of a leaf sends off-leaf at once."""
    pp = item(step("article-a"), "PP")
    assert "leaf uplinks" in pp.bottleneck


def test_zero_splits_the_dp_traffic() -> None:
    zero = step("article-c", Workload(params=70e9, dp=16, tp=8, pp=4, step_compute_s=7.0, dp_comm="zero"))
    names = [entry.name for entry in zero.items]
    assert "DP gradient reduce-scatter" in names and "DP parameter all-gather" in names


def test_expert_parallel_all_to_all() -> None:
    moe = Workload(params=70e9, dp=16, tp=8, pp=4, ep=8, experts=64, step_compute_s=7.0)
    assert not moe.problems()
    result = step("article-c", moe)
    a2a = item(result, "EP")
    assert a2a.collective == "all_to_all" and a2a.group_gpus == 8 and a2a.group_nodes == 8
    assert a2a.exposed_s == a2a.time_s
    slow = item(step("article-a", moe, "worst"), "EP")
    assert slow.time_s > a2a.time_s


@pytest.mark.parametrize(("changes", "message"), [
    ({"global_batch": 1000}, "--global-batch"),
    ({"ep": 4}, "--ep 4 needs --experts"),
    ({"ep": 3, "experts": 6}, "ep dividing dp"),
    ({"dp": 0}, "--dp must be at least 1"),
    ({"step_compute_s": 0}, "--step-compute-s"),
])
def test_impossible_workloads_are_named(changes: dict[str, float], message: str) -> None:
    values = {"params": 70e9, "dp": 16, "tp": 8, "pp": 4, "step_compute_s": 7.0, **changes}
    problems = Workload(**values).problems()  # type: ignore[arg-type]
    assert any(message in problem for problem in problems), problems


def test_single_node_pipeline_stages_use_nvlink() -> None:
    """tp 2 x dp 2 = 4 ranks per stage: the next stage is on the same node."""
    result = step("article-c", Workload(params=7e9, dp=2, tp=2, pp=2, step_compute_s=1.0, global_batch=64))
    pp = item(result, "PP")
    assert pp.bottleneck == "NVLink" and pp.group_nodes == 1


def test_hardware_used_by_the_step_is_the_graphs() -> None:
    result = validate("article-b")
    assert isinstance(result, Valid)
    assert hardware(result.spec, result.topology, result.spec.pools[0]).node_nic_gbytes == 200


def test_article_stacks_give_their_stated_verdicts() -> None:
    """The three article designs load; A fails on its 2:1 leaves and thin NICs, C passes."""
    a, b, c = (validate(name) for name in ("article-a", "article-b", "article-c"))
    assert a.exit_code == 1
    assert {"FAB-OVERSUB", "FAB-GPU-NIC"} <= {f.rule for f in a.findings if str(f.severity) == "error"}
    assert isinstance(b, Valid) and b.spec.pools[0].fabric_nics.count == 4
    assert not [f for f in b.findings if str(f.severity) == "error"]
    assert c.exit_code == 0, [f.message for f in c.findings]
