"""The Jinja2 environment: compiled once per run, StrictUndefined, no autoescape (configs are not HTML).

Templates are found in cluster/templates (shared: FRR, cloud) and in each dialect's folder,
cluster/dialects/<name>/templates/<name>/, so a template is named `<name>/<file>` wherever it lives."""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import Any

import jinja2

_CLUSTER = Path(__file__).resolve().parent.parent
TEMPLATES: tuple[Path, ...] = (_CLUSTER / "templates", *sorted(_CLUSTER.glob("dialects/*/templates")))


def build_environment(templates: Path | tuple[Path, ...], autoescape: bool) -> jinja2.Environment:
    """The project's template settings: StrictUndefined, trimmed blocks, trailing newlines kept;
    autoescape only for HTML/SVG (cluster.report_html.engine), never for configs."""
    return jinja2.Environment(
        loader=jinja2.FileSystemLoader([str(templates)] if isinstance(templates, Path) else [str(t) for t in templates]),
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
        autoescape=autoescape,
    )


@lru_cache(maxsize=1)
def environment() -> jinja2.Environment:
    """One environment per process, so each template is parsed and compiled once."""
    return build_environment(TEMPLATES, autoescape=False)


def render(name: str, **context: Any) -> str:
    """Render the entry template `name` with a prepared view."""
    return environment().get_template(name).render(**context)
