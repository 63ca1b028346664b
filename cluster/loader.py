"""Load a stack: find its file, read it (cluster.yamlfile: bounded, every key's line), take its
`gpu-cluster:cluster` mapping and its part settings, refuse credentials in plain text, and follow
a stack that names another's design. Every problem becomes a SCHEMA finding.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import yaml

from cluster import yamlfile
from cluster.clouds import clouds
from cluster.credentials import CREDENTIALS, PROJECT, plaintext_credentials
from cluster.findings import Finding, schema, shown
from cluster.inputs import Unreadable, read_bounded
from cluster.settings import SETTINGS, STACK, check_settings

CLUSTER_KEY = "gpu-cluster:cluster"
DESIGN_KEY = "gpu-cluster:design"
# The provider settings a stack file may set beside the design: the cluster's resources use an
# explicit provider built from `cloud`, so these are compared with it (cluster.resolve), not used.
PROVIDER_KEYS = tuple(key for entry in clouds().values() for key in entry.provider_settings)
BOTH_KEYS = (f"both {CLUSTER_KEY} and {DESIGN_KEY} are set", "keep the design in one stack: remove one of them")
PROJECT_ROOT = Path(__file__).resolve().parent.parent
# The example stacks inside the package (cluster/examples is the checkout's stacks/; the wheel holds
# the files): a name found nowhere else, as after `pip install .` outside a clone.
EXAMPLES = Path(__file__).resolve().parent / "examples"
STACK_NAME = STACK  # Pulumi's own stack-name character set
MAX_BYTES = 4 * 1024 * 1024
MAX_NODES = yamlfile.MAX_NODES


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
    # PROVIDER_KEYS as the stack sets them (`aws:region: us-east-1`), compared with `cloud`
    provider_config: dict[str, str] = field(default_factory=dict)

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
    runs from, else the example stacks the package holds); else a path. A name found in none is the
    working directory's, so the message about a missing file names ./stacks/, never a folder of the
    installed package."""
    candidate = Path(ref)
    if candidate.suffix in {".yaml", ".yml", ".json"} or "/" in ref or candidate.exists():
        return candidate
    local = Path("stacks") / f"Pulumi.{ref}.yaml"
    for found in (local, PROJECT_ROOT / "stacks" / f"Pulumi.{ref}.yaml", EXAMPLES / f"Pulumi.{ref}.yaml"):
        if found.is_file():
            return found
    return local


def stack_name(source: Path) -> str:
    """Pulumi.prod.yaml -> prod; any other file -> its stem."""
    parts = source.name.split(".")
    if parts[0] == "Pulumi" and len(parts) >= 3:
        return ".".join(parts[1:-1])
    return source.stem


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
        yamlfile.check_events(text)
        root = yaml.compose(text, Loader=yamlfile.SAFE_LOADER)
    except yamlfile.TooLarge as error:
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
        loaded.findings.append(schema("(file)", f"unreadable YAML: {yamlfile.describe(error)}", "fix the YAML syntax"))
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


def from_config(stack: str, cluster: object | None, settings: dict[str, Any],
                provider_config: dict[str, str] | None = None) -> Loaded:
    """The design a Pulumi stack deploys: its own `gpu-cluster:cluster`, or the design of the
    stack file `gpu-cluster:design` names (cluster.parts); `settings` are the part keys,
    `provider_config` the stack's PROVIDER_KEYS."""
    problems = check_settings(settings)
    design = settings.get("design")
    if cluster is not None and design is not None:
        problems.append(schema(f"config.{DESIGN_KEY}", *BOTH_KEYS))
    loaded = Loaded(stack=stack, source=None, data=None)
    if cluster is not None or design is None:
        loaded = from_mapping(stack, cluster)
    elif not problems:
        _follow(loaded, str(design))
    loaded.settings = dict(settings)
    loaded.provider_config = dict(provider_config or {})
    loaded.findings.extend(problems)
    return loaded


def _cluster_mapping(root: yaml.Node, loaded: Loaded) -> dict[str, Any] | None:
    hint = f"a stack file is a mapping `config:` holding `{CLUSTER_KEY}:` (name, target, node_pools)"
    budget = yamlfile.Budget()
    constructor = yaml.constructor.SafeConstructor()
    top_lines: dict[str, int] = {}
    try:
        document = yamlfile.to_python(root, "", 0, budget, top_lines, loaded.findings, constructor)
    except yamlfile.TooLarge as error:
        loaded.findings.append(schema("(file)", f"stack file too large: {error}", "remove anchors/aliases or nesting"))
        return None
    except (yaml.YAMLError, ValueError, TypeError, RecursionError) as error:
        loaded.findings.append(schema("(file)", f"unreadable YAML value: {yamlfile.describe(error)}", "fix the value"))
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
        loaded.settings = {key: config[f"gpu-cluster:{key}"] for key in SETTINGS if f"gpu-cluster:{key}" in config}
        loaded.provider_config = {key: str(config[key]) for key in PROVIDER_KEYS
                                  if isinstance(config.get(key), str | int | float)}
        setting_lines.update({f"config.{key}": top_lines.get(f"config.{key}", 1) for key in loaded.provider_config})
        for finding in check_settings(loaded.settings):
            setting_lines[finding.path] = top_lines.get(finding.path, 1)
            loaded.findings.append(finding)
        loaded.lines.update(setting_lines)
        if CLUSTER_KEY in config and DESIGN_KEY in config:
            loaded.findings.append(schema(f"config.{DESIGN_KEY}", *BOTH_KEYS))
        if CLUSTER_KEY not in config and isinstance(config.get(DESIGN_KEY), str):
            return None  # load_stack follows the design
    if not isinstance(config, dict) or CLUSTER_KEY not in config:
        known = {f"{PROJECT}:{key}" for key in (*SETTINGS, *CREDENTIALS, "artifacts_dir")}
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
            cluster = yamlfile.decode_json(cluster)
        except yamlfile.DuplicateJsonKey as error:
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
            cluster = yamlfile.decode_json(cluster)
        except yamlfile.DuplicateJsonKey as error:
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
