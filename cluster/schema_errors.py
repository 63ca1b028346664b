"""Pydantic validation errors as SCHEMA findings: dotted config paths, the keys a mapping knows,
and a hint per kind of error."""

from __future__ import annotations

import difflib
import re
from typing import Any

from pydantic import BaseModel, ValidationError

from cluster import stackfile as sf
from cluster.findings import Finding, safe_repr, schema, shown

_SAFE_KEY = re.compile(r"[A-Za-z0-9_-]{1,64}")
_TYPE_TAGS = {"float", "int", "str", "bool", "list", "dict", "none"}


def _is_union_tag(part: str) -> bool:
    """Pydantic names a union member in the location: `float`, `TierOversubscription`, `function-after[...]`."""
    return part in _TYPE_TAGS or "[" in part or part.startswith("constrained-") or isinstance(getattr(sf, part, None), type)


def dotted(loc: tuple[int | str, ...]) -> str:
    """('node_pools', 0, 'nodes') -> node_pools[0].nodes; keeps user keys such as costs.prices.SN5600,
    drops pydantic's union tags and keys that are not safe to print (the message names those)."""
    path = ""
    for part in loc:
        if isinstance(part, int):
            path += f"[{part}]"
        elif not _is_union_tag(part) and _SAFE_KEY.fullmatch(part):
            path = f"{path}.{part}" if path else part
    return path


def _model_at(loc: tuple[int | str, ...]) -> type[BaseModel] | None:
    """The stack-file model that owns the key at `loc`, for listing the keys it knows."""
    model: type[BaseModel] | None = sf.StackFile
    for part in loc[:-1]:
        if model is None or isinstance(part, int):
            continue
        field = model.model_fields.get(str(part))
        if field is None:
            return None
        model = _first_model(field.annotation)
    return model


def _first_model(annotation: Any) -> type[BaseModel] | None:
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    for arg in getattr(annotation, "__args__", ()) or ():
        found = _first_model(arg)
        if found is not None:
            return found
    return None


def pydantic_findings(error: ValidationError) -> list[Finding]:
    findings = []
    errors = error.errors()
    # A misspelt key is one mistake, not two: `gpbs` is unknown and `gbps` is missing.
    renamed: dict[tuple[int | str, ...], str] = {}
    missing = {tuple(item["loc"]) for item in errors if item["type"] == "missing"}
    for item in errors:
        loc = tuple(item["loc"])
        owner = _model_at(loc) if item["type"] == "extra_forbidden" else None
        if owner is not None and isinstance(loc[-1], str):
            candidates = [key for key in owner.model_fields if (*loc[:-1], key) in missing] or list(owner.model_fields)
            close = difflib.get_close_matches(loc[-1], candidates, n=1, cutoff=0.6)
            if close:
                renamed[loc] = close[0]
    suggested = {(*loc[:-1], key) for loc, key in renamed.items()}
    for item in errors:
        loc = tuple(item["loc"])
        if item["type"] == "missing" and loc in suggested:
            continue
        path = dotted(loc) or "(top)"
        found = item.get("input")
        found_text = safe_repr(found) if not isinstance(found, (dict, list)) else type(found).__name__
        if len(found_text) > 60:
            found_text = found_text[:57] + "..."
        kind = item["type"]
        if kind == "extra_forbidden" and loc in renamed:
            findings.append(schema(path, f"unknown key `{shown(loc[-1])}`: did you mean `{renamed[loc]}`?",
                                   f"rename `{shown(loc[-1])}` to `{renamed[loc]}`"))
        elif kind == "extra_forbidden":
            owner = _model_at(loc)
            known = ", ".join(sorted(owner.model_fields)) if owner else ""
            findings.append(
                schema(path, f"unknown key `{shown(loc[-1])}`", f"remove it or fix its spelling; known keys here: {known}")
            )
        elif kind == "missing":
            findings.append(schema(path, f"required key `{loc[-1]}` is missing", f"add `{loc[-1]}`"))
        else:
            message = item["msg"].replace("Value error, ", "")
            owner = _model_at(loc) or sf.StackFile
            reference = f"docs/reference/stack-file.md#{owner.__name__.lower()}"
            findings.append(
                schema(path, f"{message}; found {found_text}",
                       _hint_for(kind, path, reference, (item.get("ctx") or {}).get("pattern")))
            )
    # A mapping given for a union field fails the scalar member too; the errors inside the
    # mapping are the ones that help.
    nested = {f.path for f in findings}
    findings = [
        f for f in findings
        if not (f.message.startswith("Input should be a valid") and any(p.startswith(f.path + ".") for p in nested))
    ]
    # A wrong value for a union field (a ratio or a per-tier mapping) fails once per member:
    # report it once, naming both forms.
    unique: dict[str, Finding] = {}
    for finding in findings:
        earlier = unique.get(finding.path)
        if earlier is None:
            unique[finding.path] = finding
        elif earlier.message != finding.message and "found" in finding.message:
            found = finding.message.rsplit("; found ", 1)[-1]
            unique[finding.path] = schema(
                finding.path, f"expected a ratio such as 1.0, or per tier {{leaf: 1.0, spine: 2.0}}; found {found}",
                earlier.hint,
            )
    return list(unique.values())


# hints for a pattern error by the pattern's meaning (stackfile's named patterns)
PATTERN_HINTS = {
    sf.IPV4_PATTERN: "write an IPv4 address such as 192.0.2.10 (four numbers 0-255, no hostname)",
    sf.PLAIN_TEXT_PATTERN: "write one line of letters, digits, spaces and . , : ; ! ? ( ) @ _ + / = - (no quote, `$` "
                           "or backslash: the text reaches switch configs and scripts)",
    sf.USER_NAME_PATTERN: "use a login name of lowercase letters, digits, '_' and '-', starting with a letter or '_', "
                          "at most 31 characters",
}


def _hint_for(kind: str, path: str, reference: str, pattern: object = None) -> str:
    if kind.endswith("_parsing") or kind.endswith("_type"):
        return f"give {path} a value of the type shown in {reference}"
    if kind.startswith("string_pattern") and isinstance(pattern, str) and pattern in PATTERN_HINTS:
        return PATTERN_HINTS[pattern]
    if kind.startswith("string_pattern"):
        if path.rsplit(".", 1)[-1] in {"switch", "gpu", "server", "instance_type"}:
            return "use a catalog key (letters, digits, '.', '_', '+', '-'), as listed in docs/reference/stack-file.md#catalog"
        if path.startswith("addressing."):
            return "write an IPv4 CIDR such as 10.0.0.0/16 (no spaces)"
        if ".ssh_cidrs" in path:
            return "write a CIDR such as 203.0.113.0/24 or 2001:db8::/48 (no spaces, no %scope)"
        if path.endswith(".ssh_public_key"):
            return "give one line `type base64 [comment]` (as in id_ed25519.pub), no shell characters in the comment"
        if path.endswith(".image"):
            return "give the image id, URL or family as the provider names it (letters, digits, '_', '.', '/', ':', '-')"
        if path.endswith(".reservation"):
            return "give the reservation id as the provider prints it (letters, digits, '_', '.', '/', ':', '-')"
        return "use lowercase letters, digits and '-' (a DNS label), starting and ending with a letter or digit"
    if kind in {"literal_error", "enum"}:
        return "use one of the values listed"
    if kind in {"greater_than", "greater_than_equal", "less_than", "less_than_equal"}:
        return "use a value within the range shown"
    return f"see {reference} for this key"


# --------------------------------------------------------------------------- resolve
