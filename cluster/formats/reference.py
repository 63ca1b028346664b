"""The stack-file reference (docs/reference/stack-file.md), generated from the pydantic models of
cluster/stackfile.py (every key, its type and range or allowed values, its default) and from the
catalog's models and data (cluster/catalog: every GPU, server, switch model and cloud instance type a
catalog key can name, what each implies, its source; the defaults). A test keeps the file current;
SCHEMA hints point to it.

    python -m cluster.formats.reference > docs/reference/stack-file.md
"""

from __future__ import annotations

import re
import types
import typing
from collections.abc import Callable
from pathlib import Path
from typing import Any, Literal, Union

import annotated_types
from pydantic import BaseModel
from pydantic.fields import FieldInfo
from pydantic_core import PydanticUndefined

from cluster import stackfile as sf
from cluster.breakout import breakout
from cluster.catalog import Catalog, Entry, Gpu, Instance, NcclProfile, Server, Switch, load_catalog
from cluster.dialects import platforms

DOC = "docs/reference/stack-file.md"
INTRO = """# The stack file: every key

Generated from `cluster/stackfile.py` and the catalog (`cluster/catalog/`) by
`python -m cluster.formats.reference > docs/reference/stack-file.md` (a test fails when it is out of date). One
structured config key, `gpu-cluster:cluster`, in `stacks/Pulumi.<env>.yaml`; only `name`, `target`
and `node_pools` are required. Values are exact YAML types: `4` is a count, `"4"` and `4.0` are not.
The keys that name a catalog entry (`gpu`, `server`, `instance_type`, a switch's `switch`) link to
[the catalog](#catalog) at the end: every value they accept, what it implies and its source
([GPUs](#catalog-gpus), [servers](#catalog-servers), [switches](#catalog-switches),
[instance types](#catalog-instance-types), [defaults](#catalog-defaults)).
"""

# Stack-file keys whose values or defaults come from the catalog: (class, key) -> (section, anchor).
# The meanings are cluster/stackfile.py's comments; the link is added here.
CATALOG_LINKS: dict[tuple[str, str], tuple[str, str]] = {
    ("NodePool", "gpu"): ("GPUs", "catalog-gpus"),
    ("NodePool", "gpus_per_node"): ("GPUs", "catalog-gpus"),
    ("NodePool", "server"): ("servers", "catalog-servers"),
    ("NodePool", "instance_type"): ("instance types", "catalog-instance-types"),
    ("NodePool", "fabric_nics"): ("servers", "catalog-servers"),
    ("NodePool", "storage_nics"): ("servers", "catalog-servers"),
    ("NodePool", "management_nics"): ("servers", "catalog-servers"),
    ("Fabric", "transport"): ("switches", "catalog-switches"),
    ("Fabric", "leaf"): ("default switches", "catalog-defaults"),
    ("Network", "leaf"): ("default switches", "catalog-defaults"),
    ("Network", "spine"): ("default switches", "catalog-defaults"),
    ("SwitchRef", "switch"): ("switches", "catalog-switches"),
    ("SwitchRef", "port_gbps"): ("switches", "catalog-switches"),
    ("SwitchRef", "uplink_ports"): ("switches", "catalog-switches"),
    ("SwitchRef", "os"): ("switches", "catalog-switches"),
}


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
    else:  # a plain type, named by its Field's title where it reads more than the type (Ratio)
        titles = [item.title for item in metadata or [] if isinstance(item, FieldInfo) and item.title]
        text = titles[0] if titles else getattr(annotation, "__name__", str(annotation))
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
    if isinstance(value, list) and all(isinstance(item, BaseModel) for item in value):
        return "; ".join(f"`{value_text(item)}`" for item in value)
    if isinstance(value, dict) and not value:
        return "`{}`"
    return f"`{value}`"


# ----- the catalog part: one table per catalog, columns from the entry model's fields

CATALOG_INTRO = """<a id="catalog"></a>
## Catalog

Generated from the models of `cluster/catalog/__init__.py` and the data of `cluster/catalog/*.yaml`, in
the files' order. A column named like a field (`memory_gb`) is that field of the entry; `more` holds
the entry's other fields that differ from their defaults. `status` is the VERIFIED / PARTIAL /
UNVERIFIED words the entry's source note uses, in the order they first appear: the note, given whole
under each table, says what each word covers. Speeds are Gbps per port; `8 x 400G` is 8 NICs (or
ports) at 400 Gbps.
"""

