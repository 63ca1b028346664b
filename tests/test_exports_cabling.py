"""Cabling plan and bill of materials, checked against the graph and the published SuperPOD counts."""

from __future__ import annotations

import csv
import io
import math
import re
from collections import Counter

import pytest
import yaml

from cluster.catalog.prices import load_prices
from cluster.exports.bom import bill_of_materials, bom_csv
from cluster.exports.cabling import COLUMNS, cabling_csv
from cluster.naming import management_port
from cluster.pipeline import Result, Valid, validate
from cluster.topology import NETWORKS
from tests.conftest import ROOT, run, stack

EXAMPLES = ["dev", "prod", "superpod", "legacy"]


def _ok(result: Result) -> Valid:
    assert isinstance(result, Valid), result.findings
    return result


def _rows(result: Result) -> list[dict[str, str]]:
    assert isinstance(result, Valid)
    return list(csv.DictReader(io.StringIO(cabling_csv(result.spec, result.topology))))


def test_superpod_matches_the_published_counts() -> None:
    """DGX SuperPOD H100 4 SU (FACTS.md 3.3): 32 leaves, 16 spines, 1,016 node and 1,024 spine cables."""
    result = _ok(validate("superpod"))
    bom = bill_of_materials(result.spec, result.topology)
    assert bom.count("fabric", "leaf", "switch") == 32
    assert bom.count("fabric", "spine", "switch") == 16
    assert bom.count("fabric", "host-leaf", "cable") == 1016
    assert bom.count("fabric", "leaf-spine", "cable") == 1024
    rows = _rows(result)
    links = Counter((row["network"], row["link"]) for row in rows)
    assert links["fabric", "host-leaf"] == 1016
    assert links["fabric", "leaf-spine"] == 1024
    # Transceivers apart from cables, one per cage in use: a DGX H100 carries its 8 compute ports in
    # 4 twin-port OSFP cages (DGX H100 User Guide, Network Modules: OSFP1..4, P1/P2), so 127 x 4 = 508;
    # a QM9700 twin-port cage carries two 400G ports, so a leaf with 31 or 32 downlinks fills 16 cages.
    assert bom.count("fabric", "host-leaf", "transceiver") == 127 * 4 + 32 * 16
    assert bom.count("fabric", "leaf-spine", "transceiver") == 32 * 16 + 16 * 32


@pytest.mark.parametrize("name", EXAMPLES)
def test_every_link_of_the_graph_is_one_cable(name: str) -> None:
    result = _ok(validate(name))
    graph = result.topology.graph
    expected = Counter()
    for _u, _v, key, data in graph.edges(keys=True, data=True):
        expected[key] += data["links"]
    rows = _rows(result)
    assert Counter(row["network"] for row in rows) == expected
    assert {row["network"] for row in rows} == set(NETWORKS)  # out-of-band included
    assert [row["cable"] for row in rows] == [f"C{index:07d}" for index in range(1, len(rows) + 1)]


@pytest.mark.parametrize("name", EXAMPLES)
def test_no_port_is_used_twice_and_ports_exist(name: str) -> None:
    result = _ok(validate(name))
    graph = result.topology.graph
    ends = Counter()
    down_ports: dict[str, list[int]] = {}
    up_ports: dict[str, list[int]] = {}
    for row in _rows(result):
        for side in ("a", "b"):
            device, port = row[f"{side}_device"], row[f"{side}_port"]
            ends[device, port] += 1
            node = graph.nodes[device]
            if node["kind"] != "switch" or port == "mgmt0":
                continue
            number = int(port[1:])
            if port.startswith("u"):
                assert number <= node["uplink_ports"], (device, port)
                continue
            assert 1 <= number <= node["ports"], (device, port)
            (down_ports if side == "b" else up_ports).setdefault(device, []).append(number)
    assert max(ends.values()) == 1, [end for end, count in ends.items() if count > 1][:5]
    for device, numbers in up_ports.items():  # downlinks first, then uplinks
        if device in down_ports:
            assert max(down_ports[device]) < min(numbers), device


def test_ports_are_allocated_in_host_order() -> None:
    rows = [row for row in _rows(_ok(validate("prod"))) if row["b_device"] == "leaf-001-r3"]
    hosts = [row["a_device"] for row in rows if row["link"] == "host-leaf"]
    assert hosts == [f"h200-node-{n:03d}" for n in range(1, 65)]
    assert [row["b_port"] for row in rows[:3]] == ["p1", "p2", "p3"]
    assert {row["a_port"] for row in rows if row["link"] == "host-leaf"} == {"gpu-nic3"}


