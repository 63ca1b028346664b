"""The collective model: formulas, algorithm choice, placement and oversubscription on real graphs."""

from __future__ import annotations

from typing import Any

import pytest
from conftest import run, stack
from test_components_support import EXAMPLE_KEY

from cluster.estimate import collective_on, estimate_table
from cluster.estimate.constants import load_calibration
from cluster.estimate.model import bus_factor, choose_algorithm, estimate, hardware, nvls_busbw
from cluster.estimate.placement import fabric_share, place, ring_flows
from cluster.estimate.units import format_size, parse_size
from cluster.pipeline import Result, Valid, validate

GiB = 2**30


def design(**changes: Any) -> Valid:
    result = run(stack(**changes))
    assert isinstance(result, Valid), [f.message for f in result.findings]
    return result


def small_rack_tor() -> Valid:
    """4 nodes x 8 x 400G, rack-tor, 2 leaves of 2 nodes, 4 x 400G up per leaf: 6,400 down / 1,600 up = 4:1."""
    return design(
        node_pools=[{"name": "h100", "nodes": 4, "gpu": "H100", "fabric_nics": {"count": 8, "gbps": 400}}],
        fabric={"transport": "roce", "design": "rack-tor", "leaf": {"ports": 64, "port_gbps": 400},
                "spine": {"ports": 64, "port_gbps": 400}, "leaves": 2, "spines": 1, "leaf_uplinks": 4},
    )


@pytest.mark.parametrize(("collective", "ranks", "factor"), [
    ("all_reduce", 8, 2 * 7 / 8), ("all_reduce", 16, 2 * 15 / 16), ("all_gather", 8, 7 / 8),
    ("reduce_scatter", 4, 3 / 4), ("all_to_all", 64, 63 / 64), ("broadcast", 8, 1.0), ("all_reduce", 1, 1.0),
])
def test_bus_factor_follows_nccl_tests(collective: str, ranks: int, factor: float) -> None:
    assert bus_factor(collective, ranks) == pytest.approx(factor)


@pytest.mark.parametrize(("text", "size"), [
    ("8GiB", 8 * GiB), ("256MB", 256_000_000), ("4096", 4096), ("1.5GB", 1_500_000_000), ("64M", 64 * 2**20),
    ("2 MiB", 2 * 2**20), ("1e6", 1_000_000),
])
def test_parse_size(text: str, size: int) -> None:
    assert parse_size(text) == size


@pytest.mark.parametrize("text", ["", "8XB", "-1GB", "0", "GB", "1e30", "eight"])
def test_parse_size_rejects(text: str) -> None:
    with pytest.raises(ValueError, match="size"):
        parse_size(text)


def test_format_size_round_trips() -> None:
    for size in (2**20, 8 * GiB, 256_000_000, 1000, 4097):
        assert parse_size(format_size(size)) == size


def test_hardware_is_read_from_the_graph_and_catalog() -> None:
    result = validate("article-b")
    assert isinstance(result, Valid)
    hw = hardware(result.spec, result.topology, result.spec.pools[0])
    assert hw.nvlink_gbytes == 450  # H200 catalog 900 GB/s both directions
    assert hw.node_nic_gbytes == 4 * 400 / 8
    assert hw.nics_per_node == 4 and hw.fabric_kind == "roce" and hw.nvls


def test_links_that_run_slower_lower_the_node_bandwidth() -> None:
    """A 400G NIC on a 200G leaf port runs at 200G: the model uses the graph's link speed."""
    result = design(node_pools=[{"name": "h100", "nodes": 4, "gpu": "H100", "fabric_nics": {"count": 8, "gbps": 400}}],
                    fabric={"leaf": {"ports": 64, "port_gbps": 200}, "spine": {"ports": 64, "port_gbps": 200}})
    assert isinstance(result, Valid)
    assert hardware(result.spec, result.topology, result.spec.pools[0]).node_nic_gbytes == 8 * 200 / 8


