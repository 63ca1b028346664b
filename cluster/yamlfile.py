"""A YAML document read safely, keeping the line of every key (a stack file is hostile input):
size, nesting and alias expansion bounded, duplicate keys reported (YAML would silently keep the
last), YAML 1.1's surprises refused with the fix; and the same bounds for JSON text given in
its place (`pulumi config set --path` can store a value as JSON)."""

from __future__ import annotations

import json
import re
from typing import Any

import yaml

from cluster.credentials import CREDENTIALS, PROJECT
from cluster.findings import Finding, schema, shown

MAX_DEPTH = 40
MAX_NODES = 50_000  # a 64-pool stack file has a few thousand; YAML events and alias expansion count
SAFE_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


# YAML 1.1, which the stack file is read as, turns some plain scalars into values nobody meant:
# `1:1` is the base-60 number 61, `on` and `no` are booleans, `010` is the octal number 8. Pulumi's
# own reader (YAML 1.2) reads several of them differently again, so a scalar of these forms is
# refused with the fix instead of guessed; only a ratio key takes `N:M`, as the ratio it means.
INT_TAG, FLOAT_TAG, BOOL_TAG, STR_TAG = (f"tag:yaml.org,2002:{kind}" for kind in ("int", "float", "bool", "str"))
RATIO_PATH = re.compile(r"(^|\.)max_(degraded_)?oversubscription(\.(leaf|spine|core))?$")
LEADING_ZERO = re.compile(r"^([-+]?)0[0-7_]+$")
UNDERSCORED = re.compile(r"^[-+]?[0-9][0-9_]*_[0-9_]*(\.[0-9_]*)?$")
TEXT_IN_1_1 = re.compile(r"^[-+]?(0o[0-7_]+|([0-9]+(\.[0-9]*)?|\.[0-9]+)[eE][-+]?[0-9]+)$")  # YAML 1.2 numbers
QUOTE_IT = "quote it ('{text}') if it is meant as text"


def _yaml11_surprise(node: yaml.ScalarNode, value: object) -> tuple[str, str] | None:
    """(message, hint) for a plain scalar whose YAML 1.1 reading differs from what it looks like
    (or from what a YAML 1.2 reader such as Pulumi's makes of it)."""
    text = node.value
    quote = QUOTE_IT.format(text=shown(text))
    if node.tag in (INT_TAG, FLOAT_TAG) and ":" in text:
        return (f"`{shown(text)}` is a base-60 number in YAML 1.1 (read as {shown(value)}), not a ratio or a time",
                f"write the number you mean, or {quote}")
    if node.tag == BOOL_TAG and text.lower() not in ("true", "false"):
        return (f"`{shown(text)}` is the boolean {str(value).lower()} in YAML 1.1, not the word",
                f"write true or false, or {quote}")
    leading_zero = LEADING_ZERO.match(text)
    if node.tag == INT_TAG and leading_zero:
        decimal = leading_zero.group(1) + (text.lstrip("+-").lstrip("0_").replace("_", "") or "0")
        return (f"`{shown(text)}` is the octal number {shown(value)} in YAML 1.1 (a leading zero)",
                f"write {shown(decimal)} without the leading zero, or {quote}")
    if node.tag in (INT_TAG, FLOAT_TAG) and UNDERSCORED.match(text):
        return (f"`{shown(text)}` is the number {shown(value)} in YAML 1.1 but text in YAML 1.2 (Pulumi's reader)",
                f"write it without underscores ({shown(value)})")
    if node.tag == STR_TAG and TEXT_IN_1_1.match(text):
        return (f"`{shown(text)}` is text in YAML 1.1, though YAML 1.2 reads it as a number",
                "write the number in plain decimal (15, 1000, 0.5)")
    return None


def _plain_scalar(node: yaml.ScalarNode, path: str, value: object, findings: list[Finding]) -> object:
    """A plain (unquoted) scalar of the cluster's keys, checked for YAML 1.1 surprises."""
    if node.style or not path.startswith(f"config.{PROJECT}:"):  # the C loader gives plain as "", not None
        return value  # a quoted scalar is the text written; other projects' keys are theirs
    if any(path.startswith(f"config.{PROJECT}:{key}") for key in CREDENTIALS):
        return value  # a credential is never shown, nor judged here
    if node.tag in (INT_TAG, FLOAT_TAG) and ":" in node.value and RATIO_PATH.search(path):
        return node.value  # `1:1` on a ratio key is the ratio it means (stackfile.Ratio reads `N:M`)
    surprise = _yaml11_surprise(node, value)
    if surprise is not None:
        findings.append(schema(path, *surprise))
    return value


class Budget:
    def __init__(self) -> None:
        self.nodes = 0


def _join(path: str, key: object) -> str:
    if isinstance(key, int):
        return f"{path}[{key}]"
    return f"{path}.{key}" if path else str(key)


