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


# DGX SuperPOD B200 (FACTS.md 3.3; NVIDIA DGX SuperPOD B200 RA, DGX SuperPOD Architecture, the table of
# larger configurations: https://docs.nvidia.com/dgx-superpod/reference-architecture-scalable-infrastructure-b200/
# latest/dgx-superpod-architecture.html): SU -> nodes, leaves, spines, cores. 32 QM9700 (64 x 400G) a leaf.
SUPERPOD_B200 = [(2, 64, 16, 8, 0), (4, 128, 32, 16, 0), (8, 256, 64, 32, 0), (16, 512, 128, 128, 64),
                 (32, 1024, 256, 256, 128), (64, 2048, 512, 512, 256)]


@pytest.mark.parametrize(("units", "nodes", "leaves", "spines", "cores"), SUPERPOD_B200)
def test_dgx_superpod_b200_auto_sized(units: int, nodes: int, leaves: int, spines: int, cores: int) -> None:
    result = run(stack(node_pools=[{"name": "dgx", "nodes": nodes, "gpu": "B200"}],
                       fabric={"transport": "infiniband", "leaf": {"switch": "QM9700"}}))
    assert result.exit_code == 0, [(f.rule, f.message) for f in result.findings]
    expected = {"leaf": leaves, "spine": spines, **({"core": cores} if cores else {})}
    assert fabric_counts(result) == expected
    assert cables(result, "host") == nodes * 8  # cables per tier equal the GPU count: 1:1
    assert cables(result, "switch") == nodes * 8 * (2 if cores else 1)


# DGX SuperPOD B300, Quantum-X800 InfiniBand RA, DGX SuperPOD Architecture, Table 3 (compute fabric per SU
# count): https://docs.nvidia.com/dgx-superpod/reference-architecture/scalable-infrastructure-b300-xdr/latest/
# dgx-superpod-architecture.html. SU = 72 nodes; node-leaf and leaf-spine cables each equal the GPU count,
# so one 800G XDR port per GPU and 1:1 (144-port Q3400 leaves: 72 down, 72 up). The 18 and 36 spines of 4
# and 8 SU are the fewest that divide a leaf's 72 uplinks evenly (16 and 32 would take every uplink).
SUPERPOD_B300_XDR = [(1, 72, 8, 4), (2, 144, 16, 8), (4, 288, 32, 18), (8, 576, 64, 36), (18, 1296, 144, 72)]


@pytest.mark.parametrize(("units", "nodes", "leaves", "spines"), SUPERPOD_B300_XDR)
def test_dgx_superpod_b300_xdr_auto_sized(units: int, nodes: int, leaves: int, spines: int) -> None:
    result = run(stack(node_pools=[{"name": "dgx", "nodes": nodes, "gpu": "B300", "fabric_nics": {"count": 8, "gbps": 800}}],
                       fabric={"transport": "infiniband", "leaf": {"switch": "Q3400", "port_gbps": 800}}))
    assert result.exit_code == 0, [(f.rule, f.message) for f in result.findings]
    assert fabric_counts(result) == {"leaf": leaves, "spine": spines}
    assert cables(result, "host") == cables(result, "switch") == nodes * 8


# DGX SuperPOD B300, Spectrum-4 Ethernet RA, DGX SuperPOD Architecture, Table 3 "Larger DGX SuperPOD
# component counts": https://docs.nvidia.com/dgx-superpod/reference-architecture/scalable-infrastructure-b300/
# latest/dgx-superpod-architecture.html. SU = 64 nodes; twin planes, 2 x 400GbE per GPU (network-fabrics page
# of the same RA), so two leaves per rail and SU on SN5600 at 400G (128 ports). Both planes counted. NVIDIA's
# cable columns count one cable per GPU for both planes' links, so links are not compared.
SUPERPOD_B300_SPECTRUM = [(1, 64, 16, 8), (2, 128, 32, 16), (4, 256, 64, 32), (8, 512, 128, 64), (16, 1024, 256, 128)]


@pytest.mark.parametrize(("units", "nodes", "leaves", "spines"), SUPERPOD_B300_SPECTRUM)
def test_dgx_superpod_b300_spectrum_auto_sized(units: int, nodes: int, leaves: int, spines: int) -> None:
    result = run(stack(node_pools=[{"name": "dgx", "nodes": nodes, "gpu": "B300",
                                    "fabric_nics": {"count": 8, "gbps": 400, "ports_per_nic": 2}}],
                       fabric={"transport": "roce", "planes": 2, "leaf": {"switch": "SN5600", "port_gbps": 400}}))
    assert result.exit_code == 0, [(f.rule, f.message) for f in result.findings]
    assert fabric_counts(result) == {"leaf": leaves, "spine": spines}
    assert cables(result, "host") == cables(result, "switch") == nodes * 16  # links: 2 x 400G per GPU
