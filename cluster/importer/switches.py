"""A switch's model and how it names its ports, from what is reported.

The model comes from a `--model PATTERN=MODEL` the user gives, else from the system
description its neighbors report (SONiC names its SKU there, Cumulus and EOS the platform, an
InfiniBand switch `MF0;<name>:MQM9700/U1`): the longest catalog model named in it.

The port names decide the dialect and the speed: each dialect names front-panel port N its own
way, per model and port speed (breakouts included; cluster/dialects/<os>/), so the (dialect,
speed) whose names cover the names seen on a tier's switches is the one they run, and the same
table turns every name back into its port number. A model no one reports is looked for among
the catalog's by the same test: a generic box's naming first (a `{ports, port_gbps}` box, in
each dialect that can name one), then every model whose names fit, and the import says which it
chose and what else would fit.
"""

from __future__ import annotations

import fnmatch
import re
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from functools import cache

from cluster.catalog import load_catalog
from cluster.dialects import for_transport, generic, platform, platforms

#: Port numbers a switch of unknown model is read up to (the largest catalog chassis has 576).
GENERIC_PORTS = 1024
ALNUM = re.compile(r"[^A-Z0-9]")


@dataclass(frozen=True)
class Naming:
    """How one kind of switch names its ports: dialect, catalog model (None: not in the catalog),
    port speed, lower-case port name -> 1-based front-panel number, and its management port."""

    os: str
    model: str | None
    gbps: int | None
    numbers: Mapping[str, int]
    management: str
    ports: int  # main ports at `gbps` (the catalog's; the import may find fewer in use)
    uplink_ports: int = 0
    notes: tuple[str, ...] = field(default=())

    def number(self, port: str) -> int | None:
        return self.numbers.get(port.lower())


def model_in(description: str) -> str | None:
    """The catalog model a system description names (the longest; None when none, or two of
    the same length)."""
    text = ALNUM.sub("", description.upper())
    found = [key for key in load_catalog().switches if ALNUM.sub("", key.upper()) in text]
    if not found:
        return None
    longest = max(len(ALNUM.sub("", key)) for key in found)
    best = [key for key in found if len(ALNUM.sub("", key)) == longest]
    return best[0] if len(best) == 1 else None


def model_by_pattern(device: str, patterns: Iterable[tuple[str, str]]) -> str | None:
    """The model of the first `--model PATTERN=MODEL` whose shell pattern matches `device`."""
    return next((model for pattern, model in patterns if fnmatch.fnmatchcase(device, pattern)), None)


@cache
def _table(os: str, model: str, gbps: int, count: int) -> Mapping[str, int]:
    entry = platform(os)
    names: dict[str, int] = {}
    for index in range(count):
        try:
            name = entry.port_name(index, model, gbps)
        except (ValueError, KeyError, IndexError):  # the dialect has no name for it at this speed
            return {}
        names.setdefault(name.lower(), index + 1)
        for alias in entry.port_aliases(index + 1):
            names.setdefault(alias.lower(), index + 1)
    return names


def _catalog_namings(model: str) -> list[Naming]:
    entry = load_catalog().switches[model]
    own = for_transport(entry.transport)
    oses = [own.name] if own is not None else [os for os in entry.runs if os in platforms()]
    uplinks = entry.uplink_ports.count if entry.uplink_ports else 0
    found = []
    for os in oses:
        for gbps, count in sorted(entry.port_modes.items(), reverse=True):
            numbers = _table(os, model, gbps, count + uplinks)
            if numbers:
                found.append(Naming(os, model, gbps, numbers, platform(os).management_port(model).lower(), count,
                                    uplinks))
    return found


def _generic_namings() -> list[Naming]:
    """How a generic box ({ports, port_gbps}) names its ports in every dialect a stack file may
    name, the generic one first (SONiC names none: its names come from a SKU's port map)."""
    found = []
    for entry in (generic(), *(entry for entry in platforms().values() if entry.stack_os and entry is not generic())):
        numbers = _table(entry.name, "", 0, GENERIC_PORTS)
        if numbers:
            found.append(Naming(entry.name, None, None, numbers, entry.management_port("").lower(), 0))
    return found


def _score(naming: Naming, names: Counter[str]) -> int:
    return sum(count for name, count in names.items() if name in naming.numbers or name == naming.management)


