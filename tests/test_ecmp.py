"""BGP ECMP width and route limits from the design: the rendered `maximum-paths` on every switch is at
least its uplink count (counted here from the cabling graph, independently of cluster.ecmp), a
design that needs more paths than an OS installs is a FAB-ECMP error naming the key, and EOS
neighbors carry a route limit above the design's route count."""

from __future__ import annotations

import copy
import json
import re
from pathlib import Path
from typing import Any

import pytest
import yaml

from cluster.configs import render_configs
from cluster.dialects import platform
from cluster.dialects.eos.render import DEFAULT_MAXIMUM_ROUTES as EOS_DEFAULT_MAXIMUM_ROUTES
from cluster.pipeline import Valid, validate, validate_mapping
from cluster.topology import Topology
from tests.conftest import ROOT

PROD = yaml.safe_load((ROOT / "stacks" / "Pulumi.prod.yaml").read_text())["config"]["gpu-cluster:cluster"]
PATHS = {
    "frr.conf": re.compile(r"^  maximum-paths (\d+)$", re.M),
    "nvue.sh": re.compile(r"^nv set vrf default router bgp address-family ipv4-unicast multipaths ebgp (\d+)$", re.M),
    "eos.cfg": re.compile(r"^   maximum-paths (\d+) ecmp (\d+)$", re.M),
}


def wide_leaves(os: str = "sonic", uplinks: int = 128) -> dict[str, Any]:
    """128 nodes x 8 rails on 256-port leaves (an SN5600, or for EOS a 7060X6, at 256 x 200G, a
    model with a SONiC SKU at that speed): each rail leaf has 128 hosts and `uplinks` uplinks."""
    big = {"switch": "7060X6" if os == "eos" else "SN5600", "port_gbps": 200, "os": os}
    return {"name": "wide", "target": "onprem",
            "node_pools": [{"name": "h200", "nodes": 128, "gpu": "H200", "fabric_nics": {"count": 8, "gbps": 200}}],
            "fabric": {"leaf": dict(big), "spine": dict(big), "leaf_uplinks": uplinks}}


def uplinks_by_switch(topology: Topology) -> dict[str, int]:
    """Links from each switch to a switch of its own network above it, read off the cabling graph."""
    graph = topology.graph
    counts: dict[str, int] = {}
    for lower, upper, data in graph.edges(data=True):
        if data["lower"] != lower:
            lower, upper = upper, lower
        low, high = graph.nodes[lower], graph.nodes[upper]
        if low["kind"] == "switch" and high["kind"] == "switch" and data["network"] == low["network"]:
            counts[lower] = counts.get(lower, 0) + data["links"]
    return counts


def rendered_paths(files: dict[str, str]) -> dict[str, int]:
    paths = {}
    for path, text in files.items():
        parts = Path(path).parts
        if parts[0] == "switches" and parts[2] in PATHS:
            found = PATHS[parts[2]].findall(text)
            if found:
                assert len(found) == 1, path
                values = found[0] if isinstance(found[0], tuple) else (found[0],)
                assert len(set(values)) == 1, path  # EOS: maximum-paths N ecmp N
                paths[parts[1]] = int(values[0])
    return paths


def _designs() -> list[str]:
    return [path.stem.removeprefix("Pulumi.") for path in sorted((ROOT / "stacks").glob("Pulumi.*.yaml"))]


def check_widths(result: Any) -> int:
    files = render_configs(result.spec, result.topology)
    inventory = json.loads(files["inventory.json"])["switches"]
    paths = rendered_paths(files)
    routed = {name for name, entry in inventory.items() if entry["asn"] is not None}
    assert set(paths) == routed
    for name, uplinks in uplinks_by_switch(result.topology).items():
        if name in routed:
            assert paths[name] >= uplinks, (name, paths[name], uplinks)
    return len(paths)


@pytest.mark.parametrize("name", _designs())
def test_every_switch_of_every_example_installs_all_its_uplinks(name: str) -> None:
    result = validate(name)
    if not result.ok or not isinstance(result, Valid) or result.spec.is_cloud:
        pytest.skip(f"{name}: nothing rendered (cloud, or fails validation on purpose)")
    check_widths(result)


