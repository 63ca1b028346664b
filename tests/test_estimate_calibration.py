"""Calibration: constants come from the fit rows only, and the errors stay within the stated bounds.

Bounds stated in docs/guides/estimate.md (measured with benchmarks/calibration.py; the issue's acceptance is
15 % mean / 25 % worst on large messages the calibration never saw):
- holdout, large messages (>= 1 GiB): mean |error| <= 5 %, worst <= 10 %
- holdout, every size: mean <= 8 %, worst <= 40 % (small messages are latency-bound and noisy)
- fit rows, large messages: mean <= 3 %, worst <= 10 %
- per transport, holdout large messages: worst <= 10 %
Two known gaps are left out of the holdout bounds above, each with its own test that fails when
the gap closes (and docs/guides/estimate.md says so): GPUDirect-TCPX, whose two published sources disagree by
30 % on the same ring (worst 35 % there), and GPUDirect-TCPXO below 256 MiB, whose slow ramp the
model does not capture.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import get_args

import pytest

from cluster.catalog import CloudFabric
from cluster.estimate.constants import Calibration, load_calibration
from cluster.estimate.fit import Point, fit, predict_all, transport_rows
from cluster.spec import FabricSpec

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))


@pytest.fixture(scope="module")
def points() -> list[Point]:
    return predict_all()


def _stats(points: list[Point]) -> tuple[float, float]:
    errors = [abs(point.error) for point in points]
    assert errors, "no points in this group"
    return sum(errors) / len(errors), max(errors)


# GPUDirect-TCPXO all-reduce ramps up far more slowly than the model's size curve: 2 x A3 Mega
# reach 59 GB/s at 32 MiB where the model says 150 (the held-out row gcp-a3mega-allreduce-2x8).
TCPXO_SMALL = 2**28
# GPUDirect-TCPX: Google's test settings give 50 GB/s on a 2-node ring (the fit row), a run tuned
# with 8 channels and 8 MiB buffers 66 (held out): one efficiency cannot meet both within 10 %.
SPREAD = {"gpudirect-tcpx": 0.35}


def _known_gap(point: Point) -> bool:
    return (point.transport == "gpudirect-tcpxo" and point.size_bytes < TCPXO_SMALL) or point.transport in SPREAD


def test_holdout_large_messages_within_bounds(points: list[Point]) -> None:
    held = [p for p in points if p.use == "holdout" and p.large and not _known_gap(p)]
    assert len(held) >= 12
    mean, worst = _stats(held)
    assert mean <= 0.05, mean
    assert worst <= 0.10, worst


def test_holdout_every_size_within_bounds(points: list[Point]) -> None:
    mean, worst = _stats([p for p in points if p.use == "holdout" and not _known_gap(p)])
    assert mean <= 0.08, mean
    assert worst <= 0.40, worst


def test_the_tcpxo_small_message_gap_is_real(points: list[Point]) -> None:
    """The exclusion above is needed (and the README says so): if the model learns TCPXO's small
    messages, this fails and the exclusion goes."""
    gap = [p for p in points if p.use == "holdout" and p.transport == "gpudirect-tcpxo" and p.size_bytes < TCPXO_SMALL]
    assert gap and all(p.error > 0.40 for p in gap), [(p.size_bytes, p.error) for p in gap]


def test_the_tcpx_sources_really_disagree() -> None:
    """The wider TCPX bound rests on the data, not on the model: the two published 2-node rings
    on a3-highgpu-8g plateau 25 %+ apart, so no single efficiency is within 10 % of both."""
    rows = {row.id: row for row in load_calibration().measurements}
    tuned = max(rows["gcp-a3high-allreduce-2x8"].points.values())
    reference = max(rows["gcp-a3high-allgather-2x8"].points.values())
    assert tuned / reference > 1.25


def test_a3_mega_held_out_all_reduce_is_predicted_within_10_percent(points: list[Point]) -> None:
    """A3 Mega (8 x 200G GPUDirect-TCPXO) all-reduce on 2 nodes, a published run the fit never
    sees: 298 GB/s at 1 GiB, 339 at 8 GiB. With TCPX's efficiency (0.4047) the model said 134 and
    147 (-55 %, -57 %); with TCPXO's own, fitted on another source's all-gather, +8 % and +4 %."""
    held = [p for p in points if p.row == "gcp-a3mega-allreduce-2x8" and p.large]
    assert len(held) == 2 and all(p.use == "holdout" and p.transport == "gpudirect-tcpxo" for p in held)
    assert all(abs(p.error) <= 0.10 for p in held), [(p.size_bytes, p.error) for p in held]


def test_held_out_error_per_transport_within_bound(points: list[Point]) -> None:
    by_transport: dict[str, list[Point]] = {}
    for p in points:
        if p.use == "holdout" and p.large:
            by_transport.setdefault(p.transport, []).append(p)
    assert {"efa", "gpudirect-tcpx", "gpudirect-tcpxo", "rdma", "nvlink"} <= set(by_transport)
    for transport, held in by_transport.items():
        assert max(abs(p.error) for p in held) <= SPREAD.get(transport, 0.10), transport


def test_every_fabric_kind_has_its_own_fit_row() -> None:
    """Each fabric kind the catalog or a stack file can give a pool is solved from a `use: fit`
    row measured on that kind: TCPXO is not given TCPX's number, nor RDMA RoCE's."""
    calibration = load_calibration()
    kinds = set(get_args(CloudFabric.model_fields["kind"].annotation))
    kinds |= set(get_args(FabricSpec.model_fields["transport"].annotation))
    rows = transport_rows(calibration)
    assert kinds == set(calibration.network_efficiency) == set(rows)
    assert len({row.id for row in rows.values()}) == len(rows)
    assert all(entry.source.startswith("FIT") and "UNCALIBRATED" not in entry.source
               for entry in calibration.network_efficiency.values())


def test_a_fit_row_on_another_transport_is_refused() -> None:
    data = load_calibration().model_dump()
    data["network_efficiency"]["gpudirect-tcpxo"]["fit_row"] = "gcp-a3high-allgather-2x8"
    with pytest.raises(ValueError, match="runs on gpudirect-tcpx, not gpudirect-tcpxo"):
        fit(Calibration.model_validate(data))
    data["network_efficiency"]["gpudirect-tcpxo"]["fit_row"] = "gcp-a3mega-allreduce-2x8"
    with pytest.raises(ValueError, match="not a `use: fit` row"):
        fit(Calibration.model_validate(data))


def test_fit_rows_large_messages_within_bounds(points: list[Point]) -> None:
    mean, worst = _stats([p for p in points if p.use == "fit" and p.large])
    assert mean <= 0.03, mean
    assert worst <= 0.10, worst


def test_holdout_covers_other_systems_node_counts_and_collectives(points: list[Point]) -> None:
    held = [p for p in points if p.use == "holdout"]
    assert {"all_reduce", "all_gather", "reduce_scatter", "all_to_all"} <= {p.collective for p in held}
    assert {"2x8", "8x8", "1x5"} <= {p.shape for p in held}
    assert any("H200" in p.system for p in held)


def test_the_file_is_what_the_fit_rows_give() -> None:
    """Every FIT constant in calibration.yaml is reproduced from the fit rows."""
    current = load_calibration()
    assert fit(current) == current


def test_holdout_rows_never_influence_the_fit() -> None:
    current = load_calibration()
    data = current.model_dump()
    for row in data["measurements"]:
        if row["use"] == "holdout":
            row["points"] = {size: value * 3 for size, value in row["points"].items()}
            row["by_gpus"] = {gpus: value * 3 for gpus, value in row["by_gpus"].items()}
    disturbed = Calibration.model_validate(data)
    assert fit(disturbed).model_dump(exclude={"measurements"}) == current.model_dump(exclude={"measurements"})


def test_fit_rows_do_influence_the_fit() -> None:
    """The opposite check, so the previous test cannot pass vacuously."""
    current = load_calibration()
    data = current.model_dump()
    for row in data["measurements"]:
        if row["id"] == "p5-allreduce-4x8":
            row["points"] = {size: value * 0.8 for size, value in row["points"].items()}
    refit = fit(Calibration.model_validate(data))
    assert refit.network("efa").value == pytest.approx(current.network("efa").value * 0.8, rel=0.02)


def test_each_transport_moves_only_with_its_own_fit_row() -> None:
    current = load_calibration()
    data = current.model_dump()
    for row in data["measurements"]:
        if row["id"] == "gcp-a3mega-allgather-2x8":
            row["points"] = {size: value * 0.9 for size, value in row["points"].items()}
    refit = fit(Calibration.model_validate(data))
    assert refit.network("gpudirect-tcpxo").value == pytest.approx(current.network("gpudirect-tcpxo").value * 0.9,
                                                                    rel=0.01)
    for kind in ("gpudirect-tcpx", "rdma", "efa", "infiniband", "roce"):
        assert refit.network(kind) == current.network(kind)


def test_every_row_and_constant_names_its_source() -> None:
    calibration = load_calibration()
    assert all(row.source and row.system for row in calibration.measurements)
    assert all(entry.source for entry in calibration.network_efficiency.values())
    assert all(curve.source.startswith("FIT") for curve in calibration.size_efficiency.values())
    fit_ids = {row.id for row in calibration.measurements if row.use == "fit"}
    assert {"azure-ndh100-nvls-1x8", "h100-ring-1x2-8", "p5-allreduce-4x8"} <= fit_ids


def test_benchmark_script_prints_every_point(capsys: pytest.CaptureFixture[str], points: list[Point]) -> None:
    import calibration as script  # benchmarks/calibration.py

    monkey_argv = sys.argv
    sys.argv = ["calibration.py"]
    try:
        assert script.main() == 0
    finally:
        sys.argv = monkey_argv
    out = capsys.readouterr().out
    table = [line for line in out.splitlines() if line.split()[:1] and line.split()[0] in {p.row for p in points}]
    assert len(table) == len(points)
    assert "holdout, large" in out and "%" in out
    per_transport = {line.split()[0]: line for line in out.split("transport", 1)[1].splitlines()[2:] if line}
    assert set(per_transport) == {p.transport for p in points}
    assert "gcp-a3mega-allgather-2x8" in per_transport["gpudirect-tcpxo"]
    assert "gcp-a3high-allgather-2x8" in per_transport["gpudirect-tcpx"]