def test_media_by_tier() -> None:
    media = {(row["network"], row["link"]): row["media"] for row in _rows(_ok(validate("prod")))}
    assert media["fabric", "host-leaf"] == "optics-mmf"  # rail leaves are not in the host's rack
    assert media["fabric", "leaf-spine"] == "optics-mmf"
    assert media["oob", "host-leaf"] == "cat6"
    assert media["oob", "switch-mgmt"] == "cat6"
    legacy = {(row["network"], row["link"]): row["media"] for row in _rows(_ok(validate("legacy")))}
    assert legacy["fabric", "host-leaf"] == "dac"  # rack-tor: the leaf is in the rack


def test_cabling_is_deterministic_and_has_the_documented_columns() -> None:
    result = _ok(validate("superpod"))
    first = cabling_csv(result.spec, result.topology)
    again = _ok(validate("superpod"))
    assert cabling_csv(again.spec, again.topology) == first
    assert first.splitlines()[0] == ",".join(COLUMNS)


def test_dual_port_storage_nics_are_named_per_port() -> None:
    both_ports = stack(node_pools=[{"name": "dgx", "nodes": 4, "gpu": "H100",
                                    "storage_nics": {"count": 2, "gbps": 200, "ports_per_nic": 2}}])
    rows = [row for row in _rows(_ok(run(both_ports)))
            if row["a_device"] == "dgx-node-001" and row["network"] == "storage"]
    assert [row["a_port"] for row in rows] == ["stor-nic0p1", "stor-nic0p2", "stor-nic1p1", "stor-nic1p2"]


@pytest.mark.parametrize("name", EXAMPLES)
def test_every_item_is_priced_and_totals_add_up(name: str) -> None:
    result = _ok(validate(name))
    bom = bill_of_materials(result.spec, result.topology)
    assert bom.missing == ()
    low, high = bom.usd()
    assert 0 < low <= high
    assert (low, high) == pytest.approx((sum(line.usd[0] for line in bom.lines), sum(line.usd[1] for line in bom.lines)))
    assert bom.usd() == pytest.approx(tuple(map(sum, zip(*(bom.usd(net) for net in bom.networks()), strict=True))))
    assert bom.per_node_usd()[0] == pytest.approx(low / result.spec.nodes)
    kwh = bom.kwh_per_year()
    assert kwh[0] == pytest.approx(bom.watts()[0] * 8760 / 1000)
    rows = list(csv.reader(io.StringIO(bom_csv(bom))))
    assert rows[-1][0] == "all" and float(rows[-1][8]) == pytest.approx(low)


def test_switch_side_transceivers_follow_cages_in_use() -> None:
    """Counted independently from the graph: each leaf needs ceil(downlinks / 2) twin-port modules."""
    result = _ok(validate("superpod"))
    assert isinstance(result, Valid)
    topology = result.topology
    leaves = [name for name, _ in topology.switches("fabric", "leaf")]
    expected = sum(math.ceil(topology.switch_loads[name].down_links / 2) for name in leaves)
    bom = bill_of_materials(result.spec, result.topology)
    switch_side = sum(line.quantity for line in bom.lines
                      if line.tier == "host-leaf" and line.category == "transceiver" and "switch cage" in line.description)
    assert switch_side == expected == 512


def test_dgx_h100_twin_port_cages_take_one_optic_each_not_one_per_port() -> None:
    result = _ok(validate("superpod"))
    bom = bill_of_materials(result.spec, result.topology)
    host_side = [line for line in bom.lines if line.network == "fabric" and line.tier == "host-leaf"
                 and line.category == "transceiver" and "switch cage" not in line.description]
    assert [(line.item, line.quantity) for line in host_side] == [("transceiver-800g-mmf", 508)]
    assert "twin-port (2 x 400G)" in host_side[0].description and "host cage" in host_side[0].description


def test_a_pool_that_overrides_the_servers_ports_gets_one_optic_per_port() -> None:
    """The catalog's cages describe its own 8-port server; 4 ports given in the stack are not those cages."""
    result = _ok(run(stack(node_pools=[{"name": "dgx", "nodes": 8, "gpu": "H100", "server": "dgx-h100",
                                        "fabric_nics": {"count": 4, "gbps": 400}}])))
    bom = bill_of_materials(result.spec, result.topology)
    host_side = [line for line in bom.lines if line.network == "fabric" and line.tier == "host-leaf"
                 and line.category == "transceiver" and "switch cage" not in line.description]
    assert [(line.description, line.quantity) for line in host_side] == [
        ("400G transceiver, MMF (host NIC port)", 8 * 4)]