def test_algorithm_choice_is_nccl_like() -> None:
    calibration = load_calibration()
    hopper = hardware(*_spec_topology(validate("prod")))
    assert choose_algorithm("all_reduce", 1, 8, hopper, calibration) == "nvls"
    assert choose_algorithm("all_reduce", 1, 4, hopper, calibration) == "ring"  # NVLS needs 5+ GPUs
    assert choose_algorithm("all_reduce", 2, 8, hopper, calibration) == "nvls_tree"
    assert choose_algorithm("all_reduce", 3, 8, hopper, calibration) == "ring"
    assert choose_algorithm("all_gather", 1, 8, hopper, calibration) == "ring"
    assert choose_algorithm("all_to_all", 4, 8, hopper, calibration) == "p2p"
    amd = hardware(*_spec_topology(design(node_pools=[{"name": "mi", "nodes": 4, "gpu": "MI300X"}])))
    assert choose_algorithm("all_reduce", 1, 8, amd, calibration) == "ring"  # no NVLS
    assert choose_algorithm("all_reduce", 2, 8, amd, calibration) == "tree"
    with pytest.raises(ValueError, match="needs NVLink SHARP"):
        estimate(amd, "all_reduce", 1, GiB, algorithm="nvls")


def _spec_topology(result: Result) -> tuple[Any, Any, Any]:
    assert isinstance(result, Valid)
    return result.spec, result.topology, result.spec.pools[0]


def test_nvls_grows_with_gpus_like_the_measurements() -> None:
    """busbw = eff x 2B(n-1)/(n+1): the ratios between 5 and 8 GPUs come from the formula alone
    (measured 420 / 480 = 0.875, nccl issue 1455)."""
    hw = hardware(*_spec_topology(validate("prod")))
    calibration = load_calibration()
    ratio = nvls_busbw(5, hw, calibration) / nvls_busbw(8, hw, calibration)
    assert ratio == pytest.approx(420 / 480, rel=0.03)


def test_packed_and_worst_placement() -> None:
    result = validate("legacy")  # rack-tor, 8 nodes per leaf, 4 leaves
    assert isinstance(result, Valid)
    topology = result.topology
    packed = place(topology, "h100", 8, "packed")
    worst = place(topology, "h100", 8, "worst")
    assert packed.leaf_groups == 1
    assert worst.leaf_groups == 4
    assert len(set(worst.hosts)) == 8
    assert worst.groups[0] != worst.groups[1]  # neighbours in rank order sit under different leaves
    with pytest.raises(ValueError, match="pool 'h100' has 32"):
        place(topology, "h100", 33)


def test_fabric_share_is_the_uplink_to_demand_ratio_of_the_placed_nodes() -> None:
    """2 leaves x 2 nodes x 3,200 Gbps, 1,600 Gbps up per leaf.
    ring packed: one of a leaf's two nodes sends off-leaf: 1,600 / 3,200 = 0.5;
    all-to-all packed: (4-2)/3 of each node's 3,200 leaves: 1,600 / 4,266.7 = 0.375;
    worst: the leaf's fair share, 1,600 / 6,400 = 0.25."""
    result = small_rack_tor()
    assert isinstance(result, Valid)
    topology = result.topology
    packed = place(topology, "h100", 4, "packed")
    assert fabric_share(topology, packed, ring_flows(4)).factor == pytest.approx(0.5)
    assert fabric_share(topology, packed, all_to_all=True).factor == pytest.approx(0.375)
    worst = place(topology, "h100", 4, "worst")
    share = fabric_share(topology, worst, ring_flows(4))
    assert share.factor == pytest.approx(0.25)
    assert share.bottleneck is not None and share.bottleneck.startswith("leaf uplinks at leaf-00")
    assert "4:1" in share.bottleneck
    two = place(topology, "h100", 2, "packed")
    assert fabric_share(topology, two, ring_flows(2)).factor == 1.0  # one leaf: nothing crosses


