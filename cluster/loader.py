"""Read a stack file safely, keeping the line of every key.

Hostile input is expected: size, nesting and alias expansion are bounded, duplicate keys are
reported (YAML would silently keep the last), and every problem becomes a SCHEMA finding.
"""

from __future__ import annotations

import difflib
import json
import re
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import yaml

from cluster import parts
from cluster.credentials import CREDENTIALS, PROJECT, plaintext_credentials
from cluster.findings import Finding, schema, shown
from cluster.inputs import Unreadable, read_bounded

CLUSTER_KEY = "gpu-cluster:cluster"
DESIGN_KEY = "gpu-cluster:design"
BOTH_KEYS = (f"both {CLUSTER_KEY} and {DESIGN_KEY} are set", "keep the design in one stack: remove one of them")
PROJECT_ROOT = Path(__file__).resolve().parent.parent
STACK_NAME = parts.STACK  # Pulumi's own stack-name character set
MAX_BYTES = 4 * 1024 * 1024
MAX_DEPTH = 40
MAX_NODES = 50_000  # a 64-pool stack file has a few thousand; YAML events and alias expansion count

_Loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


@dataclass
class Loaded:
    """A stack file read from disk: the cluster mapping (or None) and where each key sits."""

    stack: str
    source: Path | None
    data: dict[str, Any] | None
    lines: dict[str, int] = field(default_factory=dict)
    findings: list[Finding] = field(default_factory=list)
    key_line: int = 0  # line of `gpu-cluster:cluster`; paths are relative to it
    # gpu-cluster:part / design / core_stack as the stack file sets them (cluster.parts)
    settings: dict[str, Any] = field(default_factory=dict)
    design: str | None = None  # the stack whose design this stack deploys, when it names one

    def line_of(self, path: str) -> int:
        """The line of `path`, or of its nearest parent that has one."""
        while path:
            if path in self.lines:
                return self.lines[path]
            path = _parent(path)
        return self.key_line


def _parent(path: str) -> str:
    cut = max(path.rfind("."), path.rfind("["))
    return path[:cut] if cut > 0 else ""


def stack_path(ref: str) -> Path:
    """`prod` -> stacks/Pulumi.prod.yaml (in the working directory, else the checkout this package
    runs from); else a path. A name found in neither is the working directory's, so the message
    about a missing file names ./stacks/, never a folder of the installed package."""
    candidate = Path(ref)
    if candidate.suffix in {".yaml", ".yml", ".json"} or "/" in ref or candidate.exists():
        return candidate
    local = Path("stacks") / f"Pulumi.{ref}.yaml"
    project = PROJECT_ROOT / "stacks" / f"Pulumi.{ref}.yaml"
    return project if not local.exists() and project.exists() else local


def stack_name(source: Path) -> str:
    """Pulumi.prod.yaml -> prod; any other file -> its stem."""
    parts = source.name.split(".")
    if parts[0] == "Pulumi" and len(parts) >= 3:
        return ".".join(parts[1:-1])
    return source.stem


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


class _Budget:
    def __init__(self) -> None:
        self.nodes = 0


def _join(path: str, key: object) -> str:
    if isinstance(key, int):
        return f"{path}[{key}]"
    return f"{path}.{key}" if path else str(key)