@pytest.mark.parametrize("os", ["sonic", "eos"])
def test_leaves_with_128_uplinks_install_128_paths(os: str) -> None:
    result = validate_mapping("wide", wide_leaves(os))
    assert result.ok, [(f.rule, f.message) for f in result.findings]
    assert isinstance(result, Valid)
    assert max(uplinks_by_switch(result.topology).values()) == 128
    assert check_widths(result) > 8
    paths = rendered_paths(render_configs(result.spec, result.topology))
    assert paths["leaf-001-r0"] == 128


def test_dual_plane_leaves_install_their_planes_uplinks() -> None:
    """Two planes: each leaf reaches only its plane's spines, over all its uplinks."""
    data = {"name": "dp", "target": "onprem",
            "node_pools": [{"name": "h200", "nodes": 64, "gpu": "H200",
                            "fabric_nics": {"count": 8, "gbps": 200, "ports_per_nic": 2}}],
            "fabric": {"planes": 2, "leaf": {"ports": 64, "port_gbps": 200, "os": "nvue"},
                       "spine": {"ports": 64, "port_gbps": 200, "os": "eos"}}}
    result = validate_mapping("dp", data)
    assert result.ok and isinstance(result, Valid)
    assert check_widths(result) > 16
    paths = rendered_paths(render_configs(result.spec, result.topology))
    assert paths["p0-leaf-001-r0"] == paths["p1-leaf-001-r0"] == uplinks_by_switch(result.topology)["p1-leaf-001-r0"] == 32


def test_more_paths_than_nvue_installs_is_an_error_naming_the_key() -> None:
    """160 uplinks on Cumulus (at most 128 BGP paths): an error at fabric.leaf_uplinks; suppressed, the
    configs carry NVUE's limit (a demanding user gets the stop, and the cap only on request)."""
    data = wide_leaves("nvue", uplinks=160)
    box = {"ports": 320, "port_gbps": 200, "os": "nvue"}  # a generic box: 128 hosts and 160 uplinks fit
    data["fabric"]["leaf"], data["fabric"]["spine"] = dict(box), dict(box)
    result = validate_mapping("wide", data)
    found = [f for f in result.findings if f.rule == "FAB-ECMP"]
    assert [(f.path, str(f.severity)) for f in found] == [("fabric.leaf_uplinks", "error")]
    assert "160 uplinks" in found[0].message and "at most 128" in found[0].message
    assert not result.ok
    data["policy"] = {"suppress": ["FAB-ECMP"]}
    result = validate_mapping("wide", data)
    assert result.ok and isinstance(result, Valid)
    paths = rendered_paths(render_configs(result.spec, result.topology))
    assert paths["leaf-001-r0"] == platform("nvue").max_paths == 128


def test_spines_get_the_parallel_links_towards_one_leaf() -> None:
    """prod: 8 leaves x 64 uplinks over 4 spines is 16 links from each spine to each leaf."""
    result = validate("prod")
    assert isinstance(result, Valid)
    paths = rendered_paths(render_configs(result.spec, result.topology))
    assert paths["spine-001"] == 16 and paths["leaf-001-r0"] == 64


def test_eos_neighbors_carry_a_route_limit_above_the_design() -> None:
    data = copy.deepcopy(PROD)
    data["fabric"]["leaf"]["os"] = data["fabric"]["spine"]["os"] = "eos"
    data["fabric"]["leaf"]["switch"] = data["fabric"]["spine"]["switch"] = "7060X6"  # SN5600 runs no EOS
    data["node_pools"][0]["nodes"] = 2048  # 16,384 host /31s: above EOS's default of 12,000 routes
    data["fabric"].pop("leaves", None)
    data["fabric"].pop("spines", None)
    data["fabric"].pop("leaf_uplinks", None)
    result = validate_mapping("big", data)
    assert isinstance(result, Valid), result.findings
    files = render_configs(result.spec, result.topology)
    config = files["switches/leaf-001-r0/eos.cfg"]
    neighbors = re.findall(r"^   neighbor (\S+) remote-as", config, re.M)
    limits = dict(re.findall(r"^   neighbor (\S+) maximum-routes (\d+)$", config, re.M))
    assert neighbors and set(limits) == set(neighbors)
    host_routes = sum(1 for _ in re.finditer(r"^   network 10\.1", "".join(
        text for path, text in files.items() if path.endswith("eos.cfg")), re.M))
    assert host_routes >= 16_384
    assert {int(limit) for limit in limits.values()} == {int(limits[neighbors[0]])}
    assert int(limits[neighbors[0]]) > max(host_routes, EOS_DEFAULT_MAXIMUM_ROUTES)
