"""Arista EOS: CLI running-config (QoS syntax per FACTS.md 4.3, PARTIAL)."""

from __future__ import annotations

from cluster.render.engine import render
from cluster.render.views import Switch


def render_switch(switch: Switch) -> dict[str, str]:
    return {"eos.cfg": render("eos/startup.j2", switch=switch)}