def _to_python(
    node: yaml.Node,
    path: str,
    depth: int,
    budget: _Budget,
    lines: dict[str, int],
    findings: list[Finding],
    constructor: yaml.constructor.SafeConstructor,
    is_key: bool = False,
) -> Any:
    budget.nodes += 1
    if budget.nodes > MAX_NODES:
        raise _TooLarge(f"more than {MAX_NODES} YAML nodes (alias expansion counted)")
    if depth > MAX_DEPTH:
        raise _TooLarge(f"nesting deeper than {MAX_DEPTH} levels at {path or 'the top'}")
    lines.setdefault(path, node.start_mark.line + 1)
    if isinstance(node, yaml.MappingNode):
        result: dict[Any, Any] = {}
        # Keys written in this mapping, as opposed to those a merge (`<<: *pool`) brings in: a
        # written key overrides a merged one (YAML's merge rule); two written ones are a mistake.
        written = {id(key) for key, _ in node.value if key.tag != "tag:yaml.org,2002:merge"}
        written_seen: set[str] = set()
        constructor.flatten_mapping(node)
        for key_node, value_node in node.value:
            key = _to_python(key_node, path, depth + 1, budget, {}, findings, constructor, is_key=True)
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
            result[key_text] = _to_python(value_node, child, depth + 1, budget, lines, findings, constructor)
        return result
    if isinstance(node, yaml.SequenceNode):
        return [
            _to_python(item, _join(path, index), depth + 1, budget, lines, findings, constructor)
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


class _TooLarge(Exception):
    pass


def _describe(error: Exception) -> str:
    """One report line: the problem and where (YAML errors carry a mark), not the raw multi-line text."""
    problem = getattr(error, "problem", None) or str(error)
    mark = getattr(error, "problem_mark", None)
    where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
    return shown(" ".join(str(problem).split()), 300) + where


def _check_events(text: str) -> None:
    """Count parser events before composing: a file of a million tiny nodes is refused before
    it fills memory (composing builds the whole node tree first)."""
    depth = 0
    for events, event in enumerate(yaml.parse(text, Loader=_Loader), start=1):
        if events > MAX_NODES:
            raise _TooLarge(f"more than {MAX_NODES} YAML nodes")
        if isinstance(event, (yaml.MappingStartEvent, yaml.SequenceStartEvent)):
            depth += 1
            if depth > MAX_DEPTH:
                where = f" at line {event.start_mark.line + 1}" if event.start_mark else ""
                raise _TooLarge(f"nesting deeper than {MAX_DEPTH} levels{where}")
        elif isinstance(event, (yaml.MappingEndEvent, yaml.SequenceEndEvent)):
            depth -= 1


def _check_json(value: object, depth: int = 0, budget: _Budget | None = None) -> None:
    """The same bounds for a cluster value given as JSON text."""
    budget = budget or _Budget()
    budget.nodes += 1
    if budget.nodes > MAX_NODES:
        raise _TooLarge(f"more than {MAX_NODES} JSON values")
    if depth > MAX_DEPTH:
        raise _TooLarge(f"nesting deeper than {MAX_DEPTH} levels")
    children = value.values() if isinstance(value, dict) else value if isinstance(value, list) else ()
    for child in children:
        _check_json(child, depth + 1, budget)


class _DuplicateJsonKey(ValueError):
    pass


def _unique_pairs(pairs: list[tuple[str, object]]) -> dict[str, object]:
    """A JSON object whose keys are unique: json.loads would keep the last of two silently."""
    result: dict[str, object] = {}
    for key, value in pairs:
        if key in result:
            raise _DuplicateJsonKey(f"duplicate key `{shown(key)}`; JSON readers keep only the last")
        result[key] = value
    return result


def _decode_json(text: str) -> object:
    """JSON text (as `pulumi config set --path` may store it), bounded, every object's keys
    unique; raises ValueError."""
    try:
        value: object = json.loads(text, object_pairs_hook=_unique_pairs)
    except RecursionError as error:
        raise ValueError(f"nesting deeper than {MAX_DEPTH} levels") from error
    try:
        _check_json(value)
    except _TooLarge as error:
        raise ValueError(str(error)) from error
    return value


def load_stack(ref: str, follow: bool = True) -> Loaded:
    """Read STACK (name or path) and return its `gpu-cluster:cluster` mapping with key lines;
    a stack that names another's design (`gpu-cluster:design`) gets that design (`follow`)."""
    source = stack_path(ref)
    loaded = Loaded(stack=stack_name(source), source=source, data=None)
    hint_missing = "give a stack name from stacks/ (dev -> stacks/Pulumi.dev.yaml) or a path to a stack file"
    if not STACK_NAME.fullmatch(loaded.stack):
        # The stack name reaches build/<stack>/ and CI categories: Pulumi's own character set only.
        loaded.findings.append(schema("(file)", f"stack name {shown(loaded.stack)} is not a Pulumi stack name",
                                      "name the file Pulumi.<stack>.yaml with letters, digits, '-', '_' or '.'"))
        loaded.stack = "invalid"
        return loaded
    try:
        raw = read_bounded(source, MAX_BYTES, "stack file")
    except Unreadable as error:
        loaded.findings.append(schema("(file)", str(error), hint_missing))
        return loaded
    if len(raw) > MAX_BYTES:
        loaded.findings.append(schema("(file)", f"{source} is larger than {MAX_BYTES} bytes", "a stack file is a few kB"))
        return loaded
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as error:
        loaded.findings.append(
            schema("(file)", f"{source} is not UTF-8 text (byte {error.start})", "save the stack file as UTF-8 YAML")
        )
        return loaded
    try:
        _check_events(text)
        root = yaml.compose(text, Loader=_Loader)
    except _TooLarge as error:
        loaded.findings.append(schema("(file)", f"stack file too large: {error}", "remove anchors/aliases or nesting"))
        return loaded
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None)
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        problem = getattr(error, "problem", None) or str(error).splitlines()[0]
        loaded.findings.append(schema("(file)", f"YAML syntax error{where}: {problem}", "fix the YAML syntax"))
        if mark:
            loaded.lines["(file)"] = mark.line + 1  # so reports and CI annotations point at it
        return loaded
    except (ValueError, RecursionError) as error:
        loaded.findings.append(schema("(file)", f"unreadable YAML: {_describe(error)}", "fix the YAML syntax"))
        return loaded
    if root is None:
        loaded.findings.append(
            schema("(file)", f"{source} is empty", f"write `config: {{{CLUSTER_KEY}: {{name, target, node_pools}}}}`")
        )
        return loaded
    loaded.data = _cluster_mapping(root, loaded)
    design = loaded.settings.get("design")
    if follow and loaded.data is None and isinstance(design, str) and not loaded.findings:
        _follow(loaded, design)
    return loaded


