"""The LAB-* rule ids (cluster/lab/rules.py): every id the lab reports is registered with a title,
a meaning and a severity, and the lab guide (docs/guides/lab.md) documents it."""

from __future__ import annotations

import re

from cluster.findings import Severity
from cluster.lab.rules import LAB_RULES, input_finding, lab_finding
from tests.conftest import ROOT


def emitted_ids() -> set[str]:
    """Every LAB-* id written as a string in cluster/."""
    return {rule for path in (ROOT / "cluster").rglob("*.py")
            for rule in re.findall(r'"(LAB-[A-Z]+)"', path.read_text(encoding="utf-8"))}


def test_every_emitted_lab_id_is_registered_and_every_registered_one_emitted() -> None:
    assert emitted_ids() == set(LAB_RULES)
    for rule, (title, description, severity) in LAB_RULES.items():
        assert title and description and isinstance(severity, Severity), rule


def test_every_lab_id_is_documented_in_the_lab_guide() -> None:
    guide = (ROOT / "docs" / "guides" / "lab.md").read_text(encoding="utf-8")
    assert [rule for rule in LAB_RULES if rule not in guide] == []


def test_findings_take_their_rule_severity() -> None:
    assert lab_finding("LAB-BGP", "switches/leaf-1/frr.conf", "m", "h").severity == LAB_RULES["LAB-BGP"][2]
    finding = input_finding("hosts/h200/qos.sh", "missing", "render it")
    assert (finding.rule, finding.severity) == ("LAB-INPUT", Severity.ERROR)
