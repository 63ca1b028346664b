"""Arista EOS 4.33: CLI running-config (forms and sources: docs/dialects.md)."""

from __future__ import annotations

from cluster.render.engine import render
from cluster.render.oob import oob_l2
from cluster.render.views import Switch


def render_switch(switch: Switch) -> dict[str, str]:
    return {"eos.cfg": render("eos/startup.j2", switch=switch, oob=oob_l2(switch))}
