"""How much of a design this machine's lab holds: memory and CPU, each against its share.

A lab's daemons hold memory in proportion to its switches, sessions and hosts, and take CPU mostly
for BFD: bfdd sends and answers every session's packets (200 ms x 3, so five each way a second per
session end) in userspace, whether anything is asked of the lab or not. Both costs were measured
here (`benchmarks/lab.py`, an idle converged lab; docs/guides/lab.md): a candidate slice fits when
its memory is within MEMORY_SHARE of MemAvailable and its daemons' idle CPU within CPU_SHARE of the
cores, the rest left for `lab check`, `lab fail` and BFD's own deadlines (a packet late by
600 ms tears a session down).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from cluster.lab.model import Slice

#: Resident memory of one switch's daemons (zebra ~15 MB, bgpd ~20-30 MB, bfdd ~8 MB, lldpd ~7 MB),
#: bgpd's cost per session end, and one host's lldpd.
SWITCH_MB, SESSION_MB, HOST_MB = 50.0, 0.4, 8.0
MEMORY_SHARE = 0.75  # of MemAvailable a lab may take
#: CPU of an idle converged lab, in cores: per switch (bgpd's keepalives, zebra, lldpd), and per BGP
#: session end with BFD at 200 ms x 3 (bfdd). Measured (benchmarks/lab.py, 30 s idle): article-c
#: (28 switches, 1,024 fabric session ends) 1.66 cores, bfdd 0.00158 per session end; the pods slice
#: groups=2 (67 switches, 1,024) 1.72 cores, bfdd 0.00162; the rest 0.0009-0.0013 per switch.
SWITCH_CORES, SESSION_CORES = 0.0015, 0.0016
CPU_SHARE = 0.5  # of the cores a lab's idle daemons may take


@dataclass(frozen=True)
class Need:
    """What one candidate slice holds."""

    slice: Slice
    switches: int
    session_ends: int  # BGP sessions between the slice's switches, counted at both ends
    hosts: int

    @property
    def memory_mb(self) -> float:
        return self.switches * SWITCH_MB + self.session_ends * SESSION_MB + self.hosts * HOST_MB

    @property
    def cores(self) -> float:
        return self.switches * SWITCH_CORES + self.session_ends * SESSION_CORES


@dataclass(frozen=True)
class Machine:
    """What this machine gives a lab: MemAvailable and the cores this process may run on."""

    available_mb: float
    cores: int

    @property
    def memory_budget_mb(self) -> float:
        return self.available_mb * MEMORY_SHARE

    @property
    def cpu_budget(self) -> float:
        return self.cores * CPU_SHARE


@dataclass(frozen=True)
class Sized:
    """The slice chosen, what it needs, and which limits kept a larger candidate out."""

    need: Need
    machine: Machine
    bound_by: tuple[str, ...]  # "memory", "CPU": what the larger candidates did not fit; empty: the first fit

    @property
    def fits_memory(self) -> bool:
        return self.need.memory_mb <= self.machine.memory_budget_mb

    @property
    def fits_cpu(self) -> bool:
        return self.need.cores <= self.machine.cpu_budget

    def to_dict(self) -> dict[str, object]:
        return {"slice": str(self.need.slice), "bound_by": list(self.bound_by), "switches": self.need.switches,
                "session_ends": self.need.session_ends, "hosts": self.need.hosts,
                "memory_mb": round(self.need.memory_mb), "memory_budget_mb": round(self.machine.memory_budget_mb),
                "cores": round(self.need.cores, 2), "cpu_budget_cores": round(self.machine.cpu_budget, 2),
                "machine_cores": self.machine.cores}

    def describe(self) -> str:
        """One line: what the slice needs of this machine and, when it is smaller than asked for,
        which limit bound it."""
        need, machine = self.need, self.machine
        budget = machine.cpu_budget
        use = (f"about {need.cores:.2f} of the {budget:g} core{'s' if budget != 1 else ''} a lab may keep busy "
               f"({CPU_SHARE:.0%} of "
               f"{machine.cores}; BFD at {need.session_ends:,} session ends) and {need.memory_mb:,.0f} of "
               f"{machine.memory_budget_mb:,.0f} MB ({MEMORY_SHARE:.0%} of MemAvailable)")
        if not self.fits_cpu:
            return (f"slice {need.slice}{', the smallest,' if self.bound_by else ''} needs more CPU than this machine "
                    f"gives a lab: {use}; BFD sessions may flap under load and `lab fail` miss its bounds")
        if self.bound_by:
            return f"slice {need.slice}, the largest this machine holds, bound by {' and '.join(self.bound_by)}: {use}"
        return f"slice {need.slice} fits this machine: {use}"


def choose(candidates: Sequence[Need], machine: Machine) -> Sized:
    """The first candidate (largest first) that fits both this machine's memory and CPU budget,
    naming the limits the larger ones exceeded; the last candidate when none before it fits (the
    caller refuses it when it does not fit in memory either)."""
    bound: list[str] = []
    for need in candidates[:-1]:
        over = [limit for limit, fits in (("memory", need.memory_mb <= machine.memory_budget_mb),
                                          ("CPU", need.cores <= machine.cpu_budget)) if not fits]
        if not over:
            return Sized(need, machine, tuple(bound))
        bound += [limit for limit in over if limit not in bound]
    return Sized(candidates[-1], machine, tuple(bound))
