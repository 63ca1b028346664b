"""`import`: what a built fabric's devices report -> a stack file whose built topology is the
fabric's own; faults reported at the device, never smoothed into another design.

The round trip: a design's cables as its devices report them (tests/neighbor_reports.py: one
`lldpctl -f json` per device, an `ibnetdiscover -p` walk of an InfiniBand fabric) -> import ->
the written stack file, validated again from its text -> the same switches (name, role, model,
dialect, speed, ports), the same hosts and the same cables, port by port.
"""

from __future__ import annotations

import copy
import json
import re
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from cluster.catalog import load_catalog
from cluster.cli import main
from cluster.importer.infer import Options, gpu_of
from cluster.importer.observe import Observed, observe
from cluster.importer.run import Imported, import_design
from cluster.importer.same_names import reader_links
from cluster.naming import front_panel, switch_port
from cluster.pipeline import Valid, validate, validate_mapping
from cluster.records import SwitchNode
from cluster.topology import Topology
from cluster.verify.check import Verification, claims_of, design_names, verify
from cluster.verify.expected import Cable, End, expected_cables
from tests.conftest import ROOT
from tests.neighbor_reports import moved, reports

ONPREM = sorted(path.name.removeprefix("Pulumi.").removesuffix(".yaml") for path in (ROOT / "stacks").glob("*.yaml")
                if "target: onprem" in path.read_text())
VERIFY_DATA = ROOT / "tests" / "data" / "verify"


def write_reports(folder: Path, result: Valid, cables: list[Cable] | None = None) -> tuple[Path, Path | None]:
    files, discovery = reports(result.spec, result.topology, cables)
    lldp = folder / "lldp"
    lldp.mkdir()
    for device, text in files.items():
        (lldp / f"{device}.json").write_text(text)
    ib = None
    if discovery is not None:
        ib = folder / "fabric.txt"
        ib.write_text(discovery)
    return lldp, ib


def imported(folder: Path, result: Valid, cables: list[Cable] | None = None, **options: Any) -> tuple[Imported, Valid]:
    """Import the design's reports; the written stack file validated again from its text."""
    lldp, ib = write_reports(folder, result, cables)
    observed = observe(lldp, ib, None)
    assert observed.problems == []
    done = import_design(observed, Options(name=result.spec.name, **options), "test")
    path = folder / "imported.yaml"
    path.write_text(done.text)
    again = validate(str(path))
    assert isinstance(again, Valid), [finding.message for finding in again.findings]
    return done, again


def _names_tell_speed(switch: SwitchNode, used: list[int]) -> bool:
    """Whether the names of the ports in use (numbers from 1) at the switch's speed differ from
    the names of the same ports at every other speed its model runs (breakout names do: swp1s0 at
    400G, swp1 at 800G; numbered ports do not, nor do ports 1 and 2 of a 2x and a 4x breakout)."""
    modes = load_catalog().switches[switch["model"]].port_modes
    names = [front_panel(switch, number) for number in used]
    for gbps, count in modes.items():
        if gbps != switch["port_gbps"] and count >= max(used, default=0):
            try:
                other = [switch_port(switch["os"], number - 1, switch["model"], gbps) for number in used]
            except ValueError:  # the OS cannot run the model at that speed (no SONiC port map for it)
                continue
            if other == names:
                return False
    return True


def observable(topology: Topology, name: str) -> tuple[bool, bool]:
    """Whether a switch's port count and port speed show in what it reports. The speed shows
    when some link runs at it, or the names of its catalog model's ports at it are its own; the
    port count when its uplinks sit on its top ports, or it is its catalog model's count at that
    speed. (A generic box with no uplink shows only the ports in use.)"""
    switch = topology.switch(name)
    catalog = not switch["model"].startswith("generic-")
    uplinks = any(data["lower"] == name and data["network"] == switch["network"] for _, _, data in topology.cables(name))
    ports = topology.switch_ports
    used = sorted(port.number for (device, _, _), span in ports.items() if device == name
                  for port in span.ports() if port.kind == "main")
    speed = any(data["gbps"] == switch["port_gbps"] for _, _, data in topology.cables(name)) or (
        catalog and _names_tell_speed(switch, used))
    full = catalog and load_catalog().switches[switch["model"]].port_modes[switch["port_gbps"]] == switch["ports"]
    return speed and (uplinks or full), speed


