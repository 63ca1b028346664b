"""The rule reference (docs/reference/rules.md), generated from the rule registries: every id
`validate` reports (cluster.formats.catalog.rule_infos: the rule set and the pipeline's own
SCHEMA and SPEC-IGNORED), `verify`'s CABLE-* ids and `lab`'s LAB-* ids, each with its title, its
default severity and what it checks. A test keeps the file current.

    python -m cluster.formats.rules_reference > docs/reference/rules.md
"""

from __future__ import annotations

from cluster.findings import Severity
from cluster.formats.catalog import rule_infos
from cluster.lab.rules import LAB_RULES
from cluster.verify.match import CABLE_RULES

DOC = "docs/reference/rules.md"
INTRO = """# Rules: every id

Generated from the rule registries by `python -m cluster.formats.rules_reference > docs/reference/rules.md`
(a test fails when it is out of date). Every finding names one of these ids, the config path and line,
what was expected and what was found, and the fix. `policy.suppress` turns a `validate` rule's
findings into `info` (`"suppressed": true`); `policy.fail_on` sets the severity that fails a run (exit 1).
A rule that crashes becomes an ERROR finding with its id; the others still run. The rules in more
detail, with the numbers they use: [What `validate` checks](../guides/first-stack-file.md#what-validate-checks).
"""


def _cell(text: str) -> str:
    """Text for one table cell: one line, pipes escaped."""
    return " ".join(text.split()).replace("|", "\\|")


def _table(rows: list[tuple[str, str, str, Severity]]) -> list[str]:
    lines = ["| id | default severity | title | what it checks |", "|---|---|---|---|"]
    lines += [f"| `{rule}` | {severity} | {_cell(title)} | {_cell(text)} |" for rule, title, text, severity in rows]
    return lines


def rules_reference() -> str:
    """docs/reference/rules.md as text."""
    validate = [(info.id, info.title, info.description, info.severity) for info in rule_infos()]
    verify = [(rule, title, text, severity) for rule, (title, text, severity) in CABLE_RULES.items()]
    lab = [(rule, title, text, severity) for rule, (title, text, severity) in LAB_RULES.items()]
    sections = [
        INTRO,
        "## `validate` (and every verb that validates first)\n",
        "The design's rules, in report order; `--format sarif` describes each the same way.\n",
        *_table(validate),
        "",
        "## `verify` and `import`: CABLE-*\n",
        "What the devices report against the design's cables ([verify](../guides/verify.md)). CABLE-INPUT is "
        "never suppressed.\n",
        *_table(verify),
        "",
        "## `lab`: LAB-*\n",
        "The running lab against the design (`lab check`), a failure against `whatif` (`lab fail`), and a "
        "rendered tree a lab cannot use (`lab up`, `lab export`) ([lab](../guides/lab.md)).\n",
        *_table(lab),
    ]
    return "\n".join(sections) + "\n"


if __name__ == "__main__":
    print(rules_reference(), end="")