def choose(per_switch: list[set[str]], models: Counter[str], speeds: Mapping[str, float],
           transport: str | None) -> Naming:
    """The naming of one tier's switches: `per_switch` the port names seen on each (lower-case),
    `models` what each was reported (or mapped) as, `speeds` the fastest link seen on each port
    name, `transport` the fabric's where known."""
    notes: list[str] = []
    names: Counter[str] = Counter(name for seen in per_switch for name in seen)
    total = sum(names.values())
    if models:
        model, _ = models.most_common(1)[0]
        if len(models) > 1:
            notes.append(f"reported as {', '.join(sorted(models))}; imported as {model}, the most common")
        best = _best(_catalog_namings(model), per_switch, names, speeds)
        if best is not None and _score(best, names) == total:
            return _noted(best, notes)
    else:
        best = None
    # A generic box is written as {ports, port_gbps} in a dialect a stack file names; on an
    # InfiniBand fabric the catalog's models are tried instead (by the names of their ports).
    plain = _best([naming for naming in _generic_namings() if _transport_fits(naming, transport)],
                  per_switch, names, speeds)
    if plain is not None and _score(plain, names) == total and not models:
        plain = _with_speed(plain, _main_speed(plain, speeds))
        return _noted(plain, ["model not reported: a generic switch of the ports in use; give --model PATTERN=MODEL"])
    others = [naming for key, entry in load_catalog().switches.items()
              if transport is None or (entry.transport == "infiniband") == (transport == "infiniband")
              for naming in _catalog_namings(key)]
    guess = _best(others, per_switch, names, speeds)
    if guess is not None and _score(guess, names) == total:
        fitting = sorted({naming.model for naming in others
                          if naming.model and _score(naming, names) == total} - {guess.model})
        also = f" (also fit: {', '.join(fitting)})" if fitting else ""
        reason = "model not reported" if not models else f"port names do not fit {models.most_common(1)[0][0]}"
        return _noted(guess, [*notes, f"{reason}: {guess.model} is the first catalog model whose port names fit{also}; "
                                      "give --model PATTERN=MODEL"])
    fallback = best or plain or guess
    if fallback is None:
        return Naming(generic().name, None, None, {}, "", 0, notes=(*notes, "no dialect names these ports"))
    missing = sorted(name for name in names if name not in fallback.numbers and name != fallback.management)
    return _noted(fallback, [*notes, f"port names no dialect of {fallback.model or 'a generic switch'} has: "
                                     f"{', '.join(missing[:5])}"])


def _main_speed(naming: Naming, speeds: Mapping[str, float]) -> int | None:
    """The fastest link on a port the naming calls a main port (fixed uplink ports have their
    own speed): a main port runs at least that fast."""
    found = [gbps for name, gbps in speeds.items()
             if (number := naming.number(name)) is not None and (naming.model is None or number <= naming.ports)]
    return int(max(found)) if found else None


def _with_speed(naming: Naming, gbps: int | None) -> Naming:
    return Naming(naming.os, naming.model, gbps, naming.numbers, naming.management, naming.ports, naming.uplink_ports,
                  naming.notes)


def _transport_fits(naming: Naming, transport: str | None) -> bool:
    if transport is None:
        return True
    return (platform(naming.os).transport == "infiniband") == (transport == "infiniband")


def _run(naming: Naming, per_switch: Counter[frozenset[str]]) -> int:
    """How many ports from port 1 up each switch uses without a gap, summed: the design cables a
    switch's downlinks from port 1 on, so where two speeds' names both fit (swp1s0 and swp1s1 are
    ports 1 and 2 of a 2x breakout, and of a 4x one), the one that numbers them contiguously is it.
    `per_switch`: each set of (lower-case) port names seen, and on how many switches."""
    total = 0
    number = naming.numbers.get
    for seen, switches in per_switch.items():
        numbers = set(map(number, seen))
        run = 0
        while run + 1 in numbers:
            run += 1
        total += run * switches
    return total


def _best(candidates: list[Naming], per_switch: list[set[str]], names: Counter[str],
          speeds: Mapping[str, float]) -> Naming | None:
    """The candidate naming the most ports; ties: the most ports numbered from 1 without a gap,
    the speed its main ports' links show, the model's own dialect, then the faster speed.
    `names`: on how many switches each port name is seen."""
    if not candidates:
        return None
    catalog = load_catalog().switches
    # The score first; the rest, which reads every switch's ports, only among those that name the most.
    scores = [_score(naming, names) for naming in candidates]
    most = max(scores)
    top = [naming for naming, score in zip(candidates, scores, strict=True) if score == most]
    if len(top) == 1:
        return top[0]
    distinct = Counter(frozenset(seen) for seen in per_switch)  # a tier's switches mostly use the same ports

    def rank(naming: Naming) -> tuple[int, int, int, int]:
        default = catalog[naming.model].os if naming.model else ""
        return (_run(naming, distinct), int(naming.gbps == _main_speed(naming, speeds)), int(naming.os == default),
                naming.gbps or 0)

    return max(top, key=rank)


def _noted(naming: Naming, notes: list[str]) -> Naming:
    return Naming(naming.os, naming.model, naming.gbps, naming.numbers, naming.management, naming.ports,
                  naming.uplink_ports, tuple(notes))
