"""The calibration constants of the collective model, read from calibration.yaml.

The YAML file is the single place where numbers live; this module only types and checks them.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from cluster.catalog import read_yaml

CALIBRATION_FILE = Path(__file__).with_name("calibration.yaml")
Protocol = Literal["LL", "LL128", "Simple"]
PROTOCOLS: tuple[Protocol, ...] = ("LL", "LL128", "Simple")


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class NvLink(_Frozen):
    ring_efficiency: float = Field(gt=0, le=1)
    nvls_efficiency: float = Field(gt=0, le=1)
    nvls_gpus: tuple[str, ...]
    nvls_min_gpus: int


class Sourced(_Frozen):
    value: float = Field(gt=0, le=1)
    fit_row: str  # the `use: fit` measurement the value is solved from, on this fabric kind
    source: str


class SizeCurve(_Frozen):
    half_bytes: float = Field(gt=0)
    exponent: float = Field(gt=0)
    source: str

    def efficiency(self, size_bytes: float) -> float:
        """1 / (1 + (half_bytes / S)^exponent): 0.5 at half_bytes, towards 1 for large S."""
        return float(1.0 / (1.0 + (self.half_bytes / max(size_bytes, 1.0)) ** self.exponent))


class Latency(_Frozen):
    base: dict[str, dict[Protocol, float]]
    hop: dict[str, dict[Protocol, float]]


class Measurement(_Frozen):
    """One row of the calibration table of COLLECTIVES.md."""

    id: str
    system: str
    stack: dict[str, Any]
    collective: str
    nodes: int = 1
    algorithm: str | None = None
    gpus_per_node: tuple[int, ...] = ()
    points: dict[str, float] = Field(default_factory=dict)
    by_gpus: dict[int, float] = Field(default_factory=dict)
    size: str | None = None
    use: Literal["fit", "holdout"]
    source: str


class Calibration(_Frozen):
    nvlink: NvLink
    network_efficiency: dict[str, Sourced]
    size_efficiency: dict[str, SizeCurve]
    nccl_latency_us: Latency
    protocol_bandwidth: dict[Protocol, float]
    measurements: tuple[Measurement, ...]

    def network(self, fabric_kind: str) -> Sourced:
        """Efficiency of a fabric kind; an unknown kind is a catalog bug, so it raises."""
        return self.network_efficiency[fabric_kind]


def read_calibration(path: Path = CALIBRATION_FILE) -> Calibration:
    """Parse and check a calibration file."""
    return Calibration.model_validate(read_yaml(path))


@lru_cache(maxsize=1)
def load_calibration() -> Calibration:
    """The shipped calibration, read once per process."""
    return read_calibration()