def assert_same_fabric(original: Topology, imported_topology: Topology, original_cables: list[Cable],
                       imported_cables: list[Cable], networks: set[str] | None = None) -> None:
    keys = ("network", "tier", "plane", "group", "rail", "pod", "os", "uplink_ports")
    switches = {name: tuple(data[key] for key in keys) for name, data in original.switches()
                if networks is None or data["network"] in networks}
    again = {name: tuple(data[key] for key in keys) for name, data in imported_topology.switches()
             if networks is None or data["network"] in networks}
    assert again == switches
    for name in switches:
        before, after = original.switch(name), imported_topology.switch(name)
        ports, speed = observable(original, name)
        if not before["model"].startswith("generic-"):
            assert after["model"] == before["model"], name
        if speed:
            assert after["port_gbps"] == before["port_gbps"], name
        if ports:
            assert after["ports"] == before["ports"], name
    hosts = {name: (data["pool"], data["index"], data["cluster_index"]) for name, data in original.nodes.items()
             if data["kind"] == "host"}
    assert {name: (data["pool"], data["index"], data["cluster_index"]) for name, data in imported_topology.nodes.items()
            if data["kind"] == "host"} == hosts

    def cabled(cables: list[Cable]) -> set[tuple[End, End, str, int]]:
        return {(cable.lower, cable.upper, cable.network, cable.gbps) for cable in cables
                if networks is None or cable.network in networks}

    assert cabled(imported_cables) == cabled(original_cables)


def round_trip(tmp_path: Path, result: Valid) -> Imported:
    """Import the design's reports, with the GPU of each pool whose name does not say it given (as
    a user gives `--gpu POOL=GPU`)."""
    gpus = {pool.name: pool.gpu for pool in result.spec.pools if gpu_of(pool.name) != pool.gpu}
    done, again = imported(tmp_path, result, gpus=gpus)
    assert done.exit_code == 0, [finding.message for finding in done.cable_findings]
    assert done.cable_findings == []
    assert_same_fabric(result.topology, again.topology, expected_cables(result.spec, result.topology),
                       expected_cables(again.spec, again.topology))
    return done


# --------------------------------------------------------------------------- every example


@pytest.mark.parametrize("stack", [*ONPREM, str(VERIFY_DATA / "Pulumi.tiny.yaml"), str(VERIFY_DATA / "Pulumi.tiny-ib.yaml")])
def test_every_example_round_trips(stack: str, tmp_path: Path) -> None:
    result = validate(stack)
    assert isinstance(result, Valid)
    round_trip(tmp_path, result)


def test_the_examples_cover_the_designs() -> None:
    designs = set()
    for stack in ONPREM:
        result = validate(stack)
        assert isinstance(result, Valid) and result.spec.fabric is not None
        designs.add((result.spec.fabric.design, result.topology.fabric_plan.tiers))  # type: ignore[union-attr]
    assert {("rail-optimized", 2), ("rail-optimized", 3), ("rack-tor", 2)} <= designs


# --------------------------------------------------------------------------- edge designs