def _follow(loaded: Loaded, design: str) -> None:
    """Take the design of stack `design` (one step: a design stack names no other design)."""
    referenced = load_stack(design, follow=False)
    if referenced.data is None and referenced.settings.get("design"):
        loaded.findings.append(schema(f"config.{DESIGN_KEY}", f"stack {design} names a design itself",
                                      f"point {DESIGN_KEY} at the stack that holds {CLUSTER_KEY}"))
        return
    loaded.design = referenced.stack
    loaded.source, loaded.data, loaded.lines = referenced.source, referenced.data, referenced.lines
    loaded.key_line = referenced.key_line
    loaded.findings.extend(referenced.findings)


def from_config(stack: str, cluster: object | None, settings: dict[str, Any]) -> Loaded:
    """The design a Pulumi stack deploys: its own `gpu-cluster:cluster`, or the design of the
    stack file `gpu-cluster:design` names (cluster.parts); `settings` are the part keys."""
    problems = parts.check_settings(settings)
    design = settings.get("design")
    if cluster is not None and design is not None:
        problems.append(schema(f"config.{DESIGN_KEY}", *BOTH_KEYS))
    loaded = Loaded(stack=stack, source=None, data=None)
    if cluster is not None or design is None:
        loaded = from_mapping(stack, cluster)
    elif not problems:
        _follow(loaded, str(design))
    loaded.settings = dict(settings)
    loaded.findings.extend(problems)
    return loaded