# The words the catalog's source notes grade their facts with. The notes themselves are long: they
# go whole into a list under each table, and a cell shows only these words.
STATUS_WORD = re.compile(r"\b(?:UNVERIFIED|VERIFIED|PARTIAL)\b")


def is_note(name: str) -> bool:
    """A field that says where an entry's facts come from (`source`, `runs_source`, ...)."""
    return name == "source" or name.endswith("_source")


def _md(text: str, table: bool = True) -> str:
    """Catalog text as Markdown: one line, `<slot>` outside code spans shown rather than taken as HTML,
    `|` escaped in a table cell (GFM splits cells before it reads code spans)."""
    parts = " ".join(text.split()).split("`")
    if len(parts) % 2 == 0:  # an unpaired backtick opens no code span
        parts = ["\\`".join(parts)]
    for index in range(0, len(parts), 2):
        parts[index] = parts[index].replace("<", "&lt;").replace(">", "&gt;")
    joined = "`".join(parts)
    return joined.replace("|", "\\|") if table else joined


def _differs(model: BaseModel, name: str) -> bool:
    """The field is worth a word: required, or set to something other than its default or nothing."""
    field = type(model).model_fields[name]
    value = getattr(model, name)
    return field.is_required() or (value != field.default and value not in ((), {}, "", None))


