"""Hostile stack files through the real CLI entry, in-process: a verdict, never a traceback.

Every generated file yields SCHEMA findings and exit 2, or a clean verdict (0 / 1) with no
SCHEMA finding when it happens to be valid; within a bounded amount of work (CPU seconds of the
process, with a margin of about a hundred times what a verdict takes, so a loaded machine cannot
fail it; wall-clock time is never asserted: timings live in benchmarks/); with a report whose every line is
one printable line of bounded length (no input can forge a report line, a CI annotation or a
terminal escape). Hypothesis runs derandomized and without a database, so CI sees the same
examples on every run.
"""

from __future__ import annotations

import contextlib
import io
import json
import math
import tempfile
import time
import tracemalloc
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cluster.cli import main
from cluster.loader import MAX_BYTES
from cluster.pipeline import validate, validate_mapping
from cluster.yamlfile import MAX_DEPTH, MAX_NODES
from tests.hostile_bases import BASES, paths, replaced

CPU_SECONDS = 5.0  # a verdict takes 0.01-0.05 s of CPU; runaway work (a size blow-up) takes far more
BOUNDED = settings(
    max_examples=150,
    deadline=None,  # bounded explicitly below in CPU time, with the file write excluded
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.large_base_example],
)
FORMATS = ("text", "json", "sarif", "github")

validate("dev")  # warm the catalog and imports so the first example is timed like the rest


@pytest.fixture(scope="module")
def workdir() -> Iterator[Path]:
    with tempfile.TemporaryDirectory(prefix="hostile-") as folder:
        yield Path(folder)


# --------------------------------------------------------------------------- running and checking


def run_cli(path: Path, fmt: str) -> tuple[int, str, float]:
    out, err = io.StringIO(), io.StringIO()
    start = time.process_time()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(["validate", str(path), "--format", fmt])
    cpu = time.process_time() - start
    assert err.getvalue() == "", err.getvalue()
    return code, out.getvalue(), cpu


def clean(text: str, limit: int) -> None:
    assert text.isprintable(), f"not one printable line: {text[:200]!r}"
    assert len(text) <= limit, f"{len(text)} characters: {text[:200]!r}..."


def check_verdict(code: int, findings: list[dict[str, Any]]) -> None:
    """Exit 2 with SCHEMA findings, or a clean verdict with none; no rule crashed."""
    assert code in (0, 1, 2)
    schema = [f for f in findings if f["rule"] == "SCHEMA"]
    if code == 2:
        assert schema, findings
    else:
        assert not schema, schema
    for finding in findings:
        clean(finding["path"], 200)
        clean(finding["message"], 1000)
        clean(finding["hint"], 1000)
        assert "crashed" not in finding["message"], finding


def check_file(path: Path, fmt: str) -> tuple[int, list[dict[str, Any]]]:
    """The JSON verdict, then the same file in `fmt`: same exit code, every output line clean."""
    code, out, cpu = run_cli(path, "json")
    assert cpu < CPU_SECONDS, f"{cpu:.2f} s of CPU"
    findings: list[dict[str, Any]] = json.loads(out)["findings"]
    check_verdict(code, findings)
    again, text, cpu = run_cli(path, fmt)
    assert again == code and cpu < CPU_SECONDS, f"{cpu:.2f} s of CPU"
    for line in text.splitlines():
        clean(line, 5000)
    if fmt == "sarif":
        assert len(json.loads(text)["runs"][0]["results"]) == len(findings)
    if fmt == "github":
        assert sum(line.startswith("::") for line in text.splitlines()) == len(findings)
    return code, findings


def write(workdir: Path, data: bytes) -> Path:
    path = workdir / "Pulumi.hostile.yaml"
    path.write_bytes(data)
    return path


def stack_text(cluster: Any) -> str:
    return yaml.safe_dump({"config": {"gpu-cluster:cluster": cluster}}, allow_unicode=True, sort_keys=False)


# --------------------------------------------------------------------------- strategies