def test_oversubscription_costs_only_when_traffic_crosses_leaves() -> None:
    result = validate("legacy")
    assert isinstance(result, Valid)
    spec, topology = result.spec, result.topology
    inside = collective_on(spec, topology, "all_reduce", 8, 8 * GiB, placement="packed")
    spread = collective_on(spec, topology, "all_reduce", 8, 8 * GiB, placement="worst")
    assert inside.bottleneck == "NVLink"
    assert spread.bottleneck.startswith("leaf uplinks")
    # legacy leaves: 28,800 Gbps down (GPU + storage NICs) over 12,800 up
    network = 8 * 400 / 8 * load_calibration().network("roce").value * 12_800 / 28_800
    assert spread.peak_busbw_GBps == pytest.approx(network, rel=1e-6)


def test_bottleneck_moves_from_nvlink_to_the_nic() -> None:
    fat = validate("article-c")
    thin = validate("article-b")
    assert isinstance(fat, Valid) and isinstance(thin, Valid)
    assert collective_on(fat.spec, fat.topology, "all_reduce", 8, 8 * GiB).bottleneck == "NVLink"
    narrow = collective_on(thin.spec, thin.topology, "all_reduce", 8, 8 * GiB)
    assert narrow.bottleneck == "NIC"
    assert narrow.peak_busbw_GBps == pytest.approx(200 * load_calibration().network("roce").value)


def test_two_node_tree_can_exceed_the_nic_total() -> None:
    """NVLS-tree at 2 nodes moves S/g per GPU over the network: busbw above the node's NIC GB/s."""
    result = validate("prod")
    assert isinstance(result, Valid)
    two = collective_on(result.spec, result.topology, "all_reduce", 2, 8 * GiB)
    assert two.algorithm == "nvls_tree"
    assert two.busbw_GBps > 400 * load_calibration().network("roce").value


def test_all_to_all_is_bounded_by_the_nic_per_gpu() -> None:
    result = validate("article-c")
    assert isinstance(result, Valid)
    a2a = collective_on(result.spec, result.topology, "all_to_all", 8, 8 * GiB)
    bound = 50 * load_calibration().network("roce").value * 63 / 56
    assert a2a.busbw_GBps <= bound
    assert a2a.busbw_GBps == pytest.approx(bound, rel=0.05)


def test_larger_messages_take_longer_and_run_faster() -> None:
    result = validate("prod")
    assert isinstance(result, Valid)
    for collective in ("all_reduce", "all_gather", "all_to_all", "broadcast"):
        rows = [collective_on(result.spec, result.topology, collective, 4, 2**power) for power in range(10, 34, 2)]
        assert [row.time_s for row in rows] == sorted(row.time_s for row in rows)
        assert [row.busbw_GBps for row in rows] == sorted(row.busbw_GBps for row in rows)


def test_cloud_pools_use_their_fabric_efficiency() -> None:
    aws = design(target="aws", cloud={"region": "us-east-1", "zone": "us-east-1a"},
                 node_pools=[{"name": "p5", "nodes": 8, "instance_type": "p5.48xlarge"}])
    azure = design(target="azure", cloud={"region": "eastus", "ssh_public_key": EXAMPLE_KEY},
                   node_pools=[{"name": "nd", "nodes": 8, "instance_type": "Standard_ND96isr_H100_v5"}])
    assert aws.spec and aws.topology and azure.spec and azure.topology
    efa = collective_on(aws.spec, aws.topology, "all_to_all", 8, 8 * GiB)
    ib = collective_on(azure.spec, azure.topology, "all_to_all", 8, 8 * GiB)
    calibration = load_calibration()
    ratio = calibration.network("efa").value / calibration.network("infiniband").value
    assert efa.peak_busbw_GBps / ib.peak_busbw_GBps == pytest.approx(ratio)


