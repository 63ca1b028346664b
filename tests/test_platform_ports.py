"""Port names from the platform data: one cage model (catalog `cages`, `linecards`, `eos`) for
NVUE, EOS, SONiC's SKU maps, the cabling plan and the bill of materials."""

from __future__ import annotations

import re
from typing import Any

import pytest

from cluster.artifacts import render_tree
from cluster.breakout import breakout
from cluster.catalog import load_catalog
from cluster.dialects.sonic.skus import sonic_platforms, sonic_sku
from cluster.exports.bom import bill_of_materials
from cluster.naming import switch_port
from cluster.pipeline import Valid
from tests.conftest import run, stack
from tests.test_exports_cabling import assert_cabling_names_are_the_configs

SKUS = [(model, gbps) for model, platform in sorted(sonic_platforms().items()) for gbps in platform.skus]
CAGED = [(model, gbps) for model, entry in sorted(load_catalog().switches.items()) if entry.cages is not None
         for gbps in sorted(entry.port_modes)]


def rendered(fabric: dict[str, Any], nodes: int = 64, **changes: Any) -> dict[str, str]:
    result = run(stack(fabric=fabric, node_pools=[{"name": "h200", "nodes": nodes, "gpu": "H200"}], **changes))
    assert result.ok and isinstance(result, Valid), [str(f) for f in result.findings]
    assert_cabling_names_are_the_configs(result)
    return render_tree(result.spec, result.topology)


@pytest.mark.parametrize(("model", "gbps"), CAGED)
def test_every_port_speed_of_a_caged_model_is_a_breakout_its_lanes_carry(model: str, gbps: int) -> None:
    entry = load_catalog().switches[model]
    assert entry.cages is not None
    split = breakout(model, gbps)
    assert split is not None
    cages_used = entry.cages.count // split.step
    assert split.ports * cages_used == entry.port_modes[gbps]
    assert split.lanes(gbps) * entry.cages.lane_gbps >= gbps, "the port's lanes cannot carry its speed"
    assert split.lanes(gbps) <= split.stride <= entry.cages.lanes
    last = split.cage(entry.port_modes[gbps] - 1)
    assert last < entry.cages.count and (split.step == 1 or last % 2 == 0)


@pytest.mark.parametrize(("model", "gbps"), SKUS)
def test_nvue_eos_and_the_sonic_sku_put_every_port_on_the_same_cage(model: str, gbps: int) -> None:
    """Port i is on the same front-panel cage whichever OS runs the box: the SONiC SKU's
    port_config.ini `index` is the cage the cage model gives (SN5600 at 100G: the odd cages)."""
    sku = sonic_sku(model, gbps)
    split = breakout(model, gbps)
    assert sku is not None and split is not None
    for index, port in enumerate(sku.port_map):
        assert int(port.front_panel) == split.cage(index) + 1, (index, port)
        assert len(port.lanes.split(",")) == split.lanes(gbps), (index, port)
        if "nvue" in load_catalog().switches[model].runs:
            name = switch_port("nvue", index, model, gbps)
            assert re.fullmatch(rf"swp{split.cage(index) + 1}(s\d)?", name), (index, name)


def test_sn5600_at_100g_splits_the_odd_cages_8x() -> None:
    """Cumulus 5.14, SN5600: '256x 100G - 32x OSFP break out into 8x - You must disable the
    adjacent OSFP port' (NVUE disables it itself): swpNs0..s7 on odd N only."""
    files = rendered({"leaf": {"switch": "SN5600", "port_gbps": 100}, "spine": {"switch": "SN5600", "port_gbps": 100}},
                     nodes=32, policy={"min_gbps_per_gpu": 100, "recommended_gbps_per_gpu": 100})
    nvue = files["switches/spine-001/nvue.sh"]
    names = re.findall(r"^nv set interface (swp\S+) link mtu", nvue, re.M)
    assert names and len(names) == len(set(names))
    cages = sorted({int(name[3:].split("s")[0]) for name in names})
    assert all(cage % 2 == 1 for cage in cages), cages
    assert all(re.fullmatch(r"swp\d+s[0-7]", name) for name in names), names
    assert re.findall(r"^nv set interface (swp\d+) link breakout (\S+)$", nvue, re.M) == [
        (f"swp{cage}", "8x") for cage in cages]


def test_the_bom_counts_one_1_to_8_breakout_per_odd_cage_used() -> None:
    result = run(stack(
        fabric={"leaf": {"switch": "SN5600", "port_gbps": 400}, "spine": {"switch": "SN5600", "port_gbps": 400}},
        management={"leaf": {"switch": "SN5600", "ports": 16, "port_gbps": 100}},
        node_pools=[{"name": "h200", "nodes": 12, "gpu": "H200",
                     "management_nics": {"count": 1, "gbps": 100}}]))
    assert result.ok and isinstance(result, Valid), [str(f) for f in result.findings]
    lines = [line for line in bill_of_materials(result.spec, result.topology).lines
             if line.network == "management" and line.tier == "host-leaf"]
    assert [(line.item, line.quantity) for line in lines] == [("aoc-800g-8x100g", 2)], lines  # 12 hosts: 8 + 4


def test_a_7808r3_names_its_linecard_ports_and_uses_the_voq_queue_form() -> None:
    """Linecards in slots 3-10, 36 QSFP-DD cages each: Ethernet<slot>/<port>/1 at `400g-8`; a
    Sand platform configures `tx-queue`, never `uc-tx-queue`; its management port is Management0."""
    files = rendered({"leaf": {"switch": "7060X6", "port_gbps": 400}, "spine": {"switch": "7808R3", "port_gbps": 400}})
    spine = files["switches/spine-001/eos.cfg"]
    ports = re.findall(r"^interface (Ethernet\S+)\n(?:   .*\n)*?   speed (\S+)", spine, re.M)
    assert ports
    for name, speed in ports:
        slot, cage, lane = (int(part) for part in name[len("Ethernet"):].split("/"))
        assert 3 <= slot <= 10 and 1 <= cage <= 36 and lane == 1, name
        assert speed == "400g-8", (name, speed)
    assert re.search(r"^   tx-queue 3$", spine, re.M) and "uc-tx-queue" not in spine
    assert spine.splitlines()[1].startswith("! Management0 cabled to ")
    leaf = files["switches/leaf-001-r0/eos.cfg"]
    assert re.search(r"^   uc-tx-queue 3$", leaf, re.M) and not re.search(r"^   tx-queue", leaf, re.M)
    assert re.search(r"description spine-001 Ethernet3/1/1$", leaf, re.M)
    assert re.search(r"^C\d+,oob,switch-mgmt,spine-001,mgmt0,oob-leaf-\d+,p\d+,1,cat6,\d+,Management0,swp\d+$",
                     files["cabling.csv"], re.M)


def test_a_7808r3_at_100g_runs_each_cage_on_two_lanes() -> None:
    assert [switch_port("eos", index, "7808R3", 100) for index in (0, 35, 36, 287)] == [
        "Ethernet3/1/1", "Ethernet3/36/1", "Ethernet4/1/1", "Ethernet10/36/1"]
    split = breakout("7808R3", 100)
    assert split is not None and split.lanes(100) == 2  # EOS `speed 100g-2` on lane 1 of an 8-lane cage
    wide = breakout("7808R3", 400)
    assert wide is not None and wide.lanes(400) == 8 and wide.lanes(200) == 4  # a 200G link on a 400G port
