"""The CLI reference (docs/reference/cli.md), generated from the argparse parser of cluster/cli.py:
every verb (and every `lab` action) with its usage line and every argument, its choices, default
and help. A test keeps the file current.

    python -m cluster.cli_reference > docs/reference/cli.md
"""

from __future__ import annotations

import argparse

from cluster.cli import VERBS, parser

DOC = "docs/reference/cli.md"
PROG = "python -m cluster"
INTRO = f"""# CLI: every verb and flag

Generated from the argument parser (`cluster/cli.py` and `cluster/commands/`) by
`python -m cluster.cli_reference > docs/reference/cli.md` (a test fails when it is out of date).
`{PROG} VERB ...` and `gpu-cluster VERB ...` are the same command. STACK is a stack name
(`dev` -> `stacks/Pulumi.dev.yaml`, then the package's examples) or a path to a stack file.
Exit codes everywhere: 0 clean, 1 findings at or above `policy.fail_on`, 2 unreadable input, SCHEMA
failures and usage errors; bad input never prints a traceback. Before a verb, `--version` prints the
version and `--help` lists the verbs; after one, `--help` shows its arguments.
What each verb is for, with worked examples: the [guides](../../README.md#where-to-go-next).
"""


def _cell(text: str) -> str:
    return " ".join(text.split()).replace("|", "\\|")


def _subparsers(command: argparse.ArgumentParser) -> argparse._SubParsersAction[argparse.ArgumentParser] | None:
    return next((action for action in command._actions if isinstance(action, argparse._SubParsersAction)), None)


def _usage(command: argparse.ArgumentParser) -> str:
    formatter = argparse.HelpFormatter(command.prog, width=100_000)
    formatter.add_usage(command.usage, command._actions, command._mutually_exclusive_groups, prefix="")
    return formatter.format_help().strip()


def _argument(action: argparse.Action) -> tuple[str, str, str, str]:
    """(argument, values, default, meaning) of one argument."""
    name = ", ".join(f"`{option}`" for option in action.option_strings) or f"`{action.dest}`"
    if action.choices is not None and not isinstance(action, argparse._SubParsersAction):
        values = " \\| ".join(f"`{choice}`" for choice in action.choices)
    elif action.nargs == 0:
        values = "(a flag)"
    else:
        metavar = action.metavar if isinstance(action.metavar, str) else action.dest.upper()
        values = f"`{metavar}`" + (" ..." if action.nargs in ("*", "+", argparse.REMAINDER) else "")
    default = action.default
    shown = "" if default in (None, False, argparse.SUPPRESS) or action.nargs == 0 else f"`{default}`"
    meaning = (action.help or "") % {**vars(action), "prog": ""} if action.help else ""
    return name, values, shown, _cell(meaning)


def _section(command: argparse.ArgumentParser, title: str, summary: str, level: str) -> list[str]:
    lines = [f"{level} {title}\n", f"{_cell(summary)}\n" if summary else "", "```", _usage(command), "```", ""]
    arguments = [action for action in command._actions
                 if not isinstance(action, (argparse._HelpAction, argparse._SubParsersAction))]
    if arguments:
        lines += ["| argument | values | default | meaning |", "|---|---|---|---|"]
        lines += ["| " + " | ".join(_argument(action)) + " |" for action in arguments]
        lines.append("")
    nested = _subparsers(command)
    if nested is not None:
        helps = {choice.dest: choice.help or "" for choice in nested._choices_actions}
        for name, sub in nested.choices.items():
            lines += _section(sub, f"`{title.strip('`')} {name}`", helps.get(name, ""), level + "#")
    return lines


def cli_reference() -> str:
    """docs/reference/cli.md as text."""
    root = parser(None, prog=PROG)
    verbs = _subparsers(root)
    assert verbs is not None
    lines = [INTRO, "| verb | what it does |", "|---|---|"]
    lines += [f"| [`{verb}`](#{verb}) | {_cell(summary)} |" for verb, summary in VERBS.items()]
    lines.append("")
    for verb, summary in VERBS.items():
        lines += _section(verbs.choices[verb], f"`{verb}`", summary, "##")
    return "\n".join(lines).rstrip("\n") + "\n"


if __name__ == "__main__":
    print(cli_reference(), end="")
