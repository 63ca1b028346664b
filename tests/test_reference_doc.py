"""docs/reference/stack-file.md is generated from the stack-file models and the catalog, and kept current."""

from __future__ import annotations

import re

import pytest

from cluster import stackfile as sf
from cluster.catalog import Catalog, UplinkPorts, load_catalog
from cluster.formats.reference import CATALOG_LINKS, DOC, catalog_reference, reference
from tests.conftest import ROOT


def test_the_stack_file_reference_is_current() -> None:
    assert (ROOT / DOC).read_text(encoding="utf-8") == reference(), (
        "docs/reference/stack-file.md is out of date: run `python -m cluster.formats.reference > docs/reference/stack-file.md`")


def test_every_key_of_every_model_is_documented() -> None:
    text = reference()
    models = [value for value in vars(sf).values()
              if isinstance(value, type) and issubclass(value, sf.Model) and value is not sf.Model]
    for model in models:
        assert f'<a id="{model.__name__.lower()}"></a>' in text, model.__name__
        section = text.split(f'<a id="{model.__name__.lower()}"></a>', 1)[1].split("<a id=", 1)[0]
        for key in model.model_fields:
            assert re.search(rf"^\| `{key}` \|", section, re.M), f"{model.__name__}.{key}"


def test_schema_hints_point_into_the_reference(tmp_path) -> None:  # type: ignore[no-untyped-def]
    from cluster.pipeline import validate_mapping

    result = validate_mapping("t", {"name": "t", "target": "onprem",
                                    "node_pools": [{"name": "a", "nodes": 4, "gpu": "H200"}],
                                    "fabric": {"planes": "two"}})
    [finding] = [f for f in result.findings if f.path == "fabric.planes"]
    assert "docs/reference/stack-file.md#fabric" in finding.hint
    anchors = set(re.findall(r'<a id="([a-z]+)"></a>', (ROOT / DOC).read_text()))
    assert "fabric" in anchors


@pytest.mark.parametrize(("change", "path", "anchor"), [
    ({"node_pools": [{"name": "a", "nodes": 4, "gpu": "H900"}]}, "node_pools[0].gpu", "catalog-gpus"),
    ({"node_pools": [{"name": "a", "nodes": 4, "gpu": "H200", "server": "dgx-z9"}]}, "node_pools[0].server",
     "catalog-servers"),
    ({"fabric": {"leaf": {"switch": "SN9999"}}}, "fabric.leaf.switch", "catalog-switches"),
    ({"target": "aws", "cloud": {"region": "us-east-1", "zone": "us-east-1a"},
      "node_pools": [{"name": "a", "nodes": 4, "instance_type": "p9.48xlarge"}]}, "node_pools[0].instance_type",
     "catalog-instance-types"),
])
def test_an_unknown_catalog_key_points_to_its_catalog_section(change: dict[str, object], path: str,
                                                              anchor: str) -> None:
    from cluster.pipeline import validate_mapping

    data = {"name": "t", "target": "onprem", "node_pools": [{"name": "a", "nodes": 4, "gpu": "H200"}], **change}
    [finding] = [f for f in validate_mapping("t", data).findings if f.path == path]
    assert f"docs/reference/stack-file.md#{anchor}" in finding.hint
    assert f'<a id="{anchor}"></a>' in (ROOT / DOC).read_text(encoding="utf-8")


# ----- the catalog part

CATALOG_SECTIONS = {"catalog-gpus": "gpus", "catalog-servers": "servers", "catalog-switches": "switches",
                    "catalog-instance-types": "instances"}


def _section(text: str, anchor_id: str) -> str:
    """The text from `<a id="anchor_id">` to the next anchor."""
    assert f'<a id="{anchor_id}"></a>' in text, anchor_id
    return text.split(f'<a id="{anchor_id}"></a>', 1)[1].split("<a id=", 1)[0]


def _keys(catalog: Catalog, attribute: str) -> list[str]:
    entries = getattr(catalog, attribute)
    if attribute == "instances":
        return [name for by_type in entries.values() for name in by_type]
    return list(entries)


@pytest.mark.parametrize(("anchor_id", "attribute"), sorted(CATALOG_SECTIONS.items()))
def test_every_catalog_key_has_a_row_in_its_section(anchor_id: str, attribute: str) -> None:
    section = _section(reference(), anchor_id)
    keys = _keys(load_catalog(), attribute)
    assert keys
    rows = re.findall(r"^\| `([^`]+)` \|", section, re.M)
    assert rows == keys, f"{anchor_id}: rows {rows} are not the catalog's keys {keys} in order"


