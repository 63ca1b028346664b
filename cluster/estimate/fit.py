"""Predict every calibration row, and re-derive the fitted constants from the `fit` rows only.

Rows are built into real designs (validate_mapping -> graph) so the calibration exercises the
same path as a user's stack. Used by benchmarks/calibration.py and the tests.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from cluster.estimate.constants import Calibration, Measurement, SizeCurve, load_calibration
from cluster.estimate.design import collective_on
from cluster.estimate.model import estimate, hardware
from cluster.estimate.placement import fabric_share, place, ring_flows
from cluster.estimate.units import parse_size
from cluster.pipeline import Valid, validate_mapping

LARGE_BYTES = 2**30  # "large message": 1 GiB and up
INTER_NODE_ROW = "p5-allreduce-4x8"  # the row the inter-node size curve is fitted on
CLOUD = {
    "aws": {"region": "us-east-1", "zone": "us-east-1a"},
    # Calibration designs are only validated, never deployed; Azure validation needs an admin key
    # (cluster/sshkeys.py), so they carry the example stacks' placeholder, whose bytes say so.
    "azure": {"region": "eastus", "ssh_public_key": "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIGdwdS1jbHVzdGVyIGV4YW1wbGUga2V5"
                                                    "LCByZXBsYWNl example-only-replace-with-your-key"},
    "gcp": {"region": "us-central1", "zone": "us-central1-a"},
}


@dataclass(frozen=True)
class Point:
    """One measured busbw and the model's prediction for it."""

    row: str
    use: str
    system: str
    transport: str  # the fabric kind between nodes; "nvlink" for a row on one node
    collective: str
    shape: str  # "4x8"
    size_bytes: int
    measured: float
    predicted: float

    @property
    def error(self) -> float:
        """Signed relative error of the prediction."""
        return (self.predicted - self.measured) / self.measured

    @property
    def large(self) -> bool:
        return self.size_bytes >= LARGE_BYTES


def design_of(row: Measurement) -> Valid:
    """The row's stack as a validated design with enough nodes for the row."""
    stack = dict(row.stack)
    target = stack.pop("target")
    pool: dict[str, Any] = {"name": "cal", "nodes": max(row.nodes, 2)}
    if "instance_type" in stack:
        pool["instance_type"] = stack.pop("instance_type")
    if "gpu" in stack:
        pool["gpu"] = stack.pop("gpu")
    mapping: dict[str, Any] = {"name": "cal", "target": target, "node_pools": [pool], **stack}
    if target in CLOUD:
        mapping["cloud"] = CLOUD[target]
    result = validate_mapping(row.id, mapping)
    if not isinstance(result, Valid):
        raise ValueError(f"calibration row {row.id}: stack does not build: {[f.message for f in result.findings]}")
    return result


def _cases(row: Measurement) -> list[tuple[int | None, int, float]]:
    """(GPUs per node or None, size, measured busbw) for every measurement of a row."""
    if row.by_gpus:
        assert row.size is not None
        return [(gpus, parse_size(row.size), value) for gpus, value in sorted(row.by_gpus.items())]
    per_node = row.gpus_per_node or (None,)
    return [(gpus, parse_size(size), value) for gpus in per_node for size, value in row.points.items()]


def predict_row(row: Measurement, calibration: Calibration) -> list[Point]:
    """The model's busbw for every measurement of `row`."""
    design = design_of(row)
    pool = design.spec.pools[0]
    transport = pool.fabric_kind if row.nodes > 1 or row.collective == "nic" else "nvlink"
    points = []
    for gpus, size, measured in _cases(row):
        if row.collective == "nic":
            hw = hardware(design.spec, design.topology, pool, calibration)
            predicted = hw.network_efficiency * hw.node_nic_gbytes / hw.nics_per_node
            shape = "1 NIC"
        else:
            result = collective_on(design.spec, design.topology, row.collective, row.nodes, size, pool,
                                   algorithm=row.algorithm, gpus_per_node=gpus, calibration=calibration)
            predicted = result.busbw_GBps
            shape = f"{row.nodes}x{gpus or pool.gpus_per_node}"
        points.append(Point(row.id, row.use, row.system, transport, row.collective, shape, size, measured,
                            predicted))
    return points


