"""Device credentials gpu-cluster knows by name. They may only be Pulumi secrets
(`pulumi config set --secret gpu-cluster:<key>`, stored as `{secure: <ciphertext>}`) or
environment variables; nothing gpu-cluster renders or prints ever contains them.

A stack file may still hold one in plain text (a SCHEMA finding that never shows it). Its value
can then turn up in another finding too, written elsewhere in the file as a key, say: `redact`
takes it out of every finding."""

from __future__ import annotations

import os
import re
from collections.abc import Collection, Mapping
from dataclasses import dataclass

import yaml

from cluster.findings import printable, shown

PROJECT = "gpu-cluster"
# config key (under gpu-cluster:) -> the environment variable that may carry it instead
CREDENTIALS: dict[str, str] = {
    "switch_password": "GPU_CLUSTER_SWITCH_PASSWORD",
    "bmc_password": "GPU_CLUSTER_BMC_PASSWORD",
    "api_token": "GPU_CLUSTER_API_TOKEN",
    "tacacs_key": "GPU_CLUSTER_TACACS_KEY",
    "snmp_community": "GPU_CLUSTER_SNMP_COMMUNITY",
}
# What a rendered switch config writes where a credential goes (docs/reference/dialects.md, *Management plane*):
# `${VARIABLE}`, filled when the config is pushed (files a shell runs: from the environment, under
# `set -u`; files the OS loads: by the push step, e.g. envsubst). A local user's password is
# written in the form the switch OSes take, a crypt(3) SHA-512 hash (`openssl passwd -6`) of
# switch_password, in its own variable.
PASSWORD_HASH_VARIABLE = "GPU_CLUSTER_SWITCH_PASSWORD_HASH"


def placeholder(key: str) -> str:
    """The text a rendered config carries for credential `key` (or `switch_password_hash`)."""
    variable = PASSWORD_HASH_VARIABLE if key == "switch_password_hash" else CREDENTIALS[key]
    return f"${{{variable}}}"


def _secure(value: object) -> bool:
    """How the Pulumi CLI stores a secret in a stack file: `{secure: <ciphertext>}`."""
    return isinstance(value, Mapping) and set(value) == {"secure"} and isinstance(value["secure"], str)


def plaintext_credentials(config: Mapping[str, object]) -> list[tuple[str, str]]:
    """(config key, environment variable) of every credential a stack file's `config:` holds in
    plain text. Never returns the value."""
    found = []
    for key, variable in sorted(CREDENTIALS.items()):
        full = f"{PROJECT}:{key}"
        if full in config and not _secure(config[full]):
            found.append((full, variable))
    return found


CREDENTIAL_PATHS = frozenset(f"config.{PROJECT}:{key}" for key in CREDENTIALS)
HIDDEN = "(not shown: a credential's value)"


def environment_values() -> set[str]:
    """The credentials this process holds in its environment (GPU_CLUSTER_*_PASSWORD, ...)."""
    return {value for value in (os.environ.get(variable) for variable in CREDENTIALS.values()) if value}


@dataclass
class _Container:
    """An open mapping or sequence while the YAML events are walked: the keys that lead to it,
    whether it lies inside a credential's value, and (a mapping) its key being read."""

    mapping: bool
    path: tuple[str, ...]
    secret: bool
    key: str | None = None
    expecting_key: bool = True
    is_key: bool = False  # a mapping or sequence used as a mapping key


def plaintext_values(text: str, max_events: int) -> set[str]:
    """Every scalar a stack file's `config:` gives a credential key in plain text (aliases of
    scalars followed), from the YAML events alone: bounded by `max_events`, nothing expanded,
    nothing composed. A file that stops parsing gives what was found up to there."""
    found: set[str] = set()
    anchors: dict[str, str] = {}
    stack: list[_Container] = []

    def credential(path: tuple[str, ...]) -> bool:
        return len(path) == 2 and path[0] == "config" and f"{path[0]}.{path[1]}" in CREDENTIAL_PATHS

    try:
        for count, event in enumerate(yaml.parse(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))):
            if count > max_events:
                break
            parent = stack[-1] if stack else None
            if isinstance(event, (yaml.MappingStartEvent, yaml.SequenceStartEvent)):
                mapping = isinstance(event, yaml.MappingStartEvent)
                if parent is None:
                    stack.append(_Container(mapping, (), False))
                elif parent.mapping and parent.expecting_key:
                    stack.append(_Container(mapping, (*parent.path, "?"), parent.secret, is_key=True))
                else:
                    path = (*parent.path, parent.key or "?") if parent.mapping else (*parent.path, "[]")
                    stack.append(_Container(mapping, path, parent.secret or credential(path)))
            elif isinstance(event, (yaml.MappingEndEvent, yaml.SequenceEndEvent)):
                closed = stack.pop()
                if stack and stack[-1].mapping:
                    stack[-1].expecting_key = closed.is_key is False
                    stack[-1].key = None
            elif isinstance(event, (yaml.ScalarEvent, yaml.AliasEvent)):
                value = event.value if isinstance(event, yaml.ScalarEvent) else anchors.get(event.anchor or "")
                if isinstance(event, yaml.ScalarEvent) and event.anchor:
                    anchors[event.anchor] = event.value
                if parent is None or value is None:
                    continue
                if parent.mapping and parent.expecting_key:
                    parent.key, parent.expecting_key = value, False
                    continue
                if parent.secret or (parent.mapping and credential((*parent.path, parent.key or "?"))):
                    found.add(value)
                if parent.mapping:
                    parent.expecting_key = True
    except yaml.YAMLError:
        pass
    return found


def redact(text: str, values: Collection[str]) -> str:
    """`text` with every credential value in `values` replaced, as it is and in the forms a message
    shows user text in (escaped, quoted, cut short), wherever it stands as a word of its own."""
    for value in sorted(values, key=len, reverse=True):
        for form in {value, printable(value), shown(value), shown(value, 300), repr(value)}:
            if form and form in text:
                text = re.sub(rf"(?<![\w-]){re.escape(form)}(?![\w-])", HIDDEN, text)
    return text
