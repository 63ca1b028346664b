"""How a switch model's front-panel cages split at a port speed (catalog `cages`): the geometry
every dialect names ports from, the bill of materials counts optics by, and the configs take
lane counts from."""

from __future__ import annotations

from typing import NamedTuple

from cluster.catalog import load_catalog


class Breakout(NamedTuple):
    """How a model's cages split at one port speed (catalog `cages`)."""

    ports: int  # per cage in use
    stride: int  # lanes from one subport's first lane to the next one's (the cage's lanes / ports)
    step: int  # 1: every cage in use; 2: the odd cages only (each one's even neighbour disabled)
    lane_gbps: int  # the cage's fastest lane

    def lanes(self, gbps: int) -> int:
        """Lanes a port of this split runs on at `gbps` (EOS `speed 400g-8`): the speed over the
        lane rate, within the port's share of the cage."""
        return min(self.stride, -(-gbps // self.lane_gbps))

    def cage(self, index: int) -> int:
        """The 0-based cage of port `index` (0-based, cabling order)."""
        return index // self.ports * self.step

    def lane(self, index: int) -> int:
        """The first lane (1-based) of port `index` in its cage, as EOS numbers interfaces."""
        return index % self.ports * self.stride + 1


def breakout(model: str, gbps: int) -> Breakout | None:
    """How `model`'s cages split at `gbps`, when the catalog knows its cages."""
    entry = load_catalog().switches.get(model)
    if entry is None or entry.cages is None or gbps not in entry.port_modes:
        return None
    cages = entry.cages
    step = 2 if gbps in cages.odd_only else 1
    ports, spare = divmod(entry.port_modes[gbps], cages.count // step)
    if spare or not ports or cages.lanes % ports:
        raise ValueError(f"catalog: {model} has {entry.port_modes[gbps]} ports at {gbps}G, not a breakout "
                         f"of its {cages.count // step} cages of {cages.lanes} lanes")
    return Breakout(ports, cages.lanes // ports, step, cages.lane_gbps)