GENERIC = {"ports": 16, "port_gbps": 400}
EDGE: dict[str, dict[str, Any]] = {
    "dual-plane": {"node_pools": [{"name": "b300", "nodes": 6, "gpu": "B300"}], "fabric": {"planes": 2, "leaf": GENERIC}},
    "rack-tor": {"node_pools": [{"name": "h100", "nodes": 5, "gpu": "H100", "fabric_nics": {"count": 4, "gbps": 400}}],
                 "fabric": {"design": "rack-tor", "leaf": GENERIC}},
    "rack-tor, two planes": {"node_pools": [{"name": "h100", "nodes": 9, "gpu": "H100",
                                             "fabric_nics": {"count": 4, "gbps": 400}}],
                             "fabric": {"design": "rack-tor", "planes": 2, "leaf": GENERIC}},
    "infiniband": {"node_pools": [{"name": "h100", "nodes": 6, "gpu": "H100"}],
                   "fabric": {"transport": "infiniband", "leaf": {"switch": "QM9700", "port_gbps": 400}}},
    "infiniband, 200G, fewer ports": {"node_pools": [{"name": "a100", "nodes": 20, "gpu": "A100"}],
                                      "fabric": {"transport": "infiniband",
                                                 "leaf": {"switch": "QM9700", "port_gbps": 200, "ports": 16}}},
    "three tiers, uneven pods": {"node_pools": [{"name": "h200", "nodes": 44, "gpu": "H200",  # 11 groups in 3 pods
                                                 "fabric_nics": {"count": 1, "gbps": 400}}],
                                 "fabric": {"leaf": {"ports": 8, "port_gbps": 400}}},
    "two pools of two NIC counts": {"node_pools": [{"name": "b", "nodes": 7, "gpu": "H200"},
                                                   {"name": "a", "nodes": 5, "gpu": "B200",
                                                    "fabric_nics": {"count": 4, "gbps": 400}}],
                                    "fabric": {"leaf": GENERIC}},
    "packed": {"node_pools": [{"name": "h200", "nodes": 10, "gpu": "H200"}],
               "fabric": {"leaf": GENERIC, "fill": "packed", "leaves": 24}},
    "converged storage": {"node_pools": [{"name": "h200", "nodes": 6, "gpu": "H200"}],
                          "fabric": {"leaf": {"ports": 32, "port_gbps": 400}, "shared_with": ["storage"]}},
    "named NICs": {"node_pools": [{"name": "gpu", "nodes": 3, "gpu": "H200",
                                   "fabric_nics": {"count": 2, "gbps": 400, "interfaces": ["ens1", "ens2"]},
                                   "storage_nics": {"count": 1, "gbps": 100, "interfaces": ["enp9"]}}],
                   "fabric": {"leaf": GENERIC}},
    "EOS": {"node_pools": [{"name": "mi300x", "nodes": 4, "gpu": "MI300X"}],
            "fabric": {"leaf": {"switch": "7060X6", "port_gbps": 400}}},
    "200G NICs on 400G leaves": {"node_pools": [{"name": "a100", "nodes": 4, "gpu": "A100"}],
                                 "fabric": {"leaf": {"switch": "SN4700", "port_gbps": 400}}},
    "a generic EOS management leaf": {"node_pools": [{"name": "h200", "nodes": 6, "gpu": "H200"}],
                                      "fabric": {"leaf": GENERIC},
                                      "management": {"leaf": {"ports": 32, "port_gbps": 100, "os": "eos"}}},
    "a SONiC storage leaf faster than its NICs": {"node_pools": [{"name": "h200", "nodes": 6, "gpu": "H200"}],
                                                  "fabric": {"leaf": {"switch": "SN5600"}},
                                                  "storage": {"leaf": {"switch": "SN5400", "os": "sonic",
                                                                       "port_gbps": 400}}},
}


@pytest.mark.parametrize("design", sorted(EDGE))
def test_edge_designs_round_trip(design: str, tmp_path: Path) -> None:
    result = validate_mapping("edge", {"name": "edge", "target": "onprem", **copy.deepcopy(EDGE[design])})
    assert isinstance(result, Valid), [finding.message for finding in result.findings]
    assert not [finding for finding in result.findings if finding.rule == "FAB-RADIX"]
    round_trip(tmp_path, result)


# Every network beside the fabric in models and dialects of its own: what a built cluster's storage,
# management and out-of-band switches are varies more than its GPU fabric.
SWEEP_FABRICS = ({"leaf": {"switch": "SN5600", "os": "sonic"}}, {"leaf": {"switch": "7060X6"}},
                 {"leaf": {"switch": "SN5600"}, "shared_with": ["storage"]})
SWEEP_NETWORKS = ({}, {"storage": {"leaf": {"switch": "SN5400", "os": "sonic", "port_gbps": 400}}},
                  {"storage": {"leaf": {"ports": 8, "port_gbps": 200}}, "management": {"leaf": {"switch": "MGMT-48x25",
                                                                                               "os": "eos"}}},
                  {"management": {"leaf": {"ports": 32, "port_gbps": 100, "os": "eos"}},
                   "oob": {"leaf": {"switch": "OOB-48x1", "os": "eos"}}},
                  {"storage": {"leaf": {"switch": "7060X6", "port_gbps": 400}}, "oob": {"leaf": {"switch": "OOB-48x1"}}})
SWEEP_POOLS = ([{"name": "h200", "nodes": 12, "gpu": "H200"}],
               [{"name": "b200", "nodes": 5, "gpu": "B200"}, {"name": "mi300x", "nodes": 7, "gpu": "MI300X"}])


