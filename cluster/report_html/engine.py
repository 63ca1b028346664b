"""The report's Jinja2 environment: autoescape on, StrictUndefined, compiled once per process.

Separate from cluster.render.engine, whose switch configs must not be HTML-escaped. Every value a
report template prints is escaped for HTML and XML (text and quoted attributes alike), so no
caller escapes anything by hand.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import Any

import jinja2

from cluster.render.engine import build_environment

TEMPLATES = Path(__file__).resolve().parent.parent / "templates" / "report"


@lru_cache(maxsize=1)
def environment() -> jinja2.Environment:
    """One environment per process, so each template is parsed and compiled once."""
    return build_environment(TEMPLATES, autoescape=True)  # every template here is HTML or SVG


def render(name: str, **context: Any) -> str:
    """Render the entry template `name` with a prepared view."""
    return environment().get_template(name).render(**context)
