"""NVIDIA Cumulus Linux 5.14: NVUE `nv set` commands (forms and sources: docs/dialects.md)."""

from __future__ import annotations

from cluster.render.engine import render
from cluster.render.oob import oob_l2
from cluster.render.views import Switch


def render_switch(switch: Switch) -> dict[str, str]:
    return {"nvue.sh": render("nvue/startup.j2", switch=switch, oob=oob_l2(switch))}
