"""Published reference clusters, auto-sized from nothing but node counts and switch models."""

from __future__ import annotations

import pytest

from tests.conftest import run, stack


def fabric_counts(result) -> dict[str, int]:  # type: ignore[no-untyped-def]
    counts: dict[str, int] = {}
    for _, data in result.topology.switches("fabric"):
        counts[data["tier"]] = counts.get(data["tier"], 0) + 1
    return counts


def cables(result, lower_kind: str) -> int:  # type: ignore[no-untyped-def]
    graph = result.topology.graph
    return sum(data["links"] for _, _, data in graph.edges(data=True)
               if data["network"] == "fabric" and graph.nodes[data["lower"]]["kind"] == lower_kind)


# DGX SuperPOD H100, FACTS.md 3.3 Table 4: scalable units -> nodes, leaves, spines, spine-leaf cables.
SUPERPOD_H100 = [(1, 31, 8, 4, 256), (2, 63, 16, 8, 512), (3, 95, 24, 16, 768), (4, 127, 32, 16, 1024)]


@pytest.mark.parametrize(("units", "nodes", "leaves", "spines", "uplinks"), SUPERPOD_H100)
def test_dgx_superpod_h100_auto_sized(units: int, nodes: int, leaves: int, spines: int, uplinks: int) -> None:
    result = run(stack(node_pools=[{"name": "dgx", "nodes": nodes, "gpu": "H100", "server": "dgx-h100"}],
                       fabric={"transport": "infiniband", "leaf": {"switch": "QM9700"}}))
    assert result.exit_code == 0, [(f.rule, f.message) for f in result.findings]
    assert fabric_counts(result) == {"leaf": leaves, "spine": spines}
    assert cables(result, "host") == nodes * 8
    assert cables(result, "switch") == uplinks


# DGX SuperPOD B200 (FACTS.md 3.3): SU -> nodes, leaves, spines, cores.
SUPERPOD_B200 = [(2, 64, 16, 8, 0), (4, 128, 32, 16, 0), (8, 256, 64, 32, 0), (16, 512, 128, 128, 64),
                 (32, 1024, 256, 256, 128)]


@pytest.mark.parametrize(("units", "nodes", "leaves", "spines", "cores"), SUPERPOD_B200)
def test_dgx_superpod_b200_auto_sized(units: int, nodes: int, leaves: int, spines: int, cores: int) -> None:
    result = run(stack(node_pools=[{"name": "dgx", "nodes": nodes, "gpu": "B200"}],
                       fabric={"transport": "infiniband", "leaf": {"switch": "QM9700"}}))
    assert result.exit_code == 0, [(f.rule, f.message) for f in result.findings]
    expected = {"leaf": leaves, "spine": spines, **({"core": cores} if cores else {})}
    assert fabric_counts(result) == expected
    assert cables(result, "host") == nodes * 8  # cables per tier equal the GPU count: 1:1
    assert cables(result, "switch") == nodes * 8 * (2 if cores else 1)
