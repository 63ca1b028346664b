"""Hints that give the number: applying the value a hint names makes its finding disappear."""

from __future__ import annotations

import copy
import re
from typing import Any

import pytest
from conftest import run

SWITCH = {"ports": 64, "port_gbps": 400}


def design(**changes: Any) -> dict[str, Any]:
    data: dict[str, Any] = {
        "name": "t",
        "target": "onprem",
        "node_pools": [{"name": "h200", "nodes": 16, "gpu": "H200", "fabric_nics": {"count": 8, "gbps": 400}}],
        "fabric": {"design": "rack-tor", "leaf": SWITCH, "spine": SWITCH, "leaves": 4, "spines": 2, "leaf_uplinks": 32},
    }
    for path, value in changes.items():
        put(data, path, value)
    return data


def put(data: dict[str, Any], path: str, value: Any) -> None:
    """Set a dotted stack path (`node_pools[0].fabric_nics.count`, `addressing.hosts`)."""
    parts = [int(part) if part.isdigit() else part for part in re.split(r"\.|\[(\d+)\]\.?", path) if part]
    target: Any = data
    for part in parts[:-1]:
        target = target.setdefault(part, {}) if isinstance(part, str) else target[part]
    target[parts[-1]] = value


def applied(data: dict[str, Any], hint: str) -> dict[str, Any]:
    """The design with the hint's value set."""
    fixed = copy.deepcopy(data)
    pool = re.search(r"use a /(\d+) or larger (\w+) pool", hint)
    if pool:
        base = fixed.get("addressing", {}).get(pool[2], "10.128.0.0/10").split("/")[0]
        put(fixed, f"addressing.{pool[2]}", f"{base}/{pool[1]}")
        return fixed
    given = re.search(r"(?:give|with) ([a-z_]+(?:\[\d+\])?(?:\.[a-z_]+)*): (\d+)", hint)
    assert given, f"no number in the hint: {hint}"
    put(fixed, given[1], int(given[2]))
    return fixed


CASES = {
    "FAB-OVERSUB": design(**{"fabric.leaf_uplinks": 8}),  # 16 x 400G down per leaf over 8 up: 2:1
    "NET-OVERSUB": design(**{"storage": {"leaf": {"ports": 16, "port_gbps": 200}, "leaf_uplinks": 1}}),
    "FAB-GPU-NIC": design(**{"node_pools[0].fabric_nics": {"count": 8, "gbps": 100},
                             "fabric.leaf": {"ports": 64, "port_gbps": 100}, "fabric.leaf_uplinks": 8,
                             "fabric.spine": {"ports": 64, "port_gbps": 100}}),
    "FAB-RADIX": design(**{"fabric.leaf_uplinks": 32, "fabric.spines": 1}),  # 4 x 32 links on one 64-port spine
    "ADDR-POOL": design(**{"addressing": {"hosts": "10.128.0.0/26"}}),
}


@pytest.mark.parametrize("rule", sorted(CASES))
def test_applying_the_hint_clears_the_finding(rule: str) -> None:
    data = CASES[rule]
    before = [f for f in run(data).findings if f.rule == rule and not f.suppressed]
    assert before, f"the case does not raise {rule}"
    fixed = applied(data, before[0].hint)
    # The finding is gone: nothing of that rule at its severity or above (a warning that a
    # higher recommendation is not met yet is another finding).
    after = [f for f in run(fixed).findings if f.rule == rule and f.severity >= before[0].severity]
    assert after == [], (before[0].hint, [f.message for f in after])


def test_every_hint_says_how_to_suppress_it_once_unless_it_cannot_be() -> None:
    from cluster.rules.base import UNSUPPRESSIBLE

    findings = [f for data in CASES.values() for f in run(data).findings if f.rule != "SCHEMA"]
    assert findings
    for finding in findings:
        expected = 0 if finding.rule in UNSUPPRESSIBLE else 1
        assert finding.hint.count(f"suppress with {finding.rule}") == expected, finding.hint
