"""Predicted vs measured busbw for every calibration row of COLLECTIVES.md.

    python benchmarks/calibration.py          # the table and the error summary
    python benchmarks/calibration.py --fit    # re-derive the FIT constants from the fit rows

Rows marked `fit` set the constants in cluster/estimate/calibration.yaml; rows marked
`holdout` never touch them and show how the model generalises. "Large" is 1 GiB and up.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from cluster.estimate.constants import load_calibration
from cluster.estimate.fit import Point, fit, predict_all
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
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
