"""docs/stack-file.md is generated from the stack-file models and kept current."""

from __future__ import annotations

import re

from cluster import stackfile as sf
from cluster.formats.reference import DOC, reference
from tests.conftest import ROOT


def test_the_stack_file_reference_is_current() -> None:
    assert (ROOT / DOC).read_text(encoding="utf-8") == reference(), (
        "docs/stack-file.md is out of date: run `python -m cluster.formats.reference > docs/stack-file.md`")


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
    assert "docs/stack-file.md#fabric" in finding.hint
    anchors = set(re.findall(r'<a id="([a-z]+)"></a>', (ROOT / DOC).read_text()))
    assert "fabric" in anchors