@pytest.mark.parametrize(("name", "per_cage", "item"), [("prod", 4, "aoc-800g-4x200g"), ("superpod", 2, "aoc-800g-2x400g")])
def test_storage_ports_into_800g_cages_take_one_breakout_per_cage(name: str, per_cage: int, item: str) -> None:
    """SN5600: 64 OSFP cages, 256 ports at 200G or 128 at 400G (NVIDIA SN5000 data interfaces page), so
    4 or 2 per cage; a 200G or 400G AOC has no plug for an 800G cage. prod's storage NICs run at 200G,
    superpod's DGX H100 ones at 400G. Counted from the graph: host links per storage leaf / ports per cage."""
    result = _ok(validate(name))
    graph = result.topology.graph
    leaves = [leaf for leaf, _ in result.topology.switches("storage", "leaf")]
    assert {graph.nodes[leaf]["model"] for leaf in leaves} == {"SN5600"}
    host_links = {leaf: sum(data["links"] for _, _, key, data in graph.edges(leaf, keys=True, data=True)
                            if key == "storage" and graph.nodes[data["lower"]]["kind"] == "host") for leaf in leaves}
    bom = bill_of_materials(result.spec, result.topology)
    lines = [line for line in bom.lines if line.network == "storage" and line.tier == "host-leaf"]
    assert [(line.category, line.item) for line in lines] == [("cable", item)]
    assert lines[0].quantity == sum(math.ceil(links / per_cage) for links in host_links.values())
    assert f"1:{per_cage} breakout" in lines[0].description
    storage_rows = [row for row in _rows(result) if row["network"] == "storage" and row["link"] == "host-leaf"]
    assert len(storage_rows) == sum(host_links.values())  # the cabling plan still lists every leg


def test_rack_tor_twin_port_hosts_into_twin_port_cages_take_one_cable_per_cage() -> None:
    """legacy: 32 DGX-class H100 nodes, all 8 fabric ports to their rack's SN5600 at 400G (2 per cage)."""
    result = _ok(validate("legacy"))
    bom = bill_of_materials(result.spec, result.topology)
    cables = [line for line in bom.lines if line.network == "fabric" and line.tier == "host-leaf"]
    assert [(line.item, line.quantity) for line in cables] == [("dac-800g", 32 * 4)]
    assert "twin-port (2 x 400G)" in cables[0].description


def test_stack_costs_override_the_catalog() -> None:
    base = _ok(run(stack()))
    cheap = _ok(run(stack(costs={"prices": {"SN5600": {"usd": 1000, "watts": [100, 200]}}, "usd_per_kwh": [0.1, 0.2]})))
    before = bill_of_materials(base.spec, base.topology)
    after = bill_of_materials(cheap.spec, cheap.topology)
    leaf = next(line for line in after.lines if line.item == "SN5600" and line.tier == "leaf")
    assert leaf.unit_usd == (1000.0, 1000.0) and leaf.unit_watts == (100.0, 200.0)
    assert "stack file" in leaf.source
    assert after.usd()[1] < before.usd()[1]
    assert after.usd_per_kwh == (0.1, 0.2)


@pytest.mark.parametrize(("costs", "words"), [
    ({"prices": {"NOPE-1": {"usd": 1}}}, "unknown price item 'NOPE-1'"),
    ({"prices": {"SN5600": {"usd": [3, 2]}}}, "low above high"),
    ({"usd_per_kwh": -1}, "costs.usd_per_kwh"),
])
def test_bad_costs_are_schema_errors(costs: dict[str, object], words: str) -> None:
    result = run(stack(costs=costs))
    assert result.exit_code == 2
    assert any(f.rule == "SCHEMA" and (words in f.message or words in f.path) for f in result.findings), result.findings


def test_generic_switches_are_priced_per_port() -> None:
    result = _ok(validate("article-c"))  # leaf {ports: 64, port_gbps: 400}
    bom = bill_of_materials(result.spec, result.topology)
    leaf = next(line for line in bom.lines if line.network == "fabric" and line.tier == "leaf")
    port = load_prices().items["generic-port-400g"]
    assert leaf.item == "generic-port-400g"
    assert leaf.unit_usd == (64 * port.usd[0], 64 * port.usd[1])


def test_every_price_names_its_source_and_status() -> None:
    for item, price in load_prices().items.items():
        assert any(word in price.source for word in ("VERIFIED", "UNVERIFIED", "PARTIAL")), item


