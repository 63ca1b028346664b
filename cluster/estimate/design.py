"""Estimates on a validated design: pick the pool, place the nodes, apply the model."""

from __future__ import annotations

from typing import Any

from cluster.estimate.constants import Calibration, load_calibration
from cluster.estimate.model import COLLECTIVES, Estimate, Hardware, estimate, hardware
from cluster.estimate.placement import PLACEMENTS, Kind, fabric_share, place, ring_flows
from cluster.spec import ClusterSpec, PoolSpec
from cluster.topology import Topology


def pick_pool(spec: ClusterSpec, name: str | None) -> PoolSpec:
    """The named pool, or the largest (by GPUs; first on a tie). ValueError names the choices."""
    if name is None:
        return max(spec.pools, key=lambda pool: (pool.gpus, -pool.index))
    for pool in spec.pools:
        if pool.name == name:
            return pool
    names = ", ".join(pool.name for pool in spec.pools)
    raise ValueError(f"no pool named {name!r}: node_pools has {names}")


def collective_on(spec: ClusterSpec, topology: Topology, collective: str, nodes: int, size_bytes: int,
                  pool: PoolSpec | None = None, placement: Kind = "packed", algorithm: str | None = None,
                  gpus_per_node: int | None = None, calibration: Calibration | None = None) -> Estimate:
    """One collective on `nodes` nodes of `pool`, placed `packed` or `worst` on the graph."""
    if collective not in COLLECTIVES:
        raise ValueError(f"unknown collective {collective!r}: use one of {', '.join(COLLECTIVES)}")
    calibration = calibration or load_calibration()
    pool = pool or pick_pool(spec, None)
    hw = hardware(spec, topology, pool, calibration)
    where = place(topology, pool.name, nodes, placement)
    share = fabric_share(topology, where, ring_flows(nodes), all_to_all=collective == "all_to_all")
    return estimate(hw, collective, nodes, size_bytes, share, gpus_per_node=gpus_per_node, algorithm=algorithm,
                    placement=placement, calibration=calibration)


def estimate_table(spec: ClusterSpec, topology: Topology, pool: str | None = None,
                   sizes: tuple[int, ...] = (2**20, 2**24, 2**28, 2**30, 2**33)) -> list[dict[str, Any]]:
    """Rows for reports: every collective on the whole pool, packed and worst placement, over
    `sizes` (1 MiB .. 8 GiB by default). Each row is Estimate.to_dict() plus `pool`."""
    chosen = pick_pool(spec, pool)
    calibration = load_calibration()
    rows: list[dict[str, Any]] = []
    for collective in COLLECTIVES:
        for kind in PLACEMENTS:
            for size in sizes:
                result = collective_on(spec, topology, collective, chosen.nodes, size, chosen, kind,
                                       calibration=calibration)
                rows.append({"pool": chosen.name, **result.to_dict()})
    return rows


__all__ = ["Hardware", "collective_on", "estimate_table", "pick_pool"]
