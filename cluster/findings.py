"""Findings: what every rule, the loader and the schema check report, in one shape."""

from __future__ import annotations

import enum
from dataclasses import dataclass, replace


class Severity(enum.IntEnum):
    """Ordered so that `severity >= threshold` reads naturally."""

    INFO = 0
    WARNING = 1
    ERROR = 2

    def __str__(self) -> str:
        return self.name.lower()

    @classmethod
    def parse(cls, text: str) -> Severity:
        return cls[text.upper()]


@dataclass(frozen=True)
class Finding:
    """One result: rule id, severity, config path, message (expected vs found), hint."""

    rule: str
    severity: Severity
    path: str
    message: str
    hint: str
    suppressed: bool = False

    def __post_init__(self) -> None:
        # Text that came from a device or a file (a neighbor name, a key) must not forge a report
        # line, a CI workflow command or a terminal escape in any output format.
        for name in ("path", "message", "hint"):
            object.__setattr__(self, name, printable(getattr(self, name)))

    def as_suppressed(self) -> Finding:
        return replace(self, severity=Severity.INFO, suppressed=True)

    def to_dict(self) -> dict[str, object]:
        data: dict[str, object] = {
            "rule": self.rule,
            "severity": str(self.severity),
            "path": self.path,
            "message": self.message,
            "hint": self.hint,
        }
        if self.suppressed:
            data["suppressed"] = True
        return data

    def sort_key(self) -> tuple[int, str, str, str]:
        return (-int(self.severity), self.rule, self.path, self.message)


def printable(text: str) -> str:
    """`text` with every character that is not printable (newlines, escapes, bidi controls)
    written as a visible escape: one line, shown as it is."""
    if text.isprintable():
        return text
    return "".join(ch if ch.isprintable() else (f"\\x{ord(ch):02x}" if ord(ch) < 0x100 else f"\\u{ord(ch):04x}")
                   for ch in text)


def schema(path: str, message: str, hint: str) -> Finding:
    """A SCHEMA finding: input that cannot be read or does not fit the contract."""
    return Finding("SCHEMA", Severity.ERROR, path, message, hint)


def safe_repr(value: object) -> str:
    """repr() that never fails nor floods: an integer of thousands of digits is described, not
    written out (Python refuses to convert one over 4,300 digits)."""
    if isinstance(value, int) and not isinstance(value, bool) and value.bit_length() > 200:
        return f"an integer of about {int(value.bit_length() * 0.30103) + 1:,} digits"
    return repr(value)


def shown(value: object, limit: int = 40) -> str:
    """User input as it may appear in a message: one printable line, at most `limit` characters.

    Keys and values from a hostile file must not break a report line, a CI annotation or a
    terminal (newlines, ANSI escapes, bidi controls), nor flood it.
    """
    text = value if isinstance(value, str) else safe_repr(value)
    if text and text.isprintable() and len(text) <= limit:
        return text
    quoted = repr(text)
    return quoted if len(quoted) <= limit else quoted[: limit - 3] + "..."


#: Rules whose errors make the outputs impossible, and why: suppressing them changes nothing, and
#: the finding says so.
UNSUPPRESSIBLE_BECAUSE = {
    "ADDR-POOL": "without these addresses nothing can be rendered or deployed",
    "CLOUD-PLACEMENT": "the provider refuses this group at deploy",
}
UNSUPPRESSIBLE = frozenset(UNSUPPRESSIBLE_BECAUSE)


def apply_policy(findings: list[Finding], suppress: tuple[str, ...]) -> list[Finding]:
    """Suppressed rules stay visible as `info` with `suppressed: true`; output is sorted."""
    result = [_suppressed(finding) if finding.rule in suppress else finding for finding in findings]
    return sorted(result, key=Finding.sort_key)


def _suppressed(finding: Finding) -> Finding:
    if finding.rule not in UNSUPPRESSIBLE or finding.severity < Severity.ERROR:
        return finding.as_suppressed()
    return replace(finding, hint=f"{finding.hint} ({finding.rule} cannot be suppressed: "
                                 f"{UNSUPPRESSIBLE_BECAUSE[finding.rule]})")