def assert_cabling_names_are_the_configs(result: Result) -> None:
    """a_name / b_name of every switch end is the port its rendered config configures and the name
    `verify` expects the switch to report (one naming for cabling, configs and verification)."""
    from cluster.artifacts import render_tree
    from cluster.exports.cabling import cables
    from cluster.verify.expected import expected_cables

    assert isinstance(result, Valid)
    files = render_tree(result.spec, result.topology)
    expected = {(cable.lower.device, cable.upper.device, cable.upper.port) for cable in
                expected_cables(result.spec, result.topology)}
    nodes = result.topology.graph.nodes
    checked = 0
    for cable in cables(result.spec, result.topology):
        config = next((text for path, text in files.items() if path.startswith(f"switches/{cable.b_device}/")
                       and not path.endswith("frr.conf")), None)
        if config is None or cable.b_name == management_port(nodes[cable.b_device]):
            continue  # InfiniBand switches have no config of ours; management ports are not configured
        assert re.search(rf"(?<![\w/]){re.escape(cable.b_name)}(?![\w/])", config), (cable.b_device, cable.b_name)
        assert (cable.a_device, cable.b_device, cable.b_name) in expected, cable
        checked += 1
    assert checked > 0


@pytest.mark.parametrize("stack", ["dev", "prod", "superpod", "pods"])
def test_cabling_names_each_switch_port_as_its_config_and_verify_do(stack: str) -> None:
    assert_cabling_names_are_the_configs(validate(stack))


def test_network_spines_are_the_cheapest_model_at_the_uplink_speed_and_the_bom_says_why() -> None:
    """prod's management leaves uplink at 100G: its spine is the cheapest catalog switch with 100G
    ports whose port names are known (an SN4700), not a 51.2T SN5600; a spine the stack names stays."""
    from cluster.exports.bom import bill_of_materials

    result = validate("prod")
    assert isinstance(result, Valid) and result.spec.management is not None
    assert result.spec.management.spine.model == "SN4700"
    [line] = [line for line in bill_of_materials(result.spec, result.topology).lines
              if line.network == "management" and line.tier == "spine" and line.category == "switch"]
    assert "lowest spine cost with 100G ports" in line.description
    named = yaml.safe_load((ROOT / "stacks" / "Pulumi.prod.yaml").read_text())["config"]["gpu-cluster:cluster"]
    named["management"] = {"spine": {"switch": "SN5600", "port_gbps": 100}}
    chosen = run(named)
    assert isinstance(chosen, Valid) and chosen.spec.management is not None
    assert chosen.spec.management.spine.model == "SN5600" and chosen.spec.management.spine.chosen == ""


@pytest.mark.parametrize(("stack", "model", "spines"), [("dev", "SN4700", 0), ("superpod", "SN5600", 1)])
def test_storage_leaves_are_the_lowest_switch_cost_that_fits(stack: str, model: str, spines: int) -> None:
    """dev's 8 storage ports fit one SN4700; superpod's 254 (2 x 400G per DGX H100) take three SN5600
    leaves under one SN5600 spine (the spine by the network's cost, not the cheapest box). prod names
    its own."""
    result = validate(stack)
    assert isinstance(result, Valid) and result.spec.storage is not None
    assert result.spec.storage.leaf.model == model and "lowest switch cost" in result.spec.storage.leaf.chosen
    assert len([n for n, d in result.topology.switches("storage") if d["tier"] == "spine"]) == spines
    [line] = [line for line in bill_of_materials(result.spec, result.topology).lines
              if line.network == "storage" and line.tier == "leaf" and line.category == "switch"]
    assert "lowest switch cost" in line.description
    named = validate("prod")
    assert isinstance(named, Valid) and named.spec.storage is not None
    assert (named.spec.storage.leaf.model, named.spec.storage.leaf.chosen) == ("SN5600", "")


def test_plan_ports_are_typed_and_written_as_the_plan_names_them() -> None:
    """Ports travel as records (kind and number, NIC and port) and become text only in cabling.csv:
    nothing parses `p3` or `gpu-nic1p2` back."""
    from cluster.naming import MANAGEMENT, HostPort, PlanPort

    assert (str(PlanPort("main", 3)), PlanPort("main", 3).front_panel_index(32)) == ("p3", 2)
    assert (str(PlanPort("fixed", 1)), PlanPort("fixed", 1).front_panel_index(48)) == ("u1", 48)
    assert str(MANAGEMENT) == "mgmt0"
    assert (str(HostPort("fabric", 1, 1, 2)), HostPort("fabric", 1, 1, 2).position) == ("gpu-nic1p2", 3)
    assert (str(HostPort("storage", 2)), HostPort("storage", 2).position) == ("stor-nic2", 2)
    assert str(HostPort("oob")) == "bmc"
    result = validate("dev")
    assert isinstance(result, Valid)
    rows = list(csv.DictReader(io.StringIO(cabling_csv(result.spec, result.topology))))
    assert {row["a_port"] for row in rows} >= {"gpu-nic0", "bmc", "mgmt0"} and any(row["b_port"] == "p1" for row in rows)