def _dumped_notes(data: object) -> list[str]:
    """Every `source` / `*_source` string in an entry's dump, at any depth."""
    if isinstance(data, dict):
        return [value for key, value in data.items() if str(key).endswith("source") and isinstance(value, str)] + [
            note for value in data.values() for note in _dumped_notes(value)]
    return []


@pytest.mark.parametrize(("anchor_id", "attribute"), sorted(CATALOG_SECTIONS.items()))
def test_every_source_note_is_there_whole(anchor_id: str, attribute: str) -> None:
    """Tables show only the status words; each note, nested ones too (`cages.source`), is in the list below."""
    section = " ".join(_section(reference(), anchor_id).replace("&lt;", "<").replace("&gt;", ">").split())
    entries = getattr(load_catalog(), attribute)
    flat = ({name: entry for by_type in entries.values() for name, entry in by_type.items()}
            if attribute == "instances" else entries)
    for key, entry in flat.items():
        found = _dumped_notes(entry.model_dump(exclude={"nccl": {"env"}}))
        assert entry.source in found, key
        for note in found:
            assert " ".join(note.split()) in section, f"{key}: source note not whole: {note[:60]}..."


def test_the_catalog_defaults_are_listed() -> None:
    section = _section(reference(), "catalog-defaults")
    catalog = load_catalog()
    for role, model in catalog.switch_defaults.items():
        assert f"| `{role}` | `{model}` |" in section, role
    for gpu in catalog.gpus:
        assert f"| `{gpu}` | `{catalog.default_server(gpu)}` |" in section, gpu


def test_every_link_in_the_document_has_its_anchor() -> None:
    text = (ROOT / DOC).read_text(encoding="utf-8")
    anchors = set(re.findall(r'<a id="([a-z0-9-]+)"></a>', text))
    links = set(re.findall(r"\]\(#([^)]+)\)", text))
    assert {"catalog-gpus", "catalog-servers", "catalog-switches", "catalog-instance-types",
            "catalog-defaults"} <= links
    assert sorted(links - anchors) == []


@pytest.mark.parametrize(("owner", "key", "anchor_id"),
                         [(owner, key, target) for (owner, key), (_, target) in sorted(CATALOG_LINKS.items())])
def test_catalog_keys_of_the_stack_file_link_to_their_section(owner: str, key: str, anchor_id: str) -> None:
    """The link is added to the stackfile comment by the generator: the key must still exist there."""
    model = getattr(sf, owner)
    assert key in model.model_fields, f"CATALOG_LINKS names {owner}.{key}, which the stack file no longer has"
    section = _section(reference(), owner.lower())
    [row] = re.findall(rf"^\| `{key}` \|.*$", section, re.M)
    assert row.endswith(f"(#{anchor_id}) |"), row


def _malformed(text: str) -> list[str]:
    """Catalog table rows whose cell count is not their header's (an unescaped `|`), and catalog text
    outside code spans that Markdown would take as HTML."""
    part = text.split('<a id="catalog"></a>', 1)[-1]
    problems, header = [], 0
    for line in part.splitlines():
        if not line.startswith("|"):
            header = 0
            continue
        cells = len(re.findall(r"(?<!\\)\|", line)) - 1
        header = header or cells
        if cells != header:
            problems.append(line)
    outside_code = re.sub(r'<a id="[a-z-]+"></a>', "", re.sub(r"`[^`]*`", "", part))
    return problems + re.findall(r"<[^ ]{0,20}", outside_code)


def test_the_catalog_tables_are_well_formed() -> None:
    assert _malformed(reference()) == []


def test_a_new_catalog_entry_and_field_value_show_without_a_generator_change() -> None:
    catalog = load_catalog()
    gpu = catalog.gpus["H100"].model_copy(update={"memory_gb": 12345, "source": "a test entry. UNVERIFIED"})
    switch = catalog.switches["7808R3"]
    assert switch.linecards is not None
    switch = switch.model_copy(update={"uplink_ports": UplinkPorts(count=2, gbps=1600),
                                       "linecards": switch.linecards.model_copy(update={"card": "LC|<x>"})})
    text = catalog_reference(catalog.model_copy(update={"gpus": {**catalog.gpus, "X1": gpu},
                                                        "switches": {**catalog.switches, "7808R3": switch}}))
    [row] = re.findall(r"^\| `X1` \|.*$", _section(text, "catalog-gpus"), re.M)
    assert "| 12345 |" in row and row.endswith("| UNVERIFIED |")
    assert "- `X1`: a test entry. UNVERIFIED" in text
    [row] = re.findall(r"^\| `7808R3` \|.*$", _section(text, "catalog-switches"), re.M)
    assert "| 2 x 1600G |" in row and "card LC\\|&lt;x&gt;" in row
    assert _malformed(text) == []
    assert "| `X1` | `generic-8gpu` |" in _section(text, "catalog-defaults")