@pytest.mark.slow
def test_a_sweep_of_network_models_and_dialects_round_trips(tmp_path: Path) -> None:
    built = 0
    for number, (fabric, networks, pools) in enumerate(
            (fabric, networks, pools) for fabric in SWEEP_FABRICS for networks in SWEEP_NETWORKS for pools in SWEEP_POOLS):
        result = validate_mapping("sweep", {"name": "sweep", "target": "onprem", "node_pools": copy.deepcopy(pools),
                                            "fabric": copy.deepcopy(fabric), **copy.deepcopy(networks)})
        assert isinstance(result, Valid) and result.exit_code == 0, [finding.message for finding in result.findings]
        (tmp_path / str(number)).mkdir()
        round_trip(tmp_path / str(number), result)
        built += 1
    assert built == len(SWEEP_FABRICS) * len(SWEEP_NETWORKS) * len(SWEEP_POOLS)


# --------------------------------------------------------------------------- generated designs

@st.composite
def designs(draw: st.DrawFn) -> dict[str, Any]:
    infiniband = draw(st.booleans())
    planes = draw(st.sampled_from([1, 2]))
    pools = []
    for name in draw(st.sampled_from([["h200"], ["b200", "h100"], ["h100", "h200"]])):
        count = draw(st.sampled_from([2, 4, 8]))
        pool: dict[str, Any] = {"name": name, "nodes": draw(st.integers(1, 12)), "gpu": name.upper(),
                                "fabric_nics": {"count": count, "gbps": draw(st.sampled_from([200, 400]))}}
        if draw(st.booleans()):
            pool["storage_nics"] = {"count": draw(st.sampled_from([0, 1, 2])), "gbps": 200}
        pools.append(pool)
    if infiniband:
        leaf: dict[str, Any] = {"switch": "QM9700", "port_gbps": 400, "ports": draw(st.sampled_from([16, 32, 64]))}
    else:
        leaf = draw(st.sampled_from([{"ports": 16, "port_gbps": 400}, {"ports": 32, "port_gbps": 400},
                                     {"switch": "SN5600", "port_gbps": 400, "ports": 24},
                                     {"switch": "SN4700", "port_gbps": 400}]))
    fabric: dict[str, Any] = {"leaf": leaf, "planes": planes,
                              "design": draw(st.sampled_from(["rail-optimized", "rack-tor"])),
                              "fill": draw(st.sampled_from(["even", "packed"]))}
    if infiniband:
        fabric["transport"] = "infiniband"
    return {"name": "gen", "target": "onprem", "node_pools": pools, "fabric": fabric}


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=designs())
def test_generated_designs_round_trip(data: dict[str, Any], tmp_path_factory: pytest.TempPathFactory) -> None:
    result = validate_mapping("gen", data)
    assume(isinstance(result, Valid))
    assert isinstance(result, Valid)
    assume(not any(finding.rule == "FAB-RADIX" for finding in result.findings))
    round_trip(tmp_path_factory.mktemp("gen"), result)


# --------------------------------------------------------------------------- faults

FAULTY = {"name": "faulty", "target": "onprem", "node_pools": [{"name": "h200", "nodes": 10, "gpu": "H200"}],
          "fabric": {"leaf": {"ports": 16, "port_gbps": 400}}}


def _free_port(result: Valid, cables: list[Cable], device: str) -> str:
    used = {end.port for cable in cables for end in (cable.lower, cable.upper) if end.device == device}
    switch = result.topology.switch(device)
    return next(front_panel(switch, number) for number in range(1, switch["ports"] + 1)
                if front_panel(switch, number) not in used)


def _host_cable(cables: list[Cable], host: str, rail: int) -> Cable:
    return next(cable for cable in cables if cable.lower.device == host and cable.network == "fabric"
                and cable.rail == rail)


def swap(result: Valid, cables: list[Cable]) -> str:
    first, second = _host_cable(cables, "h200-node-001", 0), _host_cable(cables, "h200-node-002", 0)
    cables[cables.index(first)] = moved(first, upper=second.upper)
    cables[cables.index(second)] = moved(second, upper=first.upper)
    return "CABLE-SWAPPED"


def missing_uplink(result: Valid, cables: list[Cable]) -> str:
    cables.remove(next(cable for cable in cables if cable.tier == "leaf-spine" and cable.lower.device == "leaf-002-r3"))
    return "CABLE-MISSING"