def value_text(value: Any, inner: bool = False) -> str:
    """One field value as cell text: a NIC or port set as `count x gbpsG` plus its other fields that
    differ from their defaults, any other entry model as its fields, collections joined."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, NcclProfile):  # the variables and their reasons are `export`'s nccl/<pool>.env
        return f"{value.transport}; {len(value.env)} environment variables"
    if isinstance(value, BaseModel):
        names = [name for name in type(value).model_fields if not is_note(name)]
        head = ""
        if "count" in names and "gbps" in names:
            head = f"{value.count} x {value.gbps}G"  # type: ignore[attr-defined]
            names = [name for name in names if name not in ("count", "gbps") and _differs(value, name)]
        rest = [f"{name} {value_text(getattr(value, name), inner=True)}" for name in names]
        return ", ".join(part for part in (head, *rest) if part)
    if isinstance(value, (tuple, list)):
        return (" " if inner else ", ").join(value_text(item, inner) for item in value)
    if isinstance(value, dict):
        return ", ".join(f"{key}: {value_text(item, inner=True)}" for key, item in value.items())
    return str(value)


def _port_modes(key: str, switch: Switch) -> str:
    return ", ".join(f"{count} x {gbps}G" for gbps, count in switch.port_modes.items())


def _cages(key: str, switch: Switch) -> str:
    """`64 x 8 lanes of 100G: 1x800G, 2x400G, ..., 8x100G odd cages`: the split the port namers use
    (cluster.breakout.breakout, which reads the shipped catalog's entry of `key`)."""
    cages = switch.cages
    if cages is None:
        return ""
    modes = []
    for gbps in switch.port_modes:
        split = breakout(key, gbps)
        if split is not None:
            modes.append(f"{split.ports}x{gbps}G" + (" odd cages" if split.step == 2 else ""))
    return f"{cages.count} x {cages.lanes} lanes of {cages.lane_gbps}G: {', '.join(modes)}"


Cell = typing.Callable[[str, Any], str]


def _entry_table(entries: dict[str, Entry], model: type[Entry], columns: list[str | tuple[str, Cell]] | None,
                 cells: dict[str, Cell] | None = None) -> list[str]:
    """A table of `entries` (key -> `model`): `columns` (field names, or (title, cell of key and entry)),
    default every field that is no source note; the other fields in `more`; the status words."""
    cells = cells or {}
    facts = [name for name in model.model_fields if not is_note(name)]
    shown: list[str | tuple[str, Cell]] = list(columns) if columns is not None else list(facts)
    unknown = [column for column in shown if isinstance(column, str) and column not in facts]
    assert not unknown, f"{model.__name__} has no field {unknown}"
    rest = [name for name in facts if name not in shown]
    titles = [column if isinstance(column, str) else column[0] for column in shown]
    header = ["key", *titles, *(["more"] if rest else []), "status"]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for key, entry in entries.items():
        row = [f"`{key}`"]
        for column in shown:
            if isinstance(column, str):
                cell = cells.get(column)
                row.append(cell(key, entry) if cell else value_text(getattr(entry, column)))
            else:
                row.append(column[1](key, entry))
        if rest:
            row.append("; ".join(_more(name, getattr(entry, name)) for name in rest if _differs(entry, name)))
        source = getattr(entry, "source", "")
        row.append(", ".join(dict.fromkeys(STATUS_WORD.findall(source))) or "not stated")
        lines.append("| " + " | ".join(_md(cell) if index else cell for index, cell in enumerate(row)) + " |")
    return lines


def _more(name: str, value: Any) -> str:
    """A field of the `more` column; per-dialect data (a switch's `dialects`) as one part per dialect."""
    if name == "dialects" and isinstance(value, dict):
        return "; ".join(f"`{dialect}`: " + ", ".join(f"{key} {value_text(item, inner=True)}"
                                                       for key, item in data.items() if not is_note(key))
                         for dialect, data in value.items())
    return f"`{name}`: {value_text(value)}"


def notes(model: BaseModel, prefix: str = "") -> list[tuple[str, str]]:
    """(dotted field, text) of every source note of an entry and of the entry models inside it."""
    found: list[tuple[str, str]] = []
    for name in type(model).model_fields:
        value = getattr(model, name)
        if is_note(name) and isinstance(value, str) and value:
            found.append((prefix + name, value))
        elif isinstance(value, BaseModel):
            found.extend(notes(value, f"{prefix}{name}."))
        elif name == "dialects" and isinstance(value, dict):  # a switch's per-dialect data
            found.extend((f"{prefix}{dialect}.{key}", text) for dialect, data in value.items()
                         for key, text in data.items() if is_note(key) and isinstance(text, str) and text)
    return found


def _sources(title: str, entries: dict[str, Entry]) -> list[str]:
    """Every source note of every entry, whole: the entry's own first, then its parts' (`cages.source`)."""
    lines = ["", f"Sources of the {title}, whole:", ""]
    for key, entry in entries.items():
        found = notes(entry)
        own = [text for field, text in found if field == "source"]
        lines.append(f"- `{key}`: {_md(' '.join(own), table=False)}")
        lines += [f"  - `{field}`: {_md(text, table=False)}" for field, text in found if field != "source"]
    return lines


def _section(anchor_id: str, title: str, text: str, table: list[str], sources: list[str]) -> str:
    return "\n".join([f'<a id="{anchor_id}"></a>', f"## Catalog: {title}", "", text, "", *table, *sources, ""])


def _default_use(key: str) -> str:
    """The stack-file key a `switch_defaults` entry fills: `fabric_roce` -> fabric.leaf, transport roce."""
    network, _, rest = key.partition("_")
    if network == "fabric" and rest in ("roce", "infiniband"):
        return f"`fabric.leaf` when `fabric.transport` is `{rest}`" + (" or omitted" if rest == "roce" else "")
    return f"`{network}.{rest or 'leaf'}`"


def _defaults(catalog: Catalog) -> str:
    servers = ["| `gpu` | server | from |", "|---|---|---|"]
    for gpu in catalog.gpus:
        given = gpu in catalog.server_defaults
        servers.append(f"| `{gpu}` | `{catalog.default_server(gpu)}` | "
                       f"{'servers.yaml `defaults`' if given else 'no entry there: the fallback'} |")
    switches = ["| default | switch | used for |", "|---|---|---|"]
    switches += [f"| `{key}` | `{model}` | {_default_use(key)} |" for key, model in catalog.switch_defaults.items()]
    return "\n".join([
        '<a id="catalog-defaults"></a>', "## Catalog: defaults", "",
        "The server of a pool without `server` (on premises): its GPU's default server, whose NIC sets are the "
        "pool's `fabric_nics`, `storage_nics` and `management_nics` unless the pool gives them.", "", *servers, "",
        "The switch of an omitted `leaf` or `spine`. The fabric's spine and core default to its leaf's model. "
        "An omitted storage or management leaf, and an omitted storage, management or oob spine, is the "
        "catalog model with the lowest switch cost at that speed among the models priced in "
        "`cluster/catalog/prices.yaml`; the switch below is used when none fits.", "", *switches, ""])


def catalog_reference(catalog: Catalog) -> str:
    """The catalog part of docs/reference/stack-file.md: GPUs, servers, switches, instance types, defaults."""
    instances: dict[str, Entry] = {name: entry for by_type in catalog.instances.values() for name, entry in by_type.items()}
    provider = {name: target for target, by_type in catalog.instances.items() for name in by_type}

    def dialect_column(cell: Callable[[str], str]) -> Cell:
        return lambda key, switch: cell(key)

    columns = [entry.reference_column for entry in platforms().values() if entry.reference_column is not None]

    def target(key: str, instance: Instance) -> str:
        return provider[key]

    gpus: dict[str, Entry] = dict(catalog.gpus)
    servers: dict[str, Entry] = dict(catalog.servers)
    switches: dict[str, Entry] = dict(catalog.switches)
    return "\n".join([
        CATALOG_INTRO,
        _section("catalog-gpus", "GPUs",
                 "Values of `node_pools[].gpu` (cluster/catalog/gpus.yaml). `gpus_per_node`: GPUs on the standard "
                 "board, a pool's default unless its `server` says otherwise; `nvlink_domain`: GPUs in one scale-up "
                 "(NVLink / Infinity Fabric) domain; `scale_up_gbytes_per_s`: scale-up GB/s per GPU, both directions. The "
                 "default server of each GPU is under [defaults](#catalog-defaults).",
                 _entry_table(gpus, Gpu, None), _sources("GPUs", gpus)),
        _section("catalog-servers", "servers",
                 "Values of `node_pools[].server` on premises (cluster/catalog/servers.yaml): the GPU it carries "
                 "(none: any) and its NIC sets per node, the defaults of the pool's `fabric_nics`, `storage_nics` "
                 "and `management_nics`. `ports_per_nic` and `ports_per_cage` are shown where not 1, `devices` (the "
                 "RDMA device per port in rail order) where the catalog names them (else mlx5_0, mlx5_1, ...).",
                 _entry_table(servers, Server, None), _sources("servers", servers)),
        _section("catalog-switches", "switches",
                 "Values of `switch` in a `leaf`, `spine` or `core` (cluster/catalog/switches.yaml). `port_modes`: "
                 "the ports at each speed `port_gbps` may choose (breakouts counted); `cages`: the front-panel cages "
                 "and the breakout each speed is (`odd cages`: every even neighbour disabled); `uplink_ports`: fixed "
                 "ports beside those; `os`: the default dialect, `runs`: the dialects `os` may name"
                 + "".join(f"; `{heading}`: {meaning}" for heading, meaning, _ in columns) + ". "
                 + "InfiniBand models make the fabric's transport `infiniband`; an `ethernet` model carries RoCE. "
                 + "The storage, management and oob networks are Ethernet: an InfiniBand model there is a SCHEMA error.",
                 _entry_table(switches, Switch,
                              ["transport", "port_modes", "cages", "uplink_ports", "os", "runs",
                               *((heading, dialect_column(cell)) for heading, _, cell in columns)],
                              {"port_modes": _port_modes, "cages": _cages}),
                 _sources("switches", switches)),
        _section("catalog-instance-types", "instance types",
                 "Values of `node_pools[].instance_type` on a cloud `target` (cluster/catalog/instances.yaml); the "
                 "pool's `gpu` comes from here. `fabric`: the GPU-to-GPU NICs the provider attaches and their kind "
                 "(EFA, GPUDirect-TCPX(O), RDMA, InfiniBand); `total_gbps`: the fabric bandwidth per node; "
                 "`nccl`: the NCCL environment the provider documents, written by `export` with each "
                 "variable's reason.",
                 _entry_table(instances, Instance,
                              [("provider", target), "gpu", "gpus", "fabric", "total_gbps", "vcpus", "memory_gib"]),
                 _sources("instance types", instances)),
        _defaults(catalog),
    ])


def reference() -> str:
    """docs/reference/stack-file.md as text."""
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
            titled = [FieldInfo(title=field.title)] if field.title else []  # pydantic lifts a type's title here
            text, models = type_text(field.annotation, [*field.metadata, *titled])
            meaning = _md(comments.get((model.__name__, name), ""))
            if (model.__name__, name) in CATALOG_LINKS:
                section, target = CATALOG_LINKS[(model.__name__, name)]
                meaning = f"{meaning}; see [{section}](#{target})" if meaning else f"see [{section}](#{target})"
            lines.append(f"| `{name}` | {text} | {default_text(field)} | {meaning} |")
            queue.extend(found for found in models if found not in seen)
        lines.append("")
    return "\n".join(lines) + "\n" + catalog_reference(load_catalog())


if __name__ == "__main__":
    print(reference(), end="")
