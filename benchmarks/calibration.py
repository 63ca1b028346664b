"""Predicted vs measured busbw for every calibration row of COLLECTIVES.md.

    python benchmarks/calibration.py          # the table and the error summary
    python benchmarks/calibration.py --fit    # re-derive the FIT constants from the fit rows

Rows marked `fit` set the constants in cluster/estimate/calibration.yaml; rows marked
`holdout` never touch them and show how the model generalises. "Large" is 1 GiB and up.
The last table gives the errors per transport (the fabric kind between nodes; nvlink for
rows on one node), with each kind's efficiency and the fit row it is solved from.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from cluster.estimate.constants import load_calibration
from cluster.estimate.fit import Point, fit, predict_all, transport_rows
from cluster.estimate.units import format_size


def summary(points: list[Point]) -> dict[str, tuple[int, float, float]]:
    """(count, mean |error|, worst |error|) per group of points."""
    groups = {
        "holdout, large": [p for p in points if p.use == "holdout" and p.large],
        "holdout, all sizes": [p for p in points if p.use == "holdout"],
        "fit, large": [p for p in points if p.use == "fit" and p.large],
        "fit, all sizes": [p for p in points if p.use == "fit"],
    }
    return {name: (len(group), sum(abs(p.error) for p in group) / len(group), max(abs(p.error) for p in group))
            for name, group in groups.items() if group}


def _stats(points: list[Point]) -> str:
    if not points:
        return f"{'-':>20}"
    errors = [abs(p.error) for p in points]
    return f"{len(errors):2d} pts {sum(errors) / len(errors):5.1%} {max(errors):6.1%}"


def by_transport(points: list[Point]) -> dict[str, dict[str, list[Point]]]:
    """Points per transport, split into held out (large, every size) and fit (large)."""
    table: dict[str, dict[str, list[Point]]] = {}
    for transport in sorted({p.transport for p in points}):
        mine = [p for p in points if p.transport == transport]
        table[transport] = {
            "holdout, large": [p for p in mine if p.use == "holdout" and p.large],
            "holdout, all sizes": [p for p in mine if p.use == "holdout"],
            "fit, large": [p for p in mine if p.use == "fit" and p.large],
        }
    return table


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--fit", action="store_true", help="re-derive the fitted constants and compare")
    args = parser.parse_args()
    current = load_calibration()
    if args.fit:
        fitted = fit(current)
        print(f"nvlink: {fitted.nvlink.model_dump(exclude={'nvls_gpus'})}")
        for kind, entry in fitted.network_efficiency.items():
            print(f"network_efficiency.{kind}: {entry.value}  (file: {current.network(kind).value})")
        for regime, curve in fitted.size_efficiency.items():
            print(f"size_efficiency.{regime}: half_bytes {curve.half_bytes:.5g}, exponent {curve.exponent}")
        print("calibration.yaml is up to date" if fitted == current else "calibration.yaml DIFFERS from the fit")
        return 0 if fitted == current else 1
    points = predict_all(current)
    print(f"{'row':28} {'use':8} {'collective':15} {'shape':6} {'size':>7} {'measured':>9} {'predicted':>9} {'error':>7}")
    for p in points:
        print(f"{p.row:28} {p.use:8} {p.collective:15} {p.shape:6} {format_size(p.size_bytes):>7} "
              f"{p.measured:9.1f} {p.predicted:9.1f} {p.error:+7.1%}")
    print()
    for name, (count, mean, worst) in summary(points).items():
        print(f"{name:20} {count:3d} points: mean |error| {mean:5.1%}, worst {worst:5.1%}")
    print()
    rows = transport_rows(current)
    print(f"{'transport':16} {'efficiency':>10} {'fit row':28} {'held out >= 1GiB':>20} {'held out, all sizes':>20} "
          f"{'fit >= 1GiB':>20}")
    print(f"{'':16} {'':>10} {'':28} {'n / mean / worst':>20} {'n / mean / worst':>20} {'n / mean / worst':>20}")
    for transport, groups in by_transport(points).items():
        efficiency = f"{current.network(transport).value:.4f}" if transport in rows else "-"
        row = rows[transport].id if transport in rows else "-"
        print(f"{transport:16} {efficiency:>10} {row:28} {_stats(groups['holdout, large']):>20} "
              f"{_stats(groups['holdout, all sizes']):>20} {_stats(groups['fit, large']):>20}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