def wrong_leaf(result: Valid, cables: list[Cable]) -> str:
    cable = _host_cable(cables, "h200-node-001", 2)
    cables[cables.index(cable)] = moved(cable, upper=End("leaf-002-r2", _free_port(result, cables, "leaf-002-r2")))
    return "CABLE-WRONG-PEER"


def wrong_rail(result: Valid, cables: list[Cable]) -> str:
    cable = _host_cable(cables, "h200-node-009", 2)
    cables[cables.index(cable)] = moved(cable, upper=End("leaf-002-r3", _free_port(result, cables, "leaf-002-r3")))
    return "CABLE-WRONG-PEER"


FAULTS = {"a swapped cable": (swap, "leaf-001-r0"), "a missing uplink": (missing_uplink, "leaf-002-r3"),
          "a host on the wrong leaf": (wrong_leaf, "h200-node-001"),
          "a host on the wrong rail": (wrong_rail, "h200-node-009")}


@pytest.mark.parametrize("fault", sorted(FAULTS))
def test_faults_are_named_at_the_device_and_the_rest_is_imported(fault: str, tmp_path: Path) -> None:
    result = validate_mapping("faulty", FAULTY)
    assert isinstance(result, Valid) and result.topology.fabric_plan is not None
    assert result.topology.fabric_plan.groups >= 2
    cables = expected_cables(result.spec, result.topology)
    inject, device = FAULTS[fault]
    rule = inject(result, cables)
    done, again = imported(tmp_path, result, cables)
    assert done.exit_code == 1
    assert_same_fabric(result.topology, again.topology, expected_cables(result.spec, result.topology),
                       expected_cables(again.spec, again.topology))
    [finding] = done.cable_findings
    assert finding.rule == rule and device in finding.message
    assert "# Cabled differently from this design" in done.text and rule in done.text


# --------------------------------------------------------------------------- the comparison's reading

def compared_from_the_data(observed: Observed, done: Imported, ignore_speeds: bool = False) -> Verification:
    """The import's comparison made as `verify` makes it: the neighbor data read into claims in
    the imported design's names, and resolved again."""
    result = done.result
    assert isinstance(result, Valid)
    cables = expected_cables(result.spec, result.topology)
    gathered = claims_of(result.topology, cables, observed.lldp, observed.ib if observed.discovered else None,
                         observed.guid_names)
    if ignore_speeds:
        gathered.claims = [claim._replace(gbps=None) for claim in gathered.claims]
    return verify(result.spec, result.topology, cables, gathered, done.design.observed_networks)


def takes_the_reader_links(observed: Observed, done: Imported) -> bool:
    result = done.result
    assert isinstance(result, Valid)
    return reader_links(observed, design_names(result.topology, expected_cables(result.spec, result.topology))) is not None


def assert_compared_as_verify_does(observed: Observed, done: Imported, ignore_speeds: bool = False) -> None:
    again = compared_from_the_data(observed, done, ignore_speeds)
    assert done.verification is not None
    assert done.verification.findings == again.findings
    assert done.verification.comparison == again.comparison


@pytest.mark.parametrize("fault", ["none", *sorted(FAULTS)])
def test_the_reader_links_are_compared_where_every_name_reads_the_same(fault: str, tmp_path: Path) -> None:
    """A fabric imported from its own data names every device and port as reported: the
    comparison takes the links the reader resolved, and finds what resolving the data again finds."""
    result = validate_mapping("faulty", FAULTY)
    assert isinstance(result, Valid)
    cables = expected_cables(result.spec, result.topology)
    if fault != "none":
        FAULTS[fault][0](result, cables)
    lldp, _ = write_reports(tmp_path, result, cables)
    observed = observe(lldp, None, None)
    done = import_design(observed, Options(name="faulty"), "test")
    assert takes_the_reader_links(observed, done)
    assert_compared_as_verify_does(observed, done)
    assert len(done.cable_findings) == (fault != "none")


def test_a_hosts_mac_passed_over_for_its_port_name_reads_the_same() -> None:
    """Real lldpd: a host sends its MAC as port id and the port's name as description."""
    observed = observe(ROOT / "tests/data/import/lab-dev", None, None)
    assert observed.reported.passed_over
    done = import_design(observed, Options(name="dev", ignore_speeds=True), "test")
    assert takes_the_reader_links(observed, done)
    assert_compared_as_verify_does(observed, done, ignore_speeds=True)


def _edited(folder: Path, device: str, old: str, new: str, count: int = -1) -> None:
    path = folder / f"{device}.json"
    text = path.read_text()
    assert old in text
    path.write_text(text.replace(old, new, count))