def _cluster_mapping(root: yaml.Node, loaded: Loaded) -> dict[str, Any] | None:
    hint = f"a stack file is a mapping `config:` holding `{CLUSTER_KEY}:` (name, target, node_pools)"
    budget = _Budget()
    constructor = yaml.constructor.SafeConstructor()
    top_lines: dict[str, int] = {}
    try:
        document = _to_python(root, "", 0, budget, top_lines, loaded.findings, constructor)
    except _TooLarge as error:
        loaded.findings.append(schema("(file)", f"stack file too large: {error}", "remove anchors/aliases or nesting"))
        return None
    except (yaml.YAMLError, ValueError, TypeError, RecursionError) as error:
        loaded.findings.append(schema("(file)", f"unreadable YAML value: {_describe(error)}", "fix the value"))
        return None
    if not isinstance(document, dict):
        loaded.findings.append(schema("(file)", f"the top level is a {type(document).__name__}, not a mapping", hint))
        return None
    config = document.get("config")
    setting_lines: dict[str, int] = {}
    if isinstance(config, dict):
        for key, variable in plaintext_credentials(config):  # never echo the value; also beside a design
            setting_lines[f"config.{key}"] = top_lines.get(f"config.{key}", 1)
            loaded.findings.append(schema(f"config.{key}", f"{key} is set in plain text in the stack file",
                                          f"remove it (`pulumi config rm {key}`) and set it with `pulumi config set "
                                          f"--secret {key}`, or export {variable}"))
        loaded.settings = {key: config[f"gpu-cluster:{key}"] for key in parts.SETTINGS if f"gpu-cluster:{key}" in config}
        for finding in parts.check_settings(loaded.settings):
            setting_lines[finding.path] = top_lines.get(finding.path, 1)
            loaded.findings.append(finding)
        loaded.lines.update(setting_lines)
        if CLUSTER_KEY in config and DESIGN_KEY in config:
            loaded.findings.append(schema(f"config.{DESIGN_KEY}", *BOTH_KEYS))
        if CLUSTER_KEY not in config and isinstance(config.get(DESIGN_KEY), str):
            return None  # load_stack follows the design
    if not isinstance(config, dict) or CLUSTER_KEY not in config:
        known = {f"{PROJECT}:{key}" for key in (*parts.SETTINGS, *CREDENTIALS, "artifacts_dir")}
        keys = [str(key) for key in config if str(key) not in known] if isinstance(config, dict) else []
        close = difflib.get_close_matches(CLUSTER_KEY, keys, n=1, cutoff=0.75)
        if close:
            loaded.lines["config"] = top_lines.get(f"config.{close[0]}", 1)
            loaded.findings.append(schema("config", f"no `config.{CLUSTER_KEY}` key found; did you mean "
                                          f"`{shown(close[0])}` (line {loaded.lines['config']})?",
                                          f"rename `{shown(close[0])}` to `{CLUSTER_KEY}`"))
        else:
            loaded.findings.append(schema("config", f"no `config.{CLUSTER_KEY}` key found", hint))
        return None
    cluster = config[CLUSTER_KEY]
    loaded.key_line = top_lines.get(f"config.{CLUSTER_KEY}", 1)
    prefix = f"config.{CLUSTER_KEY}."
    loaded.lines = {path[len(prefix):]: line for path, line in top_lines.items() if path.startswith(prefix)}
    loaded.lines.update(setting_lines)
    # Findings name paths inside the cluster mapping, like every other finding.
    loaded.findings = [
        replace(finding, path=finding.path[len(prefix):]) if finding.path.startswith(prefix) else finding
        for finding in loaded.findings
    ]
    if isinstance(cluster, str):  # `pulumi config set --path` can store JSON text
        try:
            cluster = _decode_json(cluster)
        except _DuplicateJsonKey as error:
            loaded.findings.append(schema(CLUSTER_KEY, f"the JSON text holds a {error}", "remove one of the two entries"))
            return None
        except ValueError:
            pass  # not JSON: reported below as a string where a mapping belongs
    if not isinstance(cluster, dict):
        loaded.findings.append(
            schema(CLUSTER_KEY, f"`{CLUSTER_KEY}` is a {type(cluster).__name__}, not a mapping", hint)
        )
        return None
    return cluster


def from_mapping(stack: str, cluster: object) -> Loaded:
    """Wrap an already-parsed `gpu-cluster:cluster` value (Pulumi config, tests)."""
    loaded = Loaded(stack=stack, source=None, data=None)
    if isinstance(cluster, str):
        try:
            cluster = _decode_json(cluster)
        except _DuplicateJsonKey as error:
            loaded.findings.append(schema(CLUSTER_KEY, f"the JSON text holds a {error}", "remove one of the two entries"))
            return loaded
        except ValueError as error:
            loaded.findings.append(schema(CLUSTER_KEY, f"not JSON: {error}", "set the key as structured config"))
            return loaded
    if not isinstance(cluster, dict):
        loaded.findings.append(
            schema(CLUSTER_KEY, f"`{CLUSTER_KEY}` is a {type(cluster).__name__}, not a mapping", "give a mapping")
        )
        return loaded
    loaded.data = cluster
    return loaded
