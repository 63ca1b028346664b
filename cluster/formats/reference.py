"""The stack-file reference (docs/stack-file.md), generated from the pydantic models of
cluster/stackfile.py: every key, its type and range or allowed values, its default. A test keeps
the file current; SCHEMA hints point to it.

    python -m cluster.formats.reference > docs/stack-file.md
"""

from __future__ import annotations

import re
import types
import typing
from pathlib import Path
from typing import Any, Literal, Union

import annotated_types
from pydantic import BaseModel
from pydantic.fields import FieldInfo
from pydantic_core import PydanticUndefined

from cluster import stackfile as sf

DOC = "docs/stack-file.md"
INTRO = """# The stack file: every key

Generated from `cluster/stackfile.py` by `python -m cluster.formats.reference > docs/stack-file.md`
(a test fails when it is out of date). One structured config key, `gpu-cluster:cluster`, in
`stacks/Pulumi.<env>.yaml`; only `name`, `target` and `node_pools` are required. Values are exact
YAML types: `4` is a count, `"4"` and `4.0` are not. Beside the catalog keys named here, the
catalogs are `cluster/catalog/*.yaml`, each entry with its source.
"""


def _comments() -> dict[tuple[str, str], str]:
    """(class, key) -> the comment written beside or above the key in cluster/stackfile.py."""
    found: dict[tuple[str, str], str] = {}
    current, above = "", list[str]()
    for line in Path(sf.__file__).read_text(encoding="utf-8").splitlines():
        if line.startswith("class "):
            current, above = line[6:].split("(")[0].split(":")[0], []
        elif line.startswith("    # "):
            above.append(line.strip()[2:])
        elif current and re.match(r"^    [a-z_]+: ", line):
            key = line.split(":")[0].strip()
            beside = line.split("  # ", 1)[1] if "  # " in line else ""
            text = " ".join([*above, beside]).strip()
            if text:
                found[(current, key)] = text
            above = []
        else:
            above = []
    return found


def anchor(model: type[BaseModel]) -> str:
    return model.__name__.lower()


def _constraints(metadata: list[Any]) -> list[str]:
    parts: list[str] = []
    for item in metadata:
        for kind, attribute, symbol in ((annotated_types.Ge, "ge", ">="), (annotated_types.Gt, "gt", ">"),
                                        (annotated_types.Le, "le", "<="), (annotated_types.Lt, "lt", "<")):
            if isinstance(item, kind):
                bound = getattr(item, attribute)
                parts.append(f"{symbol} {bound:,}" if isinstance(bound, int) else f"{symbol} {bound:g}")
        if isinstance(item, annotated_types.MinLen):
            parts.append(f"at least {item.min_length}")
        if isinstance(item, annotated_types.MaxLen):
            parts.append(f"at most {item.max_length:,}")
        pattern = getattr(item, "pattern", None)
        if isinstance(pattern, str):
            parts.append(f"pattern `{pattern}`")
        if isinstance(item, FieldInfo):
            parts.extend(_constraints(list(item.metadata)))
    return parts


def type_text(annotation: Any, metadata: list[Any] | None = None) -> tuple[str, list[type[BaseModel]]]:
    """(Markdown type, models it refers to) of an annotation."""
    models: list[type[BaseModel]] = []
    origin = typing.get_origin(annotation)
    extra = _constraints(metadata or [])
    if origin is typing.Annotated:
        base, *inner = typing.get_args(annotation)
        text, models = type_text(base, [*inner, *(metadata or [])])
        return text, models
    if origin in (Union, types.UnionType):
        members = [arg for arg in typing.get_args(annotation) if arg is not type(None)]
        texts = []
        for member in members:
            text, found = type_text(member)
            texts.append(text)
            models.extend(found)
        text = " or ".join(texts)
    elif origin is Literal:
        text = " \\| ".join(f"`{value}`" for value in typing.get_args(annotation))
    elif origin is list:
        item, found = type_text(typing.get_args(annotation)[0])
        models.extend(found)
        text = f"list of {item}"
    elif origin is dict:
        key, _ = type_text(typing.get_args(annotation)[0])
        value, found = type_text(typing.get_args(annotation)[1])
        models.extend(found)
        text = f"mapping of {key} to {value}"
    elif isinstance(annotation, type) and issubclass(annotation, BaseModel):
        models.append(annotation)
        text = f"[{annotation.__name__}](#{anchor(annotation)})"
    else:
        text = getattr(annotation, "__name__", str(annotation))
    if extra:
        text += f" ({', '.join(extra)})"
    return text, models


def default_text(field: FieldInfo) -> str:
    if field.is_required():
        return "**required**"
    value = field.default_factory() if field.default_factory is not None else field.default  # type: ignore[call-arg]
    if value is None or value is PydanticUndefined:
        return "none"
    if isinstance(value, BaseModel):
        return "the defaults of its keys"
    if isinstance(value, list) and not value:
        return "`[]`"
    if isinstance(value, dict) and not value:
        return "`{}`"
    return f"`{value}`"


def reference() -> str:
    """docs/stack-file.md as text."""
    lines = [INTRO]
    comments = _comments()
    queue: list[type[BaseModel]] = [sf.StackFile]
    seen: set[type[BaseModel]] = set()
    while queue:
        model = queue.pop(0)
        if model in seen:
            continue
        seen.add(model)
        title = "gpu-cluster:cluster" if model is sf.StackFile else model.__name__
        lines.append(f'<a id="{anchor(model)}"></a>\n## {title}\n')
        doc = (model.__doc__ or "").strip()
        if doc and not doc.startswith(("A base class", "Usage docs")):
            lines.append(" ".join(doc.split()) + "\n")
        lines.append("| key | type | default | meaning |")
        lines.append("|---|---|---|---|")
        for name, field in model.model_fields.items():
            text, models = type_text(field.annotation, list(field.metadata))
            meaning = comments.get((model.__name__, name), "").replace("|", "\\|")
            lines.append(f"| `{name}` | {text} | {default_text(field)} | {meaning} |")
            queue.extend(found for found in models if found not in seen)
        lines.append("")
    return "\n".join(lines)


if __name__ == "__main__":
    print(reference(), end="")