@pytest.mark.parametrize("edit", ["a port name with spaces around it", "a device the design lacks, in capitals",
                                  "a port known by a later candidate", "a port named twice", "two files of one device",
                                  "a port in capitals"])
def test_names_that_read_otherwise_are_read_again_from_the_data(edit: str, tmp_path: Path) -> None:
    """Where the reader's names and the design's may differ, the comparison reads the data again."""
    result = validate_mapping("faulty", FAULTY)
    assert isinstance(result, Valid)
    lldp, _ = write_reports(tmp_path, result)
    if edit == "a port name with spaces around it":
        _edited(lldp, "leaf-001-r0", '"swp1": {', '" swp1 ": {')
    elif edit == "a device the design lacks, in capitals":
        _edited(lldp, "leaf-001-r0", '"h200-node-001": {', '"CONSOLE-01": {')
    elif edit == "a port known by a later candidate":
        _edited(lldp, "h200-node-001", '"value": "swp1"', '"value": "port-1"')  # its description stays swp1
    elif edit == "a port named twice":  # by the leaf and by the host: one port of two peers, a contested claim
        _edited(lldp, "h200-node-002", '"swp2"', '"swp02"')
    elif edit == "two files of one device":
        (lldp / "LEAF-001-R0.json").write_text((lldp / "leaf-001-r0.json").read_text())
    else:  # by both ends alike (the host's first neighbor is leaf-001-r0): the design knows it as swp1
        _edited(lldp, "leaf-001-r0", '"swp1": {', '"SWP1": {')
        _edited(lldp, "h200-node-001", '"swp1"', '"SWP1"', count=2)
    observed = observe(lldp, None, None)
    assert observed.problems == []
    done = import_design(observed, Options(name="faulty"), "test")
    assert not takes_the_reader_links(observed, done)
    assert_compared_as_verify_does(observed, done)


# --------------------------------------------------------------------------- uplink layouts

def prod_with(**fabric: Any) -> dict[str, Any]:
    data: dict[str, Any] = yaml.safe_load((ROOT / "stacks" / "Pulumi.prod.yaml").read_text())["config"]["gpu-cluster:cluster"]
    data["fabric"].update(fabric)
    return data


#: Designs whose switches have several links to each upper switch, so the two uplink layouts
#: cable them differently: prod (64 uplinks per leaf, 16 to each of 4 spines), and three tiers
#: in pods (2 links from each leaf to each spine of its pod, 4 from each spine to each core; the
#: cores' ports show only through the stride of the striped links).
LAYOUTS = {
    "prod": prod_with,
    "three tiers": lambda **fabric: {
        "name": "pods", "target": "onprem",
        "node_pools": [{"name": "h200", "nodes": 44, "gpu": "H200", "fabric_nics": {"count": 1, "gbps": 400}}],
        "fabric": {"leaf": {"ports": 8, "port_gbps": 400}, "spine": {"ports": 16, "port_gbps": 400},
                   "core": {"ports": 32, "port_gbps": 400}, "spines": 6, "cores": 2, "pods": 3, **fabric}},
}


@pytest.mark.parametrize("layout", ["blocks", "striped"])
@pytest.mark.parametrize("design", sorted(LAYOUTS))
def test_the_uplink_layout_round_trips(design: str, layout: str, tmp_path: Path) -> None:
    result = validate_mapping("layout", LAYOUTS[design](uplink_layout=layout))
    assert isinstance(result, Valid)
    assert not [finding for finding in result.findings if finding.rule == "FAB-RADIX"]
    done = round_trip(tmp_path, result)
    assert done.mapping["fabric"].get("uplink_layout", "blocks") == layout
    assert ("uplink_layout: striped" in done.text) == (layout == "striped")


def _leaf_uplinks(cables: list[Cable], leaf: str) -> list[Cable]:
    return [cable for cable in cables if cable.tier == "leaf-spine" and cable.lower.device == leaf]