SPECIAL_STRINGS = [
    "", " ", "\n", "a\nb", "x\r\n", "\t", "\x00", "\x1b[31mred\x1b[0m", "\u202eevil", "\ufeff", "\ud7ff",
    "$(reboot)", "`id`", "a;rm -rf /", "a|b", "a&b", "a>b", "'", '"', "\\", "{{ 7*7 }}", "{% if %}", "${HOME}",
    "../../etc/passwd", "%0A", "::error::x", "1e400", "0x10", "NaN", "-0", "True", "~", "null",
    "H200 ", " H200", "h200", "SN5600\n", "10.0.0.0/8\n", "fe80::%$(reboot)/64", "x" * 300,
]
SPECIAL_NUMBERS = [0, -1, 1, 7, 8, 9, 63, 64, 65, 2**31, -(2**31), 2**63, 2**64, 10**30, -(10**30), 10**4000]
SPECIAL_FLOATS = [0.0, -0.0, 0.5, 1.0, 1e-300, 1e300, math.inf, -math.inf, math.nan]

scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.sampled_from(SPECIAL_NUMBERS),
    st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from(SPECIAL_FLOATS),
    st.text(max_size=40),
    st.text(alphabet=st.characters(categories=["Cc", "Cf", "Zs", "Zl", "Zp", "So", "Lo"]), max_size=20),
    st.sampled_from(SPECIAL_STRINGS),
    st.binary(max_size=16),  # dumped as !!binary
)
values = st.recursive(
    scalars,
    lambda children: st.one_of(
        st.lists(children, max_size=4),
        st.dictionaries(st.one_of(st.text(max_size=12), st.integers(), st.sampled_from(SPECIAL_STRINGS)), children,
                        max_size=4),
    ),
    max_leaves=12,
)


def nested(depth: int, mapping: bool) -> Any:
    value: Any = 1
    for _ in range(depth):
        value = {"a": value} if mapping else [value]
    return value


deep_values = st.builds(nested, st.integers(min_value=MAX_DEPTH - 5, max_value=MAX_DEPTH * 3), st.booleans())
huge_collections = st.integers(min_value=1, max_value=2).map(
    lambda scale: [{"name": f"p{i}", "nodes": 1, "gpu": "H200"} for i in range(10 ** (scale + 1))]
)
hostile_values = st.one_of(values, deep_values, huge_collections)
base_and_path = st.sampled_from(sorted(BASES)).flatmap(
    lambda name: st.tuples(st.just(name), st.sampled_from(paths(BASES[name])))
)


# --------------------------------------------------------------------------- properties


@pytest.mark.slow
@BOUNDED
@given(base_and_path, hostile_values, st.sampled_from(FORMATS), st.booleans())
def test_wrong_values_at_every_contract_key(
    workdir: Path, where: tuple[str, tuple[str | int, ...]], value: Any, fmt: str, as_json_text: bool
) -> None:
    base, path = where
    cluster = replaced(BASES[base], path, value)
    if as_json_text:  # `pulumi config set --path` may store the whole value as JSON text
        cluster = json.dumps(cluster, default=repr)
    check_file(write(workdir, stack_text(cluster).encode()), fmt)
    result = validate_mapping("hostile", cluster)  # the Pulumi program's entry
    assert result.exit_code in (0, 1, 2)
    assert (result.exit_code == 2) == any(f.rule == "SCHEMA" for f in result.findings)


@BOUNDED
@given(base_and_path, st.one_of(st.text(max_size=20), st.sampled_from(SPECIAL_STRINGS)), values,
       st.sampled_from(FORMATS))
def test_unknown_and_hostile_keys(
    workdir: Path, where: tuple[str, tuple[str | int, ...]], key: str, value: Any, fmt: str
) -> None:
    base, path = where
    data = json.loads(json.dumps(BASES[base]))
    target: Any = data
    for step in path[:-1]:
        target = target[step]
    if not isinstance(target, dict) or key in target:
        return  # the path's parent is a list, or the key is a real one
    target[key] = value
    code, _findings = check_file(write(workdir, stack_text(data).encode()), fmt)
    assert code == 2  # (under a union field the finding names the allowed forms instead)


def alias_bomb(fanout: int, depth: int, place: str) -> str:
    lines = [f"a0: &a0 [{', '.join(['lol'] * fanout)}]"]
    for level in range(1, depth + 1):
        lines.append(f"a{level}: &a{level} [{', '.join([f'*a{level - 1}'] * fanout)}]")
    top = f"*a{depth}"
    cluster = {
        "cluster": top,
        "node_pools": f"{{name: x, target: onprem, node_pools: {top}}}",
        "name": f"{{name: {top}, target: onprem, node_pools: [{{name: a, nodes: 1, gpu: H200}}]}}",
        "unknown": f"{{name: x, target: onprem, node_pools: [{{name: a, nodes: 1, gpu: H200}}], extra: {top}}}",
    }[place]
    return "\n".join([*lines, "config:", f"  gpu-cluster:cluster: {cluster}", ""])