def to_python(
    node: yaml.Node,
    path: str,
    depth: int,
    budget: Budget,
    lines: dict[str, int],
    findings: list[Finding],
    constructor: yaml.constructor.SafeConstructor,
    is_key: bool = False,
) -> Any:
    budget.nodes += 1
    if budget.nodes > MAX_NODES:
        raise TooLarge(f"more than {MAX_NODES} YAML nodes (alias expansion counted)")
    if depth > MAX_DEPTH:
        raise TooLarge(f"nesting deeper than {MAX_DEPTH} levels at {path or 'the top'}")
    lines.setdefault(path, node.start_mark.line + 1)
    if isinstance(node, yaml.MappingNode):
        result: dict[Any, Any] = {}
        # Keys written in this mapping, as opposed to those a merge (`<<: *pool`) brings in: a
        # written key overrides a merged one (YAML's merge rule); two written ones are a mistake.
        written = {id(key) for key, _ in node.value if key.tag != "tag:yaml.org,2002:merge"}
        written_seen: set[str] = set()
        constructor.flatten_mapping(node)
        for key_node, value_node in node.value:
            key = to_python(key_node, path, depth + 1, budget, {}, findings, constructor, is_key=True)
            if not isinstance(key, (str, int, float, bool)) or key is None:
                findings.append(
                    schema(path or "(top)", f"a mapping key must be a scalar, found {type(key).__name__}", "quote the key")
                )
                continue
            key_text = str(key)
            child = _join(path, key_text)
            if id(key_node) in written:
                duplicate = key_text in written_seen
                written_seen.add(key_text)
            else:
                duplicate = False  # merged keys: the later merge source or a written key wins
            if duplicate:
                findings.append(
                    schema(
                        _join(path, shown(key_text)),
                        f"duplicate key `{shown(key_text)}` (line {key_node.start_mark.line + 1}); "
                        "YAML would keep only the last",
                        "remove one of the two entries",
                    )
                )
            lines[child] = key_node.start_mark.line + 1
            result[key_text] = to_python(value_node, child, depth + 1, budget, lines, findings, constructor)
        return result
    if isinstance(node, yaml.SequenceNode):
        return [
            to_python(item, _join(path, index), depth + 1, budget, lines, findings, constructor)
            for index, item in enumerate(node.value)
        ]
    try:
        value = constructor.construct_object(node, deep=True)
    except (yaml.YAMLError, ValueError, TypeError):
        if any(path.startswith(f"config.{PROJECT}:{key}") for key in CREDENTIALS):
            # The error would quote the value: a credential is never shown, on any path.
            raise ValueError(f"the value of {path} is not plain YAML (not shown: it is a credential); set it "
                             f"with `pulumi config set --secret`") from None
        raise
    if isinstance(node, yaml.ScalarNode) and not is_key:
        return _plain_scalar(node, path, value, findings)
    return value


class TooLarge(Exception):
    pass


def describe(error: Exception) -> str:
    """One report line: the problem and where (YAML errors carry a mark), not the raw multi-line text."""
    problem = getattr(error, "problem", None) or str(error)
    mark = getattr(error, "problem_mark", None)
    where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
    return shown(" ".join(str(problem).split()), 300) + where


def check_events(text: str) -> None:
    """Count parser events before composing: a file of a million tiny nodes is refused before
    it fills memory (composing builds the whole node tree first)."""
    depth = 0
    for events, event in enumerate(yaml.parse(text, Loader=SAFE_LOADER), start=1):
        if events > MAX_NODES:
            raise TooLarge(f"more than {MAX_NODES} YAML nodes")
        if isinstance(event, (yaml.MappingStartEvent, yaml.SequenceStartEvent)):
            depth += 1
            if depth > MAX_DEPTH:
                where = f" at line {event.start_mark.line + 1}" if event.start_mark else ""
                raise TooLarge(f"nesting deeper than {MAX_DEPTH} levels{where}")
        elif isinstance(event, (yaml.MappingEndEvent, yaml.SequenceEndEvent)):
            depth -= 1


def check_json(value: object, depth: int = 0, budget: Budget | None = None) -> None:
    """The same bounds for a cluster value given as JSON text."""
    budget = budget or Budget()
    budget.nodes += 1
    if budget.nodes > MAX_NODES:
        raise TooLarge(f"more than {MAX_NODES} JSON values")
    if depth > MAX_DEPTH:
        raise TooLarge(f"nesting deeper than {MAX_DEPTH} levels")
    children = value.values() if isinstance(value, dict) else value if isinstance(value, list) else ()
    for child in children:
        check_json(child, depth + 1, budget)


class DuplicateJsonKey(ValueError):
    pass


def _unique_pairs(pairs: list[tuple[str, object]]) -> dict[str, object]:
    """A JSON object whose keys are unique: json.loads would keep the last of two silently."""
    result: dict[str, object] = {}
    for key, value in pairs:
        if key in result:
            raise DuplicateJsonKey(f"duplicate key `{shown(key)}`; JSON readers keep only the last")
        result[key] = value
    return result


def decode_json(text: str) -> object:
    """JSON text (as `pulumi config set --path` may store it), bounded, every object's keys
    unique; raises ValueError."""
    try:
        value: object = json.loads(text, object_pairs_hook=_unique_pairs)
    except RecursionError as error:
        raise ValueError(f"nesting deeper than {MAX_DEPTH} levels") from error
    try:
        check_json(value)
    except TooLarge as error:
        raise ValueError(str(error)) from error
    return value