def test_a_leaf_off_the_striped_layout_is_named_and_the_rest_stays_striped(tmp_path: Path) -> None:
    result = validate_mapping("prod", prod_with(uplink_layout="striped"))
    assert isinstance(result, Valid)
    cables = expected_cables(result.spec, result.topology)
    first, second = _leaf_uplinks(cables, "leaf-001-r3")[:2]  # to spine-001 and spine-002: exchanged
    cables[cables.index(first)] = moved(first, upper=second.upper)
    cables[cables.index(second)] = moved(second, upper=first.upper)
    done, again = imported(tmp_path, result, cables)
    assert done.mapping["fabric"]["uplink_layout"] == "striped" and done.exit_code == 1
    assert_same_fabric(result.topology, again.topology, expected_cables(result.spec, result.topology),
                       expected_cables(again.spec, again.topology))
    [finding] = done.cable_findings
    assert finding.rule == "CABLE-SWAPPED" and "leaf-001-r3" in finding.message


def test_uplinks_in_neither_layout_are_cable_findings_at_each_leaf(tmp_path: Path) -> None:
    """Every leaf takes the spines in reverse (spine-004's links first): neither blocks nor
    striped. The import keeps the default layout and names every leaf, not another design."""
    result = validate_mapping("prod", prod_with())
    assert isinstance(result, Valid)
    cables = expected_cables(result.spec, result.topology)
    leaves = sorted({cable.lower.device for cable in cables if cable.tier == "leaf-spine"})
    for leaf in leaves:
        uplinks = _leaf_uplinks(cables, leaf)
        for cable, other in zip(uplinks, reversed(uplinks), strict=True):
            cables[cables.index(cable)] = moved(cable, upper=other.upper)
    done, _ = imported(tmp_path, result, cables)
    assert done.exit_code == 1 and "uplink_layout" not in done.mapping["fabric"]
    assert {finding.rule for finding in done.cable_findings} <= {"CABLE-WRONG-PEER", "CABLE-SWAPPED"}
    named = {leaf for leaf in leaves for finding in done.cable_findings if f"leaf {leaf} port" in finding.message}
    assert named == set(leaves)


# --------------------------------------------------------------------------- what the data does not say


def test_a_pool_whose_names_give_no_gpu_is_left_for_the_user(tmp_path: Path) -> None:
    result = validate(str(VERIFY_DATA / "Pulumi.tiny.yaml"))
    assert isinstance(result, Valid)
    lldp, _ = write_reports(tmp_path, result)
    done = import_design(observe(lldp, None, None), Options(name="tiny"), "test")
    assert "gpu" not in done.mapping["node_pools"][0]
    assert any("--gpu gpu=GPU" in note for note in done.design.notes) and "GPU type unknown" in done.text
    (tmp_path / "imported.yaml").write_text(done.text)
    [finding] = [finding for finding in validate(str(tmp_path / "imported.yaml")).findings if finding.rule == "SCHEMA"]
    assert finding.path == "node_pools[0].gpu"
    given_gpu = import_design(observe(lldp, None, None), Options(name="tiny", gpus={"gpu": "H200"}), "test")
    assert given_gpu.mapping["node_pools"][0]["gpu"] == "H200"


def test_an_unreported_model_is_a_generic_switch_named_as_unknown(tmp_path: Path) -> None:
    result = validate("dev")
    assert isinstance(result, Valid)
    lldp, _ = write_reports(tmp_path, result)
    for path in lldp.iterdir():  # the switches no longer say what they are
        path.write_text(re.sub(r"Network OS 1.0 running on [^\"]*", "Network OS 1.0", path.read_text()))
    done = import_design(observe(lldp, None, None), Options(name="dev"), "test")
    leaf = done.mapping["fabric"]["leaf"]
    assert leaf.get("switch") == "SN5600"  # SONiC's names of an SN5600 at 400G fit no other model
    assert any("fabric.leaf: model not reported: SN5600" in note for note in done.design.notes)
    mapped = import_design(observe(lldp, None, None), Options(name="dev", models=(("*leaf*", "SN5600"),
                                                                                  ("spine-*", "SN5600"))), "test")
    assert not any("fabric.leaf" in note for note in mapped.design.notes)
    management = done.mapping["management"]["leaf"]  # plain swpN names: any box would name them so
    assert "switch" not in management and "UNKNOWN MODEL" in done.text


# --------------------------------------------------------------------------- a live lab's LLDP, recorded


