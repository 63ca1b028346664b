"""Names that reach rendered configs, scripts and resource names admit no injection.

A cluster, pool, region, zone, reservation, switch model (catalog key, or the generic model named
from `ports` / `port_gbps`), GPU, server, instance type, address pool or SSH CIDR that carries a
newline, a shell metacharacter or template syntax is a SCHEMA finding at its own path, exit 2.
And the other way round: whatever the contract accepts is made of a small safe alphabet, and so
is every node name and string attribute of the graph built from it.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from cluster.cli import main
from cluster.pipeline import Valid, validate_mapping
from tests.hostile_bases import CLOUD, ONPREM, dotted, replaced

PAYLOADS = [
    "a\nb", "a\r", "x\n", "a b", "a\tb", "a;reboot", "$(reboot)", "`id`", "a|b", "a&b", "a>b", "a<b", "${HOME}",
    "a'b", 'a"b', "a\\b", "a*", "a?", "a!", "a#b", "a=b", "~a", "{{ 7*7 }}", "{% if 1 %}", "{#c#}", "<%= 1 %>",
    "a%0Ab", "a\x00b", "a\x1b[2J", "a\u2028b", "a\u202eb", "ａ",  # full-width letter: not ASCII
]

# (base, key path, what the contract may accept there)
NAME_FIELDS: list[tuple[str, tuple[str | int, ...], str]] = [
    ("onprem", ("name",), r"[a-z0-9-]+"),
    ("onprem", ("node_pools", 0, "name"), r"[a-z0-9-]+"),
    ("onprem", ("node_pools", 0, "gpu"), r"[A-Za-z0-9._+-]+"),
    ("onprem", ("node_pools", 0, "server"), r"[A-Za-z0-9._+-]+"),
    ("onprem", ("fabric", "leaf", "switch"), r"[A-Za-z0-9._+-]+"),
    ("onprem", ("management", "leaf", "switch"), r"[A-Za-z0-9._+-]+"),
    ("onprem", ("fabric", "leaf", "os"), r"sonic|nvue|eos"),
    ("onprem", ("addressing", "loopbacks"), r"[0-9A-Fa-f.:/]+"),
    ("onprem", ("addressing", "hosts"), r"[0-9A-Fa-f.:/]+"),
    ("onprem", ("policy", "suppress", 0), r"[A-Z-]+"),
    ("onprem", ("fabric", "shared_with"), r".*"),  # a list: any string item is refused below
    ("cloud", ("name",), r"[a-z0-9-]+"),
    ("cloud", ("node_pools", 0, "name"), r"[a-z0-9-]+"),
    ("cloud", ("node_pools", 0, "instance_type"), r"[A-Za-z0-9._+-]+"),
    ("cloud", ("cloud", "region"), r"[a-z0-9-]+"),
    ("cloud", ("cloud", "zone"), r"[a-z0-9-]+"),
    ("cloud", ("cloud", "reservation"), r"[A-Za-z0-9_./:-]+"),
    ("cloud", ("cloud", "market"), r"on-demand|capacity-block|spot"),
    ("cloud", ("cloud", "ssh_cidrs", 0), r"[0-9A-Fa-f.:/]+"),
    ("cloud", ("cloud", "image"), r"[A-Za-z0-9_./:+-]+"),
    ("cloud", ("cloud", "vpc_id"), r"vpc-[0-9a-f]+"),
    ("cloud", ("cloud", "subnet_ids", "fabric"), r"subnet-[0-9a-f]+"),
    ("cloud", ("cloud", "ssh_public_key"), r"[A-Za-z0-9@._:+/=-]+( [A-Za-z0-9@._:+/=-]+)+"),
    ("onprem", ("node_pools", 0, "fabric_nics", "interfaces", 0), r"[A-Za-z][A-Za-z0-9_.-]*"),
    ("onprem", ("node_pools", 0, "fabric_nics", "devices", 0), r"[A-Za-z][A-Za-z0-9_.-]*"),
]
BASES = {"onprem": ONPREM, "cloud": CLOUD}
SAFE_NODE = re.compile(r"[a-z0-9-]+")
SAFE_ATTR = re.compile(r"[A-Za-z0-9._:/+\[\]-]*")  # config paths carry [i]; models, os, kinds


def field_id(field: tuple[str, tuple[str | int, ...], str]) -> str:
    return f"{field[0]}:{dotted(field[1])}"


def value_for(path: tuple[str | int, ...], payload: str) -> Any:
    return [payload] if path[-1] == "shared_with" else payload


# Every field with every payload, except a payload that the field's safe alphabet allows (a space
# between the words of an SSH public key).
CASES = [(field, payload) for field in NAME_FIELDS for payload in PAYLOADS if not re.fullmatch(field[2], payload)]
# The fast tier (-m "not slow") keeps a diagonal of the cross-product: every field with one in
# SAMPLE_EVERY of its payloads, a different one per field, so every payload is tried somewhere;
# the full suite runs every case.
SAMPLE_EVERY = 8


def _cases() -> list[object]:
    params: list[object] = []
    for index, field in enumerate(NAME_FIELDS):
        payloads = [payload for case_field, payload in CASES if case_field == field]
        for position, payload in enumerate(payloads):
            sampled = position % SAMPLE_EVERY == index % min(SAMPLE_EVERY, len(payloads))
            params.append(pytest.param(field, payload, id=f"{field_id(field)}-{payload!r}",
                                       marks=() if sampled else pytest.mark.slow))
    return params


@pytest.mark.parametrize(("field", "payload"), _cases())
def test_injection_is_refused_by_the_cli(
    field: tuple[str, tuple[str | int, ...], str], payload: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    base, path, _ = field
    data = replaced(BASES[base], path, value_for(path, payload))
    stack = tmp_path / "Pulumi.inject.yaml"
    stack.write_text(yaml.safe_dump({"config": {"gpu-cluster:cluster": data}}, allow_unicode=True), encoding="utf-8")
    assert main(["validate", str(stack), "--format", "json"]) == 2
    out = capsys.readouterr().out
    assert '"rule": "SCHEMA"' in out
    expected = dotted(path[:-1]) if isinstance(path[-1], int) or path[-1] == "shared_with" else dotted(path)
    result = validate_mapping("inject", data)
    paths = [finding.path for finding in result.findings if finding.rule == "SCHEMA"]
    assert any(found.startswith(expected) for found in paths), (expected, paths)


@pytest.mark.parametrize("tier", ["leaf", "spine", "core"])
@pytest.mark.parametrize("key", ["ports", "port_gbps", "uplink_ports", "uplink_gbps"])
@pytest.mark.parametrize("payload", ["64; reboot", "64\n", "{{ 64 }}", "64.5", "0x40", "6_4"])
def test_generic_switch_names_come_from_integers_only(tier: str, key: str, payload: str) -> None:
    data = replaced(ONPREM, ("fabric", tier), {"ports": 64, "port_gbps": 400, key: payload})
    result = validate_mapping("inject", data)
    assert result.exit_code == 2
    assert any(f.rule == "SCHEMA" and f.path.startswith(f"fabric.{tier}") for f in result.findings)


@settings(max_examples=150, deadline=None, derandomize=True, database=None)
@given(st.sampled_from(NAME_FIELDS), st.text(max_size=24))
def test_whatever_is_accepted_is_safe(field: tuple[str, tuple[str | int, ...], str], text: str) -> None:
    base, path, allowed = field
    result = validate_mapping("names", replaced(BASES[base], path, value_for(path, text)))
    if result.exit_code == 2:
        return
    assert re.fullmatch(allowed, text), f"{field_id(field)} accepted {text!r}"
    assert isinstance(result, Valid)
    for node, data in result.topology.graph.nodes(data=True):
        assert SAFE_NODE.fullmatch(node), node
        for key, value in data.items():
            if isinstance(value, str):
                assert SAFE_ATTR.fullmatch(value), (node, key, value)


@pytest.mark.parametrize(
    "cidr", ["fe80::%$(reboot)/64", "fe80::1%eth0;id/128", "::%\n/128", "10.0.0.0/8 ", "10.0.0.0/8\n", "{{ net }}"]
)
def test_ipv6_scope_ids_cannot_smuggle_text(cidr: str) -> None:
    """`ipaddress` accepts an IPv6 scope id of any text after `%`; the contract does not."""
    for base, path in (("onprem", ("addressing", "fabric_links")), ("cloud", ("cloud", "ssh_cidrs", 0))):
        result = validate_mapping("inject", replaced(BASES[base], path, cidr))
        assert result.exit_code == 2, (path, cidr)


# --------------------------------------------------------------------------- through the renderer

RENDER_FIELDS = [field for field in NAME_FIELDS if field[0] == "onprem"]
RENDER_PAYLOADS = ["a\nb", "$(reboot)", "a;reboot", "{{ 7*7 }}", "`id`"]


@pytest.mark.parametrize("field", RENDER_FIELDS, ids=field_id)
@pytest.mark.parametrize("payload", RENDER_PAYLOADS, ids=repr)
def test_render_refuses_injection_and_writes_nothing(
    field: tuple[str, tuple[str | int, ...], str], payload: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _, path, _ = field
    stack = tmp_path / "Pulumi.inject.yaml"
    data = replaced(ONPREM, path, value_for(path, payload))
    stack.write_text(yaml.safe_dump({"config": {"gpu-cluster:cluster": data}}, allow_unicode=True), encoding="utf-8")
    out = tmp_path / "out"
    assert main(["render", str(stack), "--out", str(out)]) == 2
    capsys.readouterr()
    assert not out.exists()


label = st.from_regex(r"[a-z0-9]([a-z0-9-]{0,8}[a-z0-9])?", fullmatch=True)
netdev = st.from_regex(r"[A-Za-z][A-Za-z0-9_.-]{0,14}", fullmatch=True)


@settings(max_examples=40, deadline=None, derandomize=True, database=None)
@given(label, label, label, st.lists(netdev, min_size=8, max_size=8, unique=True))
def test_accepted_names_render_to_safe_paths_and_valid_shell(
    cluster_name: str, first_pool: str, second_pool: str, interfaces: list[str]
) -> None:
    from cluster.artifacts import render_tree

    data = replaced(ONPREM, ("name",), cluster_name)
    data = replaced(data, ("node_pools", 0, "name"), first_pool)
    data = replaced(data, ("node_pools", 1, "name"), second_pool)
    data = replaced(data, ("node_pools", 0, "fabric_nics", "interfaces"), interfaces)
    result = validate_mapping("names", data)
    if first_pool == second_pool:
        assert result.exit_code == 2
        return
    assert result.exit_code in (0, 1) and isinstance(result, Valid)
    files = render_tree(result.spec, result.topology)
    for name in files:
        assert re.fullmatch(r"[a-z0-9][a-z0-9_.-]*(/[a-z0-9][a-z0-9_.-]*)*", name), name
    script = files[f"hosts/{first_pool}/qos.sh"]
    for interface in interfaces:
        assert re.search(rf"(?<![A-Za-z0-9_.-]){re.escape(interface)}(?![A-Za-z0-9_.-])", script), interface
    checked = subprocess.run(["bash", "-n"], input=script, text=True, capture_output=True, timeout=30)
    assert checked.returncode == 0, checked.stderr
