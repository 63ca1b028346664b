"""The Jinja2 environment: compiled once per run, StrictUndefined, no autoescape (configs are not HTML)."""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import Any

import jinja2

TEMPLATES = Path(__file__).resolve().parent.parent / "templates"


def build_environment(templates: Path, autoescape: bool) -> jinja2.Environment:
    """The project's template settings: StrictUndefined, trimmed blocks, trailing newlines kept;
    autoescape only for HTML/SVG (cluster.report_html.engine), never for configs."""
    return jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(templates)),
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
