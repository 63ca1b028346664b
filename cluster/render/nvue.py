"""NVIDIA Cumulus Linux: NVUE `nv set` commands (syntax from the NVUE command reference)."""

from __future__ import annotations

from cluster.render.engine import render
from cluster.render.views import Switch


def render_switch(switch: Switch) -> dict[str, str]:
    return {"nvue.sh": render("nvue/startup.j2", switch=switch)}