def predict_all(calibration: Calibration | None = None) -> list[Point]:
    """Every calibration row, fit and holdout, predicted with the given calibration."""
    calibration = calibration or load_calibration()
    return [point for row in calibration.measurements for point in predict_row(row, calibration)]


def _solve(predict: Callable[[float], float], target: float, low: float, high: float) -> float:
    """The parameter in [low, high] where the increasing function predict hits target."""
    for _ in range(60):
        middle = (low + high) / 2
        if predict(middle) < target:
            low = middle
        else:
            high = middle
    return (low + high) / 2


def _update(calibration: Calibration, section: str, key: str, field: str | None, value: Any) -> Calibration:
    data = calibration.model_dump()
    if field is None:
        data[section][key] = value
    else:
        data[section][key][field] = value
    return Calibration.model_validate(data)


def _rows(calibration: Calibration, use: str = "fit") -> dict[str, Measurement]:
    return {row.id: row for row in calibration.measurements if row.use == use}


def _largest(row: Measurement) -> tuple[int | None, int, float]:
    return max(_cases(row), key=lambda case: case[1])


def _busbw(row: Measurement, calibration: Calibration, gpus: int | None, size: int,
           efficiency: float | None = None) -> float:
    design = design_of(row)
    pool = design.spec.pools[0]
    hw = hardware(design.spec, design.topology, pool, calibration)
    share = fabric_share(design.topology, place(design.topology, pool.name, row.nodes), ring_flows(row.nodes),
                         all_to_all=row.collective == "all_to_all")
    return estimate(hw, row.collective, row.nodes, size, share, gpus_per_node=gpus, algorithm=row.algorithm,
                    calibration=calibration, efficiency=efficiency).busbw_GBps


def _peak_fit(calibration: Calibration) -> Calibration:
    rows = _rows(calibration)
    ring = rows["h100-ring-1x2-8"]
    solved = [_solve_constant(calibration, ring, case, ("nvlink", "ring_efficiency", None), 1.0)
              for case in _cases(ring)]
    calibration = _update(calibration, "nvlink", "ring_efficiency", None, round(sum(solved) / len(solved), 4))
    nvls = rows["azure-ndh100-nvls-1x8"]
    value = _solve_constant(calibration, nvls, _largest(nvls), ("nvlink", "nvls_efficiency", None), 1.0)
    calibration = _update(calibration, "nvlink", "nvls_efficiency", None, round(value, 4))
    # The inter-node size curve is fitted on this row, so its fabric kind is solved first, on
    # its largest message taken as the plateau (size efficiency 1).
    kind = _fabric_kind(rows[INTER_NODE_ROW])
    return _network_fit(calibration, rows[INTER_NODE_ROW], kind, 1.0)


def _fabric_kind(row: Measurement) -> str:
    design = design_of(row)
    return design.spec.pools[0].fabric_kind


def transport_rows(calibration: Calibration) -> dict[str, Measurement]:
    """The fit row each fabric kind's efficiency is solved from (`fit_row` in calibration.yaml).
    A kind whose row is missing, held out, or measured on another fabric kind is an error: no
    transport is ever given another transport's number."""
    rows = {row.id: row for row in calibration.measurements}
    chosen = {}
    for kind, entry in calibration.network_efficiency.items():
        row = rows.get(entry.fit_row)
        if row is None or row.use != "fit":
            raise ValueError(f"network_efficiency.{kind}: fit_row {entry.fit_row!r} is not a `use: fit` row")
        if _fabric_kind(row) != kind:
            raise ValueError(f"network_efficiency.{kind}: fit_row {row.id} runs on {_fabric_kind(row)}, not {kind}")
        chosen[kind] = row
    return chosen


def _network_fit(calibration: Calibration, row: Measurement, kind: str, efficiency: float | None) -> Calibration:
    """Solve the row's largest message for the fabric kind's efficiency (efficiency None: with
    the fitted size curve applied)."""
    value = _solve_constant(calibration, row, _largest(row), ("network_efficiency", kind, "value"), efficiency)
    return _update(calibration, "network_efficiency", kind, "value", round(value, 4))


