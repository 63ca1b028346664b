"""Validate a SONiC config_db.json against SONiC's own YANG models, with SONiC's own loader.

The models (`src/sonic-yang-models/yang-models/`) and the loader `sonic_yang`
(`src/sonic-yang-mgmt/`) are unmodified upstream copies in `../shared/vendor/sonic/` (see its
PROVENANCE.md). `sonic_yang` crops the config to the tables that have a model, translates
config_db's table/key layout into a YANG data tree (lists, keys, leaf-lists, typed values) and
hands that tree to libyang, which parses and validates it: types and patterns, mandatory
leaves, unknown leaves, keys, leafrefs, `must` and `when`.

One adaptation, the libyang-version caveat of PROVENANCE.md: upstream's loader targets libyang 3
and passes `json_string_datatypes=True` (numbers and booleans given as JSON strings, as
config_db writes them). The PyPI bindings that build against Debian 12's libyang 2.1 have no
such flag, so the translated tree is handed to libyang as XML instead, where every value is
text and the schema types it; nothing is dropped on the way (every JSON member becomes one
element, every array item one element).
"""

from __future__ import annotations

import json
import sys
from functools import cache
from pathlib import Path
from typing import Any
from xml.sax.saxutils import escape, quoteattr

ROOT = Path(__file__).resolve().parent.parent
VENDOR = ROOT.parent / "shared" / "vendor" / "sonic"
YANG_MODELS = VENDOR / "src" / "sonic-yang-models" / "yang-models"
LOADER = VENDOR / "src" / "sonic-yang-mgmt"
SAMPLE = VENDOR / "src" / "sonic-yang-models" / "tests" / "files" / "sample_config_db.json"


def unavailable() -> str | None:
    """Why the harness cannot run here, or None."""
    if not (YANG_MODELS / "sonic-port.yang").is_file() or not (LOADER / "sonic_yang.py").is_file():
        return f"SONiC YANG models or sonic_yang not found under {VENDOR}"
    try:
        import jsonpointer  # noqa: F401  (sonic_yang_path imports it)
        import libyang  # noqa: F401
    except ImportError as error:
        return f"python package missing ({error}); pip install -r requirements.txt"
    return None


class YangError(Exception):
    """The config does not load: libyang's message, or the tables SONiC has no model for."""


def _xml(name: str, value: Any, modules: dict[str, str]) -> str:
    """One RFC 7951 JSON member as XML: a `module:name` member opens that module's namespace;
    an array is one element per item (list entries, leaf-list values)."""
    attrs = ""
    if ":" in name:
        module, name = name.split(":", 1)
        attrs = f" xmlns={quoteattr(modules[module])}"
    items = value if isinstance(value, list) and value != [None] else [value]
    return "".join(_element(name, attrs, item, modules) for item in items)


def _element(name: str, attrs: str, value: Any, modules: dict[str, str]) -> str:
    if isinstance(value, dict):
        inner = "".join(_xml(key, item, modules) for key, item in value.items())
        return f"<{name}{attrs}>{inner}</{name}>"
    if value is None or value == [None]:
        return f"<{name}{attrs}/>"  # an `empty` leaf
    text = "true" if value is True else "false" if value is False else str(value)
    prefix, _, rest = text.partition(":")
    if rest and prefix in modules:
        # an identityref in JSON form `module:identity`: XML needs the prefix declared
        attrs += f" xmlns:{prefix}={quoteattr(modules[prefix])}"
    return f"<{name}{attrs}>{escape(text)}</{name}>"


class _XmlContext:
    """The loader's libyang context, with JSON data parsing redirected to XML (see above)."""

    def __init__(self, ctx: Any) -> None:
        from libyang.util import c2str

        self._ctx = ctx
        self.modules = {module.name(): c2str(module.cdata.ns) for module in ctx}  # the bindings have no ns()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._ctx, name)

    def __iter__(self) -> Any:
        return iter(self._ctx)

    def parse_data_mem(self, data: str, fmt: str, json_string_datatypes: bool = False, **flags: Any) -> Any:
        if fmt != "json":
            return self._ctx.parse_data_mem(data, fmt, **flags)
        tree = json.loads(data)
        xml = "".join(_xml(name, value, self.modules) for name, value in tree.items())
        return self._ctx.parse_data_mem(xml, "xml", **flags)


@cache
def _loader() -> Any:
    if str(LOADER) not in sys.path:
        sys.path.insert(0, str(LOADER))
    import sonic_yang

    loader = sonic_yang.SonicYang(str(YANG_MODELS), print_log_enabled=False)
    loader.loadYangModel()
    loader.ctx = _XmlContext(loader.ctx)
    return loader


def validate(config: dict[str, Any], allow_unmodelled: frozenset[str] = frozenset()) -> None:
    """Raise YangError unless `config` (a config_db.json mapping) loads and validates.

    A table with no YANG model is an error too (SONiC's loader would silently leave it out, and
    so would SONiC's validation): pass the tables known to have none in `allow_unmodelled`.
    """
    loader = _loader()
    if loader.root is not None:
        loader.root.free()
        loader.root = None
    try:
        loader.loadData(config, quiet=True)
    except Exception as error:  # sonic_yang raises SonicYangException with libyang's message
        raise YangError(str(error)) from None
    unmodelled = sorted(set(loader.tablesWithOutYang) - allow_unmodelled)
    if unmodelled:
        raise YangError(f"tables with no YANG model: {', '.join(unmodelled)}")


def errors(config: dict[str, Any]) -> str:
    """'' when `config` validates, else the loader's message."""
    try:
        validate(config)
    except YangError as error:
        return str(error)
    return ""