def test_a_labs_recorded_lldp_imports_as_its_design(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """tests/data/import/lab-dev: `lab lldp dev` of a `lab up dev` (real lldpd in namespaces;
    veths report 10 Gb/s, hence --ignore-speeds)."""
    out = tmp_path / "dev.yaml"
    code = main(["import", "--lldp", str(ROOT / "tests/data/import/lab-dev"), "--name", "dev", "--ignore-speeds",
                 "--out", str(out)])
    report = capsys.readouterr().out
    assert code == 0, report
    assert "verify as designed" in report
    original, again = validate("dev"), validate(str(out))
    assert isinstance(original, Valid) and isinstance(again, Valid)
    assert_same_fabric(original.topology, again.topology, expected_cables(original.spec, original.topology),
                       expected_cables(again.spec, again.topology), networks={"fabric"})


# --------------------------------------------------------------------------- the CLI and bad input


def test_without_out_the_stack_file_goes_to_stdout(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["import", "--lldp", str(ROOT / "tests/data/import/lab-dev"), "--ignore-speeds"]) == 0
    captured = capsys.readouterr()
    assert captured.out.startswith("# imported: imported by `gpu-cluster import`") and "config:" in captured.out
    assert "import: stack file on stdout" in captured.err


def test_out_replaces_only_a_stack_file_an_import_wrote(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "Pulumi.dev.yaml"
    argv = ["import", "--lldp", str(ROOT / "tests/data/import/lab-dev"), "--ignore-speeds", "--out", str(out)]
    assert main(argv) == 0 and main(argv) == 0  # the second run replaces what the first wrote
    capsys.readouterr()
    mine = "config:\n  gpu-cluster:cluster: {name: dev, target: onprem}\n"
    out.write_text(mine)
    assert main(argv) == 2
    said = capsys.readouterr().err
    assert f"{out} is a file of {len(mine)} bytes that no import wrote" in said and "Traceback" not in said
    assert out.read_text() == mine


def test_json_report(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["import", "--lldp", str(ROOT / "tests/data/import/lab-dev"), "--ignore-speeds", "--format", "json",
                 "--out", str(tmp_path / "x.yaml")]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["ok"] and report["design"]["leaves"] == 8 and report["design"]["tiers"] == 2
    assert report["findings"] == []


def _bad_lldp(tmp_path: Path) -> Path:
    folder = tmp_path / "lldp"
    folder.mkdir()
    (folder / "leaf-001-r0.json").write_text("{not json")
    (folder / "spine-001.json").write_bytes(b"\xff\xfe")
    return folder


@pytest.mark.parametrize(("argv", "expected"), [
    (["import"], "give --lldp DIR and/or --ib FILE"),
    (["import", "--lldp", "{tmp}/missing"], "{tmp}/missing"),
    (["import", "--lldp", "{tmp}/file.txt"], "not a directory"),
    (["import", "--lldp", "{bad}"], "leaf-001-r0.json"),
    (["import", "--lldp", "{bad}"], "spine-001.json"),
    (["import", "--lldp", "{empty}"], "no neighbor files"),
    (["import", "--ib", "{tmp}/file.txt"], "ibnetdiscover"),
    (["import", "--lldp", "{lab}", "--ib-map", "{tmp}/file.txt"], "give --ib FILE too"),
    (["import", "--lldp", "{lab}", "--name", "Not A Label"], "not a DNS label"),
    (["import", "--lldp", "{lab}", "--gpu", "h200"], "KEY=VALUE"),
    (["import", "--lldp", "{lab}", "--gpu", "h200=H9000"], "unknown 'H9000'"),
    (["import", "--lldp", "{lab}", "--model", "leaf-*=SN9999"], "unknown 'SN9999'"),
    (["import", "--lldp", "{hosts}"], "no GPU fabric leaf"),
])
def test_bad_input_exits_2_naming_the_file_and_the_fix(argv: list[str], expected: str, tmp_path: Path,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "file.txt").write_text("not a discovery\n")
    (tmp_path / "empty").mkdir()
    hosts = tmp_path / "hosts"
    hosts.mkdir()
    lab = ROOT / "tests/data/import/lab-dev"
    (hosts / "h200-node-001.json").write_text((lab / "h200-node-001.json").read_text().replace("leaf-", "tor-"))
    places = {"tmp": str(tmp_path), "bad": str(_bad_lldp(tmp_path)) if "{bad}" in argv else "",
              "empty": str(tmp_path / "empty"), "lab": str(lab), "hosts": str(hosts)}
    code = main([arg.format(**places) for arg in argv])
    captured = capsys.readouterr()
    assert code == 2
    assert expected.format(**places) in captured.err + captured.out
    assert "Traceback" not in captured.err + captured.out