@pytest.mark.slow
@settings(BOUNDED, max_examples=60)
@given(st.integers(2, 12), st.integers(1, 12), st.sampled_from(["cluster", "node_pools", "name", "unknown"]),
       st.sampled_from(FORMATS))
def test_alias_bombs(workdir: Path, fanout: int, depth: int, place: str, fmt: str) -> None:
    code, findings = check_file(write(workdir, alias_bomb(fanout, depth, place).encode()), fmt)
    assert code == 2
    if fanout**depth > MAX_NODES:
        assert any("too large" in f["message"] for f in findings), findings


def deep_text(depth: int, style: str) -> str:
    if style == "flow-list":
        body = "[" * depth + "]" * depth
    elif style == "flow-map":
        body = "{a: " * depth + "1" + "}" * depth
    else:
        return "config:\n  gpu-cluster:cluster:\n" + "".join("  " * (level + 2) + "a:\n" for level in range(depth))
    return f"config:\n  gpu-cluster:cluster: {body}\n"


@BOUNDED
@given(st.integers(1, 3000), st.sampled_from(["flow-list", "flow-map", "block"]), st.sampled_from(FORMATS))
def test_deep_nesting(workdir: Path, depth: int, style: str, fmt: str) -> None:
    code, findings = check_file(write(workdir, deep_text(depth, style).encode()), fmt)
    assert code == 2
    if depth > MAX_DEPTH:
        assert any(word in f["message"] for f in findings for word in ("nesting", "too large", "larger than")), findings


@BOUNDED
@given(st.sampled_from(sorted(BASES)), st.data(), st.sampled_from(FORMATS))
def test_duplicate_keys(workdir: Path, base: str, data: st.DataObject, fmt: str) -> None:
    lines = stack_text(BASES[base]).splitlines()
    keyed = [i for i, line in enumerate(lines) if ":" in line and not line.lstrip().startswith("-") and i > 1]
    index = data.draw(st.sampled_from(keyed))
    line = lines[index]
    if not line.rstrip().endswith(":"):  # a `key: value` line: duplicate it in place
        lines.insert(index + 1, line)
    else:  # a block key: repeat it, empty, right after its block would be ambiguous; put it first
        lines.insert(index, line + " null")
    code, findings = check_file(write(workdir, ("\n".join(lines) + "\n").encode()), fmt)
    assert code == 2
    assert any("duplicate key" in f["message"] for f in findings), findings


@BOUNDED
@given(values, st.sampled_from(["root", "config", "cluster"]), st.sampled_from(FORMATS))
def test_non_mapping_roots(workdir: Path, value: Any, place: str, fmt: str) -> None:
    if isinstance(value, dict):
        value = [value]
    document = {"root": value, "config": {"config": value}, "cluster": {"config": {"gpu-cluster:cluster": value}}}
    code, _findings = check_file(write(workdir, yaml.safe_dump(document[place], allow_unicode=True).encode()), fmt)
    assert code == 2


@BOUNDED
@given(st.binary(max_size=4096), st.sampled_from(FORMATS))
def test_binary_garbage(workdir: Path, data: bytes, fmt: str) -> None:
    code, _ = check_file(write(workdir, data), fmt)
    assert code == 2


INVALID_UTF8 = [b"\xff", b"\xfe\xff", b"\xc0\xaf", b"\xed\xa0\x80", b"\xe2\x82", b"\xf8\x88\x80\x80\x80", b"\x80"]


@BOUNDED
@given(st.sampled_from(sorted(BASES)), st.sampled_from(INVALID_UTF8), st.data(), st.sampled_from(FORMATS))
def test_invalid_utf8(workdir: Path, base: str, bad: bytes, data: st.DataObject, fmt: str) -> None:
    text = stack_text(BASES[base]).encode()
    cut = data.draw(st.integers(0, len(text)))
    code, findings = check_file(write(workdir, text[:cut] + bad + text[cut:]), fmt)
    assert code == 2 and any("not UTF-8" in f["message"] for f in findings), findings


CONTROL = st.characters(categories=["Cc", "Cf", "Cs", "Co"], exclude_characters="\n\r\t")


