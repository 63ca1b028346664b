"""Price and power ranges for the bill of materials (prices.yaml), and per-stack overrides.

Every entry is a [low, high] range in USD and watts with a source note. Item ids are one
namespace: switch models (`SN5600`), `generic-port-400g` for generic switches, transceivers
(`transceiver-800g-mmf`) and cables (`fiber-mmf`, `dac-400g`, `aoc-25g`, `cat6`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from functools import lru_cache
from pathlib import Path

from cluster.catalog import read_yaml

HERE = Path(__file__).parent
Range = tuple[float, float]


@dataclass(frozen=True)
class Price:
    """One item: USD and watts per unit, as ranges; for switches the main ports' cages."""

    usd: Range
    watts: Range
    source: str
    cages: int | None = None


@dataclass(frozen=True)
class Prices:
    items: Mapping[str, Price]
    usd_per_kwh: Range
    energy_source: str

    def get(self, item: str) -> Price | None:
        return self.items.get(item)


def as_range(value: float | int | list[float] | tuple[float, ...]) -> Range:
    """A number or [low, high] -> (low, high); a single number is a range of one value."""
    if isinstance(value, (int, float)):
        return (float(value), float(value))
    low, high = value
    return (float(low), float(high))


def generic_port_id(gbps: int) -> str:
    return f"generic-port-{gbps}g"


@lru_cache(maxsize=1)
def load_prices() -> Prices:
    """prices.yaml, checked: every entry has usd, watts (low <= high) and a source."""
    data = read_yaml(HERE / "prices.yaml")
    items: dict[str, Price] = {}
    entries = [*data["switches"].items(), *data["transceivers"].items(), *data["cables"].items()]
    entries += [(generic_port_id(int(gbps)), entry) for gbps, entry in data["generic_switch_port"].items()]
    for item, entry in entries:
        price = Price(usd=as_range(entry["usd"]), watts=as_range(entry["watts"]), source=str(entry["source"]),
                      cages=entry.get("cages"))
        assert price.usd[0] <= price.usd[1] and price.watts[0] <= price.watts[1], f"prices.yaml {item}: low > high"
        assert price.source.strip(), f"prices.yaml {item}: source note missing"
        items[str(item)] = price
    energy = data["energy"]
    return Prices(items=items, usd_per_kwh=as_range(energy["usd_per_kwh"]), energy_source=str(energy["source"]))


def price_ids() -> list[str]:
    return sorted(load_prices().items)


def with_overrides(prices: Prices, overrides: Mapping[str, tuple[Range | None, Range | None]],
                   usd_per_kwh: Range | None) -> Prices:
    """`prices` with the stack's own numbers for some items (usd and/or watts) and energy."""
    items = dict(prices.items)
    for item, (usd, watts) in overrides.items():
        base = items[item]
        items[item] = replace(base, usd=usd or base.usd, watts=watts or base.watts,
                              source="stack file costs.prices (overrides: " + base.source + ")")
    return Prices(items=items, usd_per_kwh=usd_per_kwh or prices.usd_per_kwh,
                  energy_source="stack file costs.usd_per_kwh" if usd_per_kwh else prices.energy_source)
