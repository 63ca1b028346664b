"""The dialect registry: every switch OS is one folder under cluster/dialects/, found by its
PLATFORM; nothing outside a dialect's folder names that dialect, so adding one is one folder."""

from __future__ import annotations

import io
import re
import sys
import tokenize
from pathlib import Path

import pytest

from cluster import dialects
from cluster.catalog import load_catalog
from cluster.dialects import Platform, platform, platforms
from cluster.naming import switch_port
from tests.conftest import ROOT

CLUSTER = ROOT / "cluster"
WORD = re.compile(r"[A-Z]?[a-z0-9]+|[A-Z]+(?![a-z])")

def _words(text: str) -> set[str]:
    return {word.lower() for word in WORD.findall(text)}


def names_in_code(path: Path, names: set[str] | None = None) -> set[str]:
    """The `names` (else the dialects) a module names in its code: identifiers and strings, not
    comments or docstrings."""
    names = set(platforms()) if names is None else names
    found: set[str] = set()
    previous = tokenize.NEWLINE
    for token in tokenize.generate_tokens(io.StringIO(path.read_text(encoding="utf-8")).readline):
        docstring = token.type == tokenize.STRING and previous in (tokenize.NEWLINE, tokenize.INDENT, tokenize.NL)
        if token.type in (tokenize.NAME, tokenize.STRING) and not docstring:
            found |= _words(token.string) & names
        if token.type not in (tokenize.COMMENT, tokenize.NL):
            previous = token.type
    return found


def offenders() -> dict[str, set[str]]:
    result = {}
    for path in sorted(CLUSTER.rglob("*.py")):
        relative = path.relative_to(ROOT).as_posix()
        named = names_in_code(path)
        own = relative.split("/")[2] if relative.startswith("cluster/dialects/") and relative.count("/") > 2 else None
        named.discard(own or "")
        if named:
            result[relative] = named
    return result


def test_every_folder_with_a_platform_is_a_dialect() -> None:
    folders = {path.parent.name for path in (CLUSTER / "dialects").glob("*/__init__.py")}
    assert set(platforms()) == folders - {"host"}  # the host's scripts are no switch dialect
    assert all(name == entry.name for name, entry in platforms().items())


def test_every_os_of_the_catalog_is_a_dialect() -> None:
    for model, entry in load_catalog().switches.items():
        assert entry.os in platforms(), model
        assert set(entry.runs) <= set(platforms()), model
        assert set(entry.dialects) <= set(platforms()), model


def test_every_dialects_catalog_data_is_what_it_reads() -> None:
    """A switch's per-dialect data (`dialects` in switches.yaml) is validated where it is read."""
    from cluster.dialects.eos import EosPlatform, eos_platform

    given = {model: entry.dialects["eos"] for model, entry in load_catalog().switches.items() if "eos" in entry.dialects}
    assert given, "the catalog gives EOS forms for its modular and fixed Arista models"
    for model, data in given.items():
        assert eos_platform(model) == EosPlatform.model_validate(data)


def test_no_module_outside_a_dialects_folder_names_that_dialect() -> None:
    assert offenders() == {}


def test_the_check_sees_a_dialect_named_in_code(tmp_path: Path) -> None:
    module = tmp_path / "m.py"
    module.write_text('"""Docstrings may say SONiC."""\n# and comments: nvue\nLIMITS = {"eos": 1}\ndef sonic_sku(): pass\n')
    assert names_in_code(module) == {"eos", "sonic"}


def test_a_new_dialect_is_one_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A folder with a PLATFORM beside the others is found, and naming asks it for port names."""
    folder = tmp_path / "labos"
    folder.mkdir()
    (folder / "__init__.py").write_text(
        "from cluster.dialects import Platform\n"
        "PLATFORM = Platform(name='labos', title='Lab OS', port_name=lambda index, model, gbps: f'p{index}',\n"
        "                    management_port=lambda model: 'mgmt', config_file='labos.conf', routing_file='labos.conf')\n")
    monkeypatch.setattr(dialects, "__path__", [*dialects.__path__, str(tmp_path)])
    platforms.cache_clear()
    try:
        assert isinstance(platform("labos"), Platform) and switch_port("labos", 4, "any", 400) == "p4"
    finally:
        monkeypatch.undo()
        platforms.cache_clear()
        sys.modules.pop("cluster.dialects.labos", None)
    assert "labos" not in platforms()
