"""Settings that re-size a network, by how much and what it costs.

`fabric.shared_with: [storage]` cables every storage NIC to a fabric leaf: the sizer then gives
the fabric more leaves (fewer nodes fit a leaf beside the extra ports) and more spines, and the
storage network is not built. Nothing about that shows in the stack file, so the DESIGN summary
says it: the fabric sized with and without the setting, and the bill of materials of both
designs, network by network (the same bom.csv lines `render` and `export` write).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from cluster.catalog.prices import Range
from cluster.exports.bom import bill_of_materials
from cluster.sizing import FabricPlan, size_fabric
from cluster.spec import ClusterSpec
from cluster.topology import NETWORKS, Topology, build
from cluster.words import counted

TIERS = (("leaves", "leaf"), ("spines", "spine"), ("cores", "core"))


@dataclass(frozen=True)
class Resized:
    """A network the setting at `path` (given as `value`) re-sized: its switches per tier without
    and with it, and per network the change in the bill of materials (USD low, high)."""

    path: str
    value: str
    network: str
    without: dict[str, int]
    with_it: dict[str, int]
    usd: dict[str, Range]

    def to_dict(self) -> dict[str, Any]:
        return {"setting": self.path, "value": self.value, "network": self.network, "without": self.without,
                "with": self.with_it, "usd": {network: list(delta) for network, delta in self.usd.items()}}


def resize_text(entry: Mapping[str, Any]) -> str:
    """One line of a `Resized` (as its dict) for the DESIGN summary and the verbs that build the design."""
    usd = entry["usd"]
    changes = [f"{network} {_usd(delta)}" for network, delta in usd.items() if network != "all"]
    return (f"{entry['setting']}: {entry['value']} re-sizes the {entry['network']} from {_switches(entry['without'])} "
            f"to {_switches(entry['with'])}; bom.csv: {', '.join(changes)}, in all {_usd(usd['all'])}")


def _delta(now: Range, before: Range) -> Range:
    return (now[0] - before[0], now[1] - before[1])


def _counts(plan: FabricPlan, planes: int) -> dict[str, int]:
    return {key: planes * getattr(plan, key) for key, _ in TIERS}


def _switches(counts: dict[str, int]) -> str:
    return ", ".join(counted(counts[key], tier) for key, tier in TIERS if counts[key])


def _usd(delta: Sequence[float]) -> str:
    """+$1.27M to +$2.49M; a range that does not change sign keeps it on both ends."""
    return " to ".join(f"{'-' if value < 0 else '+'}${_short(abs(value))}" for value in delta)


def _short(value: float) -> str:
    if value >= 1e6:
        return f"{value / 1e6:.2f}M"
    return f"{value / 1e3:,.0f}k" if value >= 1e4 else f"{value:,.0f}"


def resized(spec: ClusterSpec, topology: Topology) -> list[Resized]:
    """The networks a setting re-sized in this design. Today one setting does: fabric.shared_with
    (the fabric compared with the same design whose storage and management have networks of
    their own). Costs from the bill of materials of both designs; the graph of the design without
    the setting is built for it (linear in the design, as the validated one was)."""
    fabric = spec.fabric
    if fabric is None or not fabric.shared_with or topology.fabric_plan is None:
        return []
    alone = spec.model_copy(update={"fabric": fabric.model_copy(update={"shared_with": ()})})
    alone_plan = size_fabric(alone)
    without, with_it = _counts(alone_plan, fabric.planes), _counts(topology.fabric_plan, fabric.planes)
    if without == with_it:
        return []
    shared, apart = bill_of_materials(spec, topology), bill_of_materials(alone, build(alone, alone_plan))
    usd = {network: _delta(shared.usd(network), apart.usd(network)) for network in NETWORKS}
    usd = {network: delta for network, delta in usd.items() if any(delta)}
    usd["all"] = _delta(shared.usd(), apart.usd())
    return [Resized("fabric.shared_with", f"[{', '.join(fabric.shared_with)}]", "fabric", without, with_it, usd)]
