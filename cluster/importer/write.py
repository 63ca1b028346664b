"""The imported design as a stack file: YAML a person reads and edits, with comments.

Keys in the contract's order as the mapping holds them; a switch, a NIC set or a list of
scalars on one line (`leaf: {switch: SN5600, port_gbps: 400}`), pools as a block list. A string
is written plain only where YAML 1.1 and 1.2 both read it back as that string (`7060X6` and
`no` are quoted). Comments: a header (where the data came from, what it could not say, the
cabling that fits no regular design) and one at the end of a key's line where there is one.
"""

from __future__ import annotations

import json
import re
import textwrap
from collections.abc import Mapping
from typing import Any

PLAIN = re.compile(r"^[A-Za-z_][A-Za-z0-9_.-]*$")
YAML11_WORDS = {"y", "n", "yes", "no", "on", "off", "true", "false", "null", "~"}
WIDTH = 100


def scalar(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return str(value)
    text = str(value)
    if PLAIN.match(text) and text.lower() not in YAML11_WORDS:
        return text
    return json.dumps(text)


def _flow(value: object) -> str | None:
    """One-line form of a flat mapping or a list of scalars (None when it is not flat)."""
    if isinstance(value, Mapping):
        if any(isinstance(item, Mapping | list) for item in value.values()):
            return None
        return "{" + ", ".join(f"{key}: {scalar(item)}" for key, item in value.items()) + "}"
    if isinstance(value, list):
        if any(isinstance(item, Mapping | list) for item in value):
            return None
        return "[" + ", ".join(scalar(item) for item in value) + "]"
    return scalar(value)


def _comment(line: str, comment: str | None) -> str:
    return f"{line}  # {comment}" if comment else line


def _emit(value: Mapping[str, Any], indent: int, path: str, comments: Mapping[str, str], lines: list[str]) -> None:
    pad = " " * indent
    for key, item in value.items():
        here = f"{path}.{key}" if path else key
        flow = _flow(item)
        if flow is not None and (len(pad) + len(key) + len(flow) + 2 <= WIDTH or not isinstance(item, list)):
            lines.append(_comment(f"{pad}{key}: {flow}", comments.get(here)))
            continue
        if isinstance(item, list) and all(not isinstance(entry, Mapping) for entry in item):
            lines.append(_comment(f"{pad}{key}:", comments.get(here)))
            lines.extend(f"{pad}  - {scalar(entry)}" for entry in item)
            continue
        lines.append(_comment(f"{pad}{key}:", comments.get(here)))
        if isinstance(item, Mapping):
            _emit(item, indent + 2, here, comments, lines)
            continue
        for entry in item:
            name = entry.get("name", "") if isinstance(entry, Mapping) else ""
            block: list[str] = []
            _emit(entry, indent + 4, f"pool {name}" if key == "node_pools" else here, comments, block)
            block[0] = f"{pad}  - {block[0].lstrip()}"
            lines.extend(block)


def _wrapped(text: str) -> list[str]:
    """One list item as comment lines of at most WIDTH characters."""
    parts = textwrap.wrap(text, WIDTH - 6, break_long_words=False, break_on_hyphens=False) or [""]
    return [f"#   - {parts[0]}", *(f"#     {part}" for part in parts[1:])]


def stack_text(mapping: Mapping[str, Any], comments: Mapping[str, str], header: list[str],
               sections: list[tuple[str, list[str]]]) -> str:
    """The stack file: header lines, then each (title, items) section as a comment list, then
    the `gpu-cluster:cluster` value."""
    lines = [f"# {line}" if line else "#" for line in header]
    for title, items in sections:
        if items:
            lines.append(f"# {title}")
            for item in items:
                lines.extend(_wrapped(item))
    body: list[str] = []
    _emit(mapping, 4, "", comments, body)
    return "\n".join([*lines, "config:", "  gpu-cluster:cluster:", *body]) + "\n"