def _solve_constant(calibration: Calibration, row: Measurement, case: tuple[int | None, int, float],
                    where: tuple[str, str, str | None], efficiency: float | None) -> float:
    """The value of one constant that makes the model meet one measurement."""
    gpus, size, measured = case

    def predict(value: float) -> float:
        return _busbw(row, _update(calibration, *where, value), gpus, size, efficiency)

    return _solve(predict, measured, 0.01, 1.0)


def _transport_fit(calibration: Calibration) -> Calibration:
    """Every other fabric kind from its own fit row: a single-NIC row as measured / NIC line rate;
    a collective row on its largest message with the inter-node size curve applied (fitted on
    the AWS row, independent of these), through the same algorithm the row ran."""
    for kind, row in transport_rows(calibration).items():
        if row.id == INTER_NODE_ROW:
            continue
        if row.collective == "nic":
            design = design_of(row)
            hw = hardware(design.spec, design.topology, design.spec.pools[0], calibration)
            per_nic = hw.node_nic_gbytes / hw.nics_per_node
            calibration = _update(calibration, "network_efficiency", kind, "value",
                                  round(_largest(row)[2] / per_nic, 4))
        else:
            calibration = _network_fit(calibration, row, kind, None)
    return calibration


def _curve(points: list[tuple[int, float]], exponent: float | None = None) -> tuple[float, float]:
    """Least squares of log(1/e - 1) = p log(half) - p log(S); returns (half_bytes, exponent)."""
    usable = [(math.log(size), math.log(1 / eff - 1)) for size, eff in points if eff < 0.995]
    if exponent is None and len(usable) >= 2:
        mean_x = sum(x for x, _ in usable) / len(usable)
        mean_y = sum(y for _, y in usable) / len(usable)
        slope = sum((x - mean_x) * (y - mean_y) for x, y in usable) / sum((x - mean_x) ** 2 for x, _ in usable)
        exponent = -slope
        intercept = mean_y - slope * mean_x
    else:
        exponent = exponent or 1.0
        intercept = sum(y + exponent * x for x, y in usable) / len(usable)
    return math.exp(intercept / exponent), exponent


def _solve_efficiency(calibration: Calibration, row: Measurement, gpus: int | None, size: int, measured: float) -> float:
    """The size efficiency that makes the model meet one measurement."""

    def predict(value: float) -> float:
        return _busbw(row, calibration, gpus, size, efficiency=value)

    return _solve(predict, measured, 1e-4, 1.0)


def _size_fit(calibration: Calibration) -> Calibration:
    rows = _rows(calibration)
    for regime, row_id, fixed in (("intra_node", "azure-ndh100-nvls-1x8", None),
                                  ("inter_node", INTER_NODE_ROW, None),
                                  ("all_to_all", "p5-alltoall-4x8-small", 1.0)):
        row = rows[row_id]
        solved = []
        for gpus, size, measured in _cases(row):
            top = _busbw(row, calibration, gpus, size, efficiency=1.0)
            if measured >= top:
                continue
            solved.append((size, _solve_efficiency(calibration, row, gpus, size, measured)))
        half, exponent = _curve(solved, fixed)
        curve = calibration.size_efficiency[regime]
        updated = SizeCurve(half_bytes=float(f"{half:.5g}"), exponent=round(exponent, 4), source=curve.source)
        calibration = _update(calibration, "size_efficiency", regime, None, updated.model_dump())
    return calibration


def fit(calibration: Calibration | None = None) -> Calibration:
    """Re-derive every FIT constant from the `fit` rows. Peaks first, from each fit row's
    largest message taken as the plateau (size efficiency 1, NCCL latency included); then the
    size curves, solving each smaller message for its efficiency relative to that peak; then
    every other fabric kind from its own fit row. Separate steps, so the result does not
    depend on the constants it starts from."""
    return _transport_fit(_size_fit(_peak_fit(calibration or load_calibration())))