def test_estimate_table_rows_for_the_report() -> None:
    result = validate("article-a")  # fails validation: estimates still come out
    assert isinstance(result, Valid)
    rows = estimate_table(result.spec, result.topology)
    assert len(rows) == 5 * 2 * 5
    keys = {"pool", "collective", "nodes", "gpus", "size_bytes", "algorithm", "time_s", "algbw_GBps", "busbw_GBps",
            "bottleneck", "placement"}
    assert all(keys <= row.keys() for row in rows)
    assert {row["placement"] for row in rows} == {"packed", "worst"}
    assert all(row["nodes"] == 64 and row["gpus"] == 512 for row in rows)


def test_three_tiers_spine_uplinks_limit_flows_between_pods() -> None:
    """32 nodes x 2 x 400G, 16 rack-tor leaves in 2 pods, spines 2:1 to the cores.
    packed all-to-all over both pods: each pod sends 16 x 800 x 16/31 Gbps off-pod over
    4 spines x 4 x 400G = 6,400 Gbps up: 0.969. worst: the spines' fair share, 1/2."""
    result = design(
        node_pools=[{"name": "h", "nodes": 32, "gpu": "H100", "fabric_nics": {"count": 2, "gbps": 400}}],
        fabric={"design": "rack-tor", "leaf": {"ports": 8, "port_gbps": 400}, "spine": {"ports": 8, "port_gbps": 400},
                "core": {"ports": 8, "port_gbps": 400}, "pods": 2, "max_oversubscription": {"leaf": 1.0, "spine": 2.0}},
    )
    assert isinstance(result, Valid)
    topology = result.topology
    assert topology.fabric_plan is not None and topology.fabric_plan.pods == 2
    packed = place(topology, "h", 32, "packed")
    share = fabric_share(topology, packed, all_to_all=True)
    assert share.tier == "spine" and share.factor == pytest.approx(6400 / (16 * 800 * 16 / 31))
    assert fabric_share(topology, place(topology, "h", 16, "packed"), all_to_all=True).factor == 1.0  # one pod
    worst = place(topology, "h", 4, "worst")
    assert len({topology.graph.nodes[min(group)]["pod"] for group in worst.groups}) == 2  # pods interleaved
    spread = fabric_share(topology, worst, ring_flows(4))
    assert spread.tier == "spine" and spread.factor == pytest.approx(0.5)


def _gcp(instance_type: str) -> Valid:
    from cluster.pipeline import validate_mapping

    result = validate_mapping("t", {"name": "t", "target": "gcp",
                                    "cloud": {"region": "us-central1", "zone": "us-central1-a"},
                                    "node_pools": [{"name": "p", "nodes": 4, "instance_type": instance_type}]})
    assert isinstance(result, Valid), [f.message for f in result.findings]
    return result


def test_the_providers_forced_nccl_algorithm_and_protocol_are_followed() -> None:
    """a3-highgpu-8g's documented NCCL environment sets NCCL_ALGO=Ring and NCCL_PROTO=Simple
    (catalog, from cluster-toolkit's run-nccl-tests.sh): its 2-node all-reduce is a ring at
    about the node's TCPX bandwidth, not a tree above it. A3 Mega's environment forces neither."""
    high = _gcp("a3-highgpu-8g")
    assert isinstance(high, Valid)
    hw = hardware(high.spec, high.topology, high.spec.pools[0])
    assert (hw.forced_algorithm, hw.forced_protocol) == ("ring", "Simple")
    for nodes in (1, 2):
        result = collective_on(high.spec, high.topology, "all_reduce", nodes, 8 * GiB)
        assert (result.algorithm, result.protocol) == ("ring", "Simple")
    two = collective_on(high.spec, high.topology, "all_reduce", 2, 8 * GiB)
    assert two.busbw_GBps <= hw.node_nic_gbytes * hw.network_efficiency
    mega = _gcp("a3-megagpu-8g")
    assert isinstance(mega, Valid)
    assert collective_on(mega.spec, mega.topology, "all_reduce", 2, 8 * GiB).algorithm == "nvls_tree"
