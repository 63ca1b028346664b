"""The documentation: the generated reference pages are current, every relative link between the
pages resolves (to a file, and to a heading or `<a id>` where it names one), every verb is in the
README's table with a guide, and no page names a file a user does not have."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from cluster.cli import VERBS
from cluster.cli_reference import cli_reference
from cluster.formats import rules_reference
from cluster.formats.catalog import rule_infos
from cluster.lab.rules import LAB_RULES
from cluster.verify.match import CABLE_RULES
from tests.conftest import ROOT

# Files of the project's own working notes: a user of the package or the repository has none of them.
PRIVATE = re.compile(r"\b(DESIGN|FACTS|STYLE)\.md\b")
LINK = re.compile(r"(?<!\\)\[[^\]]*\]\(([^)\s]+)\)")
FENCE = re.compile(r"^```.*?^```", re.S | re.M)
CODE = re.compile(r"`[^`\n]*`")


def pages() -> list[Path]:
    return [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]


def slug(heading: str) -> str:
    """A heading's anchor as GitHub makes it: lower case, punctuation dropped, spaces to hyphens."""
    text = re.sub(r"<[^>]+>", "", heading.strip().lower())
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def anchors(text: str) -> set[str]:
    """Every anchor of a page: its headings (numbered -1, -2 when repeated) and its `<a id>`s."""
    found: set[str] = set(re.findall(r'<a id="([^"]+)"', text))
    seen: dict[str, int] = {}
    for heading in re.findall(r"^#{1,6} (.+)$", FENCE.sub("", text), re.M):
        base = slug(heading)
        count = seen.get(base, 0)
        found.add(base if count == 0 else f"{base}-{count}")
        seen[base] = count + 1
    return found


def links(text: str) -> list[str]:
    """Every markdown link target outside code blocks and code spans."""
    return LINK.findall(CODE.sub("", FENCE.sub("", text)))


def broken(page: Path) -> list[str]:
    """The link targets of `page` that name no file, or no anchor of the page they name."""
    problems = []
    for target in links(page.read_text(encoding="utf-8")):
        if re.match(r"^[a-z]+:", target):  # https:, mailto:: not ours to check offline
            continue
        path, _, anchor = target.partition("#")
        destination = (page.parent / path).resolve() if path else page
        if not destination.exists() or (anchor and destination.suffix == ".md"
                                        and anchor not in anchors(destination.read_text(encoding="utf-8"))):
            problems.append(target)
    return problems


def test_every_relative_link_resolves() -> None:
    assert {str(page.relative_to(ROOT)): broken(page) for page in pages() if broken(page)} == {}


def test_the_link_check_sees_a_missing_file_and_a_missing_anchor(tmp_path: Path) -> None:
    (tmp_path / "a.md").write_text("# Top\n\n## The `lab` guide: one\n")
    page = tmp_path / "b.md"
    page.write_text("[ok](a.md#the-lab-guide-one) [gone](c.md) [no](a.md#nothere) `[code](x.md)` [self](#top-1)\n"
                    "# Top\n")
    assert broken(page) == ["c.md", "a.md#nothere", "#top-1"]


def test_no_page_names_a_file_a_user_does_not_have() -> None:
    named = {str(page.relative_to(ROOT)): sorted(set(PRIVATE.findall(page.read_text(encoding="utf-8"))))
             for page in pages()}
    assert {page: names for page, names in named.items() if names} == {}
    assert PRIVATE.search("as DESIGN.md says") and not PRIVATE.search("the stack-file contract's example")


def test_the_rule_reference_is_current() -> None:
    assert (ROOT / rules_reference.DOC).read_text(encoding="utf-8") == rules_reference.rules_reference(), (
        "run `python -m cluster.formats.rules_reference > docs/reference/rules.md`")


def test_the_rule_reference_names_every_rule_id() -> None:
    text = (ROOT / rules_reference.DOC).read_text(encoding="utf-8")
    ids = [info.id for info in rule_infos()] + list(CABLE_RULES) + list(LAB_RULES)
    assert [rule for rule in ids if f"| `{rule}` |" not in text] == []


def test_the_cli_reference_is_current() -> None:
    assert (ROOT / "docs" / "reference" / "cli.md").read_text(encoding="utf-8") == cli_reference(), (
        "run `python -m cluster.cli_reference > docs/reference/cli.md`")


@pytest.mark.parametrize("verb", list(VERBS))
def test_every_verb_has_a_row_in_the_readme_and_a_section_in_the_cli_reference(verb: str) -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    [row] = [line for line in readme.splitlines() if line.startswith(f"| `{verb} ")]
    assert "](docs/guides/" in row, row
    assert f"## `{verb}`" in (ROOT / "docs" / "reference" / "cli.md").read_text(encoding="utf-8")


def test_the_cli_reference_lists_every_flag() -> None:
    """Every option of every verb's (and lab action's) parser is in the reference."""
    import argparse

    from cluster.cli import parser

    def options(command: argparse.ArgumentParser) -> set[str]:
        found = set()
        for action in command._actions:
            if isinstance(action, argparse._SubParsersAction):
                for sub in action.choices.values():
                    found |= options(sub)
            elif not isinstance(action, argparse._HelpAction):
                found |= set(action.option_strings)
        return found

    text = cli_reference()
    every = options(parser(None))
    assert {"--lldp", "--slice", "--collective", "--patch"} <= every
    assert sorted(option for option in every if f"`{option}`" not in text) == []
