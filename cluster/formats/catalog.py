"""Rule metadata for CI formats: every rule id with its title, description and default level."""

from __future__ import annotations

import inspect
from dataclasses import dataclass

from cluster.findings import Severity
from cluster.rules import ALL_RULES, RULE_IDS


@dataclass(frozen=True)
class RuleInfo:
    """What a CI tool shows about a rule id."""

    id: str
    title: str
    description: str
    severity: Severity


# Findings that no Rule class yields: the loader and the resolver report them.
PIPELINE_RULES = (
    RuleInfo(
        "SCHEMA",
        "stack file contract",
        "The stack file parses and fits the spec: known keys, types, ranges, catalog keys, a gpu that "
        "matches instance_type, sizing consistent with the rails. Nothing else is checked until it passes; "
        "exit code 2.",
        Severity.ERROR,
    ),
    RuleInfo(
        "SPEC-IGNORED",
        "ignored stack-file section",
        "A section the target does not use (cloud on premises; fabric, qos or NIC sets on a cloud target, "
        "where the provider's layout applies) is ignored, so what the file says is not what is built.",
        Severity.WARNING,
    ),
)


def rule_infos() -> list[RuleInfo]:
    """Every public rule id (DESIGN.md's order), then any further rule the rule set runs."""
    known = {info.id: info for info in PIPELINE_RULES}
    for rule in ALL_RULES:
        doc = inspect.getdoc(type(rule)) or rule.title
        known.setdefault(rule.id, RuleInfo(rule.id, rule.title, " ".join(doc.split()), rule.severity))
    ordered = [known.pop(rule_id) for rule_id in RULE_IDS if rule_id in known]
    return ordered + [known[rule_id] for rule_id in sorted(known)]


def unknown_rule(rule_id: str) -> RuleInfo:
    """Metadata for a rule id that has no descriptor (should not happen; keeps SARIF consistent)."""
    return RuleInfo(rule_id, rule_id, f"Findings reported under {rule_id}.", Severity.ERROR)