@BOUNDED
@given(st.sampled_from(sorted(BASES)), st.text(CONTROL, min_size=1, max_size=5), st.data(), st.sampled_from(FORMATS))
def test_raw_control_characters(workdir: Path, base: str, junk: str, data: st.DataObject, fmt: str) -> None:
    text = stack_text(BASES[base])
    cut = data.draw(st.integers(0, len(text)))
    code, _ = check_file(write(workdir, (text[:cut] + junk + text[cut:]).encode("utf-8", "surrogatepass")), fmt)
    assert code in (0, 1, 2)  # a control character inside a comment or a quoted string may be harmless


TAGGED = [
    "!!python/object/apply:os.system ['echo pwned']", "!!python/name:os.system", "!!binary aGVsbG8=",
    "!!timestamp 2001-12-14", "!!set {a, b}", "!!omap [{a: 1}]", "!!pairs [[a, 1]]", "!custom x", "!<tag:x> y",
    "!!float '1e400'", "!!int '0o777'", "!!str 16", "!!null ''", "!!merge <<", "&anchor 1", "*undefined",
]


@BOUNDED
@given(base_and_path, st.sampled_from(TAGGED), st.sampled_from(FORMATS))
def test_yaml_tags_and_anchors(workdir: Path, where: tuple[str, tuple[str | int, ...]], tagged: str, fmt: str) -> None:
    base, path = where
    marker = "TAGGED-VALUE-MARKER"
    text = stack_text(replaced(BASES[base], path, marker)).replace(marker, tagged)
    code, _findings = check_file(write(workdir, text.encode()), fmt)
    if "python/" in tagged:
        assert code == 2  # never constructed, never run


@settings(BOUNDED, max_examples=25)
@given(st.integers(min_value=1, max_value=MAX_BYTES + 64 * 1024), st.sampled_from(["name", "key", "comment"]),
       st.sampled_from(FORMATS))
def test_enormous_strings(workdir: Path, size: int, where: str, fmt: str) -> None:
    big = "x" * size
    text = {
        "name": f"config:\n  gpu-cluster:cluster:\n    name: {big}\n    target: onprem\n"
                "    node_pools: [{name: a, nodes: 1, gpu: H200}]\n",
        "key": f"config:\n  gpu-cluster:cluster:\n    name: a\n    target: onprem\n"
               f"    node_pools: [{{name: a, nodes: 1, gpu: H200}}]\n    {big}: 1\n",
        "comment": f"# {big}\nconfig:\n  gpu-cluster:cluster:\n    name: a\n    target: onprem\n"
                   "    node_pools: [{name: a, nodes: 1, gpu: H200}]\n",
    }[where]
    code, findings = check_file(write(workdir, text.encode()), fmt)
    if len(text.encode()) > MAX_BYTES:
        assert code == 2 and any(f"larger than {MAX_BYTES}" in f["message"] for f in findings)
    elif where == "comment" or (where == "name" and size <= 63):  # a DNS label holds 63 characters
        assert code in (0, 1)
    else:
        assert code == 2


# --------------------------------------------------------------------------- memory, worst cases

WORST = {
    "alias bomb": "a: &a [" + ", ".join(["x"] * 10) + "]\n"
    + "".join(f"{c}: &{c} [{', '.join([f'*{p}'] * 10)}]\n" for p, c in zip("abcdefgh", "bcdefghi", strict=True))
    + "config:\n  gpu-cluster:cluster: *i\n",
    "million scalars": "config: [" + "1," * (MAX_BYTES // 2 - 16) + "1]\n",
    "a key per line": "".join(f"k{i}: 1\n" for i in range(MAX_BYTES // 12)),
    "one huge string": "config:\n  gpu-cluster:cluster:\n    name: '" + "x" * (MAX_BYTES - 64) + "'\n",
    "deepest brackets": "config: " + "[" * (MAX_BYTES - 16) + "\n",
}


@pytest.mark.parametrize("name", sorted(WORST))
def test_worst_case_inputs_are_bounded_in_time_and_memory(workdir: Path, name: str) -> None:
    path = write(workdir, WORST[name].encode())
    tracemalloc.start()
    try:
        code, out, _cpu = run_cli(path, "json")
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert code == 2
    check_verdict(code, json.loads(out)["findings"])
    assert peak < 96 * 1024 * 1024, f"{name}: peak {peak / 2**20:.0f} MiB"
    _, _, untraced = run_cli(path, "json")
    assert untraced < CPU_SECONDS, f"{name}: {untraced:.2f} s of CPU"
