"""GitHub Actions workflow commands: one `::error` / `::warning` / `::notice` line per finding.

Escaping follows the runner's rules (actions/toolkit `command.ts`): in the message `%`, CR and LF
are percent-encoded; in properties also `:` and `,`. So a hostile key or path can neither end the
annotation early nor start a second workflow command on a new line. The stack file's path is
shown escaped besides (`printable`): a terminal escape or a bidi control in it reaches no log.
"""

from __future__ import annotations

from collections import Counter

from cluster.findings import Finding, Severity, printable
from cluster.formats.location import display_path, line_of
from cluster.pipeline import Result
from cluster.words import counted

COMMANDS = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFO: "notice"}


def escape_data(text: str) -> str:
    """The message part of a workflow command."""
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(text: str) -> str:
    """A `key=value` property of a workflow command."""
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


def annotation(result: Result, finding: Finding) -> str:
    """One workflow command for one finding, pointing at its line in the stack file."""
    properties = []
    source = result.loaded.source
    if source is not None:
        properties.append(("file", printable(display_path(source))))
        line = line_of(result, finding.path)
        if line > 0:
            properties.append(("line", str(line)))
    suffix = " (suppressed)" if finding.suppressed else ""
    properties.append(("title", f"{finding.rule}{suffix} at {finding.path}"))
    listed = ",".join(f"{key}={escape_property(value)}" for key, value in properties)
    message = f"{finding.message}\nhint: {finding.hint}"
    return f"::{COMMANDS[finding.severity]} {listed}::{escape_data(message)}"


def to_github(result: Result) -> str:
    """Every finding as an annotation, then a one-line verdict for the log."""
    lines = [annotation(result, finding) for finding in result.findings]
    counts = Counter(str(f.severity) for f in result.findings if not f.suppressed)
    verdict = "OK" if result.ok else "FAILED"
    lines.append(
        f"gpu-cluster {escape_data(result.stack)}: {verdict} ({counted(counts.get('error', 0), 'error')}, "
        f"{counted(counts.get('warning', 0), 'warning')}, exit {result.exit_code})"
    )
    return "\n".join(lines)
