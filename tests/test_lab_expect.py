"""What `lab` expects, without a lab: the expectations come from the design (cables, addressing,
the OS's own ECMP limit, the QoS plan, the BFD timers), never from the renderer's view of a
switch, and the outage of a probe flow is read from `ping -D`'s stamps."""

from __future__ import annotations

import re

import pytest

from cluster.artifacts import render_tree
from cluster.intent import switch as switch_intent
from cluster.intent.switch import BFD_TIMERS
from cluster.lab.expect import design
from cluster.lab.failure import _loss
from cluster.pipeline import Valid, validate


def _dev() -> Valid:
    result = validate("dev")
    assert isinstance(result, Valid)
    return result


def _devices(result: Valid) -> tuple[set[str], set[str]]:
    topology = result.topology
    switches = {name for name, data in topology.switches() if data["network"] == "fabric"}
    hosts = {name for name in topology.nodes if topology.nodes[name]["kind"] == "host"}
    return switches, hosts


def test_a_renderer_that_narrows_ecmp_does_not_narrow_what_the_lab_expects(monkeypatch: pytest.MonkeyPatch) -> None:
    """A bug in the switch intent (every switch at ECMP 1) reaches the rendered frr.conf, and the
    lab's expectation still holds the design's width: the lab would see the narrowed leaf."""
    result = _dev()
    switches, hosts = _devices(result)
    before = design(result.spec, result.topology, switches, hosts)
    monkeypatch.setattr(switch_intent, "ecmp_widths",
                        lambda topology, names=None: {name: (1, 1) for name in (names or [])})
    tree = render_tree(result.spec, result.topology)
    assert set(re.findall(r"maximum-paths (\d+)", tree["switches/leaf-001-r0/frr.conf"])) == {"1"}
    after = design(result.spec, result.topology, switches, hosts)
    widths = after.routes("leaf-001-r0")
    assert widths == before.routes("leaf-001-r0")
    assert max(widths.values()) == 4  # the leaf's four uplinks (two to each spine)


def test_sessions_come_from_the_cables_with_both_ends_addressed() -> None:
    result = _dev()
    switches, hosts = _devices(result)
    expected = design(result.spec, result.topology, switches, hosts)
    leaf = expected.sessions["leaf-001-r0"]
    assert [(session.peer, session.port) for session in leaf] == [
        ("spine-001", "Ethernet112"), ("spine-001", "Ethernet116"), ("spine-002", "Ethernet120"),
        ("spine-002", "Ethernet124")]
    # each session's reverse holds the other end's address of the same /31
    for session in leaf:
        back = [other for other in expected.sessions[session.peer] if other.peer == "leaf-001-r0"]
        assert any(int(session.peer_address.rsplit(".", 1)[1]) ^ 1 == int(other.peer_address.rsplit(".", 1)[1])
                   for other in back)
    assert expected.bfd == BFD_TIMERS and expected.bfd.detect_ms == 600
    assert (expected.host_mtu, expected.switch_mtu) == (9000, 9216)


PING = """PING 10.128.0.9 (10.128.0.9) from 10.128.0.0 : 56(84) bytes of data.
[1700000000.000000] 64 bytes from 10.128.0.9: icmp_seq=1 ttl=62 time=0.1 ms
[1700000000.017000] 64 bytes from 10.128.0.9: icmp_seq=2 ttl=62 time=0.1 ms
[1700000000.034000] 64 bytes from 10.128.0.9: icmp_seq=3 ttl=62 time=0.1 ms
[1700000000.734000] 64 bytes from 10.128.0.9: icmp_seq=13 ttl=62 time=0.1 ms
[1700000000.751000] 64 bytes from 10.128.0.9: icmp_seq=14 ttl=62 time=0.1 ms

--- 10.128.0.9 ping statistics ---
16 packets transmitted, 5 received, 68.75% packet loss, time 760ms
"""


def test_an_outage_is_the_longest_time_between_replies_not_lost_echoes_times_the_interval() -> None:
    """Nine echoes were lost, but the flow went 0.7 s without a reply: a loaded machine sends
    fewer echoes than one per 10 ms, so counting them said 0.09 s."""
    outage, lost, sent = _loss(PING, stopped=1700000000.800)
    assert outage == pytest.approx(0.700)
    assert (lost, sent) == (11, 16)


def test_a_flow_that_never_recovers_is_out_until_it_stops() -> None:
    outage, _, _ = _loss(PING, stopped=1700000003.751)
    assert outage == pytest.approx(3.0)
    assert _loss("16 packets transmitted, 0 received\n", stopped=1.0)[0] == float("inf")
