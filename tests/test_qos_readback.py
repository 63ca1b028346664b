"""Does every rendered file carry exactly its QoS intent? The host script (both its mlnx_qos and
its dcb path) and a fabric leaf of every switch dialect are rendered from generated QoS plans and
read back (cluster.readback, each reader starting from the device's own defaults): all 64
DSCPs on the intent's priority, PFC on exactly the intent's lossless priorities, the intent's MTU.
Validation renders nothing; this is where a template that stops writing the plan is caught."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cluster.intent.qos import QosPlan, qos_intent
from cluster.pipeline import Valid, validate_mapping
from cluster.readback import qos_dialects, read_back
from cluster.render import engine
from tests.conftest import copy_templates, stack


@st.composite
def qos_plans(draw: st.DrawFn) -> dict[str, Any]:
    """A QoS section that passes QOS-PFC-MAP's own checks: four distinct DSCPs, CNP on a priority of
    its own without PFC, RoCE lossless in lossless mode (storage may share it or have its own)."""
    dscps = draw(st.lists(st.integers(0, 63), min_size=4, max_size=4, unique=True))
    roce, cnp = draw(st.lists(st.integers(0, 7), min_size=2, max_size=2, unique=True))
    storage = draw(st.sampled_from(sorted({roce} | set(range(8)) - {cnp})))
    management = draw(st.integers(0, 7).filter(lambda priority: priority not in (roce, cnp)))
    lossless = draw(st.booleans())
    pfc = sorted({roce} | ({storage} if lossless and storage != roce and draw(st.booleans()) else set()))
    low = draw(st.integers(10_000, 1_000_000))
    return {"mode": "lossless" if lossless else "lossy",
            "roce": {"dscp": dscps[0], "priority": roce}, "cnp": {"dscp": dscps[1], "priority": cnp},
            "storage": {"dscp": dscps[2], "priority": storage}, "management": {"dscp": dscps[3], "priority": management},
            "pfc_priorities": pfc if lossless else [], "ecn": {"min_bytes": low, "max_bytes": low * 10},
            "mtu": draw(st.sampled_from([4200, 9000, 9216]))}


def _spec(qos: dict[str, Any]) -> Valid:
    result = validate_mapping("t", stack(qos=qos))
    assert isinstance(result, Valid), [f.message for f in result.findings]
    return result


def problems(result: Valid) -> list[str]:
    """Every way a rendered file states another plan than its intent."""
    assert result.spec.qos is not None
    intent = qos_intent(result.spec.qos)
    found = []
    for label, side in read_back(result.spec, result.topology).items():
        plan: QosPlan = intent.host if label.startswith("host") else intent.switch
        for dscp, priority in plan.dscp_map:
            if side.dscp_to_priority[dscp] != priority:
                found.append(f"{label}: DSCP {dscp} on {side.dscp_to_priority[dscp]}, intent {priority}")
        if side.pfc_priorities != frozenset(plan.lossless):
            found.append(f"{label}: PFC {sorted(side.pfc_priorities)}, intent {list(plan.lossless)}")
        if side.mtu != plan.mtu:
            found.append(f"{label}: MTU {side.mtu}, intent {plan.mtu}")
    return found


def test_every_dialect_and_both_host_paths_are_read_back() -> None:
    labels = set(read_back(_spec({}).spec, _spec({}).topology))
    assert labels == {"host script (mlnx_qos)", "host script (dcb)"} | {f"{os} switch config" for os in qos_dialects()}
    assert len(qos_dialects()) == 3  # every Ethernet dialect in cluster/dialects/


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(qos_plans())
def test_every_rendered_file_carries_exactly_its_qos_intent(qos: dict[str, Any]) -> None:
    assert problems(_spec(qos)) == []


# (template, text, replacement, a problem the read-back must report): the faults these catch are the
# widely shared ones (a hard-coded priority, the platform's default map or lossless set left in place)
BROKEN_TEMPLATES = [
    ("host/_nic_qos.j2", "--dscp2prio set,{{ dscp }},{{ priority }}", "--dscp2prio set,{{ dscp }},5",
     "host script (mlnx_qos): DSCP 26 on 5, intent 3"),
    ("host/_nic_qos.j2", "  mlnx_qos -i \"$dev\" --dscp2prio set,{{ dscp }},{{ priority }}\n", "",
     "host script (mlnx_qos): DSCP 24 on 3, intent 0"),  # the ConnectX default, DSCP >> 3
    ("host/_nic_qos.j2", "nic.qos.dscp_map", "nic.qos.dscp_to_priority",
     "host script (mlnx_qos): DSCP 27 on 3, intent 0"),  # only the planned DSCPs mapped
    ("nvue/_qos.j2", "nv set qos pfc default-global switch-priority {{ qos.lossless_csv }}",
     "nv set qos pfc default-global switch-priority 4", "nvue switch config: PFC [4], intent [3]"),
    ("nvue/_qos.j2", 'dscp {{ dscps | join(",") }} switch-priority {{ priority }}',
     'dscp {{ dscps | join(",") }} switch-priority 3',
     "nvue switch config: DSCP 10 on 3, intent 1"),  # storage on RoCE's priority
    ("nvue/_qos.j2", "{% for priority, dscps in qos.dscps_by_priority %}",
     "{% for priority, dscps in qos.dscps_by_priority if priority != qos.default_priority %}",
     "nvue switch config: DSCP 24 on 3, intent 0"),  # Cumulus' DSCP >> 3 left for the rest
    ("eos/_qos.j2", "{% for priority, dscps in qos.dscps_by_priority %}",
     "{% for priority, dscps in qos.dscps_by_priority if priority != qos.default_priority %}",
     "eos switch config: DSCP 24 on 3, intent 0"),  # EOS's default map left for the rest
    ("eos/_interfaces.j2", "priority-flow-control priority {{ priority }} no-drop", "! no PFC",
     "eos switch config: PFC [], intent [3]"),
]


@pytest.mark.parametrize(("partial", "line", "broken", "expected"), BROKEN_TEMPLATES,
                         ids=[f"{case[0]}:{case[3].split(':')[0]}" for case in BROKEN_TEMPLATES])
def test_a_template_that_stops_writing_the_plan_is_caught(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                          partial: str, line: str, broken: str, expected: str) -> None:
    templates = tmp_path / "templates"
    copy_templates(templates)
    path = templates / partial
    assert line in path.read_text()
    path.write_text(path.read_text().replace(line, broken))
    monkeypatch.setattr(engine, "TEMPLATES", (templates,))
    engine.environment.cache_clear()
    try:
        found = problems(_spec({}))
    finally:
        monkeypatch.undo()
        engine.environment.cache_clear()
    assert expected in found, found


def test_a_sonic_writer_left_with_the_default_lossless_set_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    from cluster.dialects.sonic import render as sonic

    original = sonic.qos_tables

    def platform_default(*args: Any) -> dict[str, Any]:
        tables = original(*args)
        for entry in tables["PORT_QOS_MAP"].values():
            if "pfc_enable" in entry:
                entry["pfc_enable"] = "3,4"  # SONiC's own default, which a plan must override
        return tables

    monkeypatch.setattr(sonic, "qos_tables", platform_default)
    assert "sonic switch config: PFC [3, 4], intent [3]" in problems(_spec({}))
