"""BFD as the rendered files state it, read from the files per dialect and checked against the
design: every BGP session of every routed switch (fabric, storage, management) runs BFD with
BFD_TIMERS, and no other. The expected sessions come from the cabling and the address plan (every
link between two switches that have an ASN), not from the views the templates are rendered from."""

from __future__ import annotations

import copy
import json
import re
from pathlib import Path
from typing import Any

import pytest
import yaml

from cluster.addressing import allocate, dotted
from cluster.configs import switch_files
from cluster.intent.switch import BFD_TIMERS, BfdTimers
from cluster.pipeline import Valid, validate, validate_mapping
from cluster.render import engine
from cluster.spec import ClusterSpec
from cluster.topology import Topology
from tests.conftest import ROOT, copy_templates
from tests.test_ecmp import wide_leaves

CONTRACT = yaml.safe_load((ROOT / "stacks" / "Pulumi.contract.yaml").read_text())["config"]["gpu-cluster:cluster"]
IPV4 = r"\d+\.\d+\.\d+\.\d+"

# Documented ranges (docs/reference/dialects.md): (transmit/receive ms, multiplier)
RANGES = {
    "frr": ((10, 60000), (2, 255)),  # FRR 8.4 user guide, BFD: receive-/transmit-interval, detect-multiplier
    "nvue": ((50, 60000), (2, 255)),  # NVUE reference, BGP: neighbor bfd min-rx-/min-tx-interval, detect-multiplier
    "eos": ((50, 60000), (3, 50)),  # AVD v5.0 schema router_bgp neighbors[].bfd_timers
}
BGP_HOLD_MS = 9000  # `timers bgp 3 9` (FRR), the datacenter default the other dialects match


def _timers(transmit: str | None, receive: str | None, multiplier: str | None) -> BfdTimers | None:
    """The stated timers, or None where the config leaves any of them to the platform's default."""
    if transmit is None or receive is None or multiplier is None:
        return None
    return BfdTimers(int(transmit), int(receive), int(multiplier))


def read_frr(text: str) -> tuple[set[str], dict[str, BfdTimers | None]]:
    """(BGP neighbors, {neighbor: its BFD timers}) of a frr.conf: a neighbor runs BFD when it or its
    peer group has `bfd` or `bfd profile NAME`; the timers are that profile's in the `bfd` block."""
    profiles: dict[str, BfdTimers | None] = {}
    block = re.search(r"^bfd\n((?:[ !].*\n)*?)exit$", text, re.M)
    for name, body in re.findall(r"^ profile (\S+)\n((?:  .*\n)*)", block[1] if block else "", re.M):
        values = dict(re.findall(r"^  (\S+) (\d+)$", body, re.M))
        profiles[name] = _timers(values.get("transmit-interval"), values.get("receive-interval"),
                                 values.get("detect-multiplier"))
    bfd: dict[str, BfdTimers | None] = {}
    for who, profile in re.findall(r"^ neighbor (\S+) bfd(?: profile (\S+))?$", text, re.M):
        bfd[who] = profiles.get(profile) if profile else None
    groups = dict(re.findall(rf"^ neighbor ({IPV4}) peer-group (\S+)$", text, re.M))
    sessions = {peer: bfd.get(peer, bfd.get(group)) for peer, group in groups.items()
                if peer in bfd or group in bfd}
    return set(groups), sessions


def read_nvue(text: str) -> tuple[set[str], dict[str, BfdTimers | None]]:
    neighbors = set(re.findall(rf"^nv set vrf default router bgp neighbor ({IPV4}) remote-as ", text, re.M))
    settings: dict[str, dict[str, str]] = {}
    for peer, key, value in re.findall(rf"^nv set vrf default router bgp neighbor ({IPV4}) bfd (\S+) (\S+)$", text, re.M):
        settings.setdefault(peer, {})[key] = value
    sessions = {peer: _timers(values.get("min-tx-interval"), values.get("min-rx-interval"),
                              values.get("detect-multiplier"))
                for peer, values in settings.items() if values.get("enable") == "on"}
    return neighbors, sessions


def read_eos(text: str) -> tuple[set[str], dict[str, BfdTimers | None]]:
    neighbors = set(re.findall(rf"^   neighbor ({IPV4}) remote-as ", text, re.M))
    stated = {peer: BfdTimers(int(tx), int(rx), int(multiplier)) for peer, tx, rx, multiplier in re.findall(
        rf"^   neighbor ({IPV4}) bfd interval (\d+) min-rx (\d+) multiplier (\d+)$", text, re.M)}
    sessions = {peer: stated.get(peer) for peer in re.findall(rf"^   neighbor ({IPV4}) bfd$", text, re.M)}
    return neighbors, sessions


READERS = {"frr.conf": read_frr, "nvue.sh": read_nvue, "eos.cfg": read_eos}


def designed_sessions(spec: ClusterSpec, topology: Topology) -> dict[str, set[str]]:
    """{switch: the peer address of each of its BGP sessions}: both ends of every switch-to-switch
    link between two routed switches (the ones with an ASN)."""
    addresses = allocate(spec, topology)
    sessions: dict[str, set[str]] = {}
    for (lower, upper, _, _), base in addresses.links.items():
        if lower in addresses.asns and upper in addresses.asns:
            sessions.setdefault(lower, set()).add(dotted(base + 1))
            sessions.setdefault(upper, set()).add(dotted(base))
    return sessions


def bfd_problems(spec: ClusterSpec, topology: Topology, files: dict[str, str]) -> list[str]:
    """Every way the rendered switch configs differ from the design's BFD: a BGP session without BFD
    or with other timers, BFD where the design has no session, a routed SONiC switch whose bgp
    container would not start bfdd."""
    designed = designed_sessions(spec, topology)
    asns = allocate(spec, topology).asns
    problems: list[str] = []
    rendered = set()
    for path, text in sorted(files.items()):
        _, switch, name = path.split("/")
        if name not in READERS and name != "config_db.json":
            continue  # no BGP in it (SONiC's users.sh)
        if name == "config_db.json":
            metadata = json.loads(text)["DEVICE_METADATA"]["localhost"]
            if switch in asns and metadata.get("frr_mgmt_framework_config") != "true":
                problems.append(f"{switch}: frr_mgmt_framework_config is not true, bfdd does not start")
            continue
        rendered.add(switch)
        neighbors, sessions = READERS[name](text)
        expected = designed.get(switch, set())
        if neighbors != expected:
            problems.append(f"{switch}: BGP neighbors {sorted(neighbors ^ expected)} differ from the design")
        for peer in sorted(expected - set(sessions)):
            problems.append(f"{switch}: BGP neighbor {peer} without BFD")
        for peer in sorted(set(sessions) - expected):
            problems.append(f"{switch}: BFD towards {peer}, which is no BGP session of the design")
        for peer, timers in sorted(sessions.items()):
            if peer in expected and timers != BFD_TIMERS:
                problems.append(f"{switch}: BFD towards {peer} with {timers or 'the platform default timers'}")
    fabric_by_sm = spec.fabric is not None and spec.fabric.transport == "infiniband"
    for switch in sorted(set(designed) - rendered):
        if not (fabric_by_sm and topology.graph.nodes[switch]["network"] == "fabric"):
            problems.append(f"{switch}: BGP sessions in the design but no switch config")
    return problems


def _contract_on(os: str) -> dict[str, Any]:
    """The contract example with every network on one dialect, so storage and management spines
    (routed, with BGP sessions of their own) are rendered in it too."""
    data = copy.deepcopy(CONTRACT)
    if os == "eos":
        data["fabric"]["leaf"] = {"ports": 64, "port_gbps": 400, "os": "eos"}
        for tier in ("spine", "core"):
            data["fabric"][tier]["os"] = "eos"
        for network in ("storage", "management"):
            data[network]["leaf"]["os"] = "eos"
    else:
        def sn5600(gbps: int, ports: int | None = None) -> dict[str, Any]:
            return {"switch": "SN5600", "port_gbps": gbps, "os": "sonic", **({"ports": ports} if ports else {})}
        data["fabric"].update(leaf=sn5600(400), spine=sn5600(400), core=sn5600(400))
        data["storage"]["leaf"] = sn5600(200, 48)
        data["management"]["leaf"] = sn5600(100, 32)
    return data


STACKS = [str(path.relative_to(ROOT)) for path in sorted((ROOT / "stacks").glob("Pulumi.*.yaml"))]
GOLDEN = [str(path.relative_to(ROOT)) for path in sorted((ROOT / "tests" / "golden" / "stacks").glob("*.yaml"))]
VARIANTS = {"contract-eos": lambda: _contract_on("eos"), "contract-sonic": lambda: _contract_on("sonic"),
            "wide-eos": lambda: wide_leaves("eos"), "wide-sonic": lambda: wide_leaves("sonic")}


def _design(source: str) -> tuple[ClusterSpec, Topology]:
    result = validate_mapping(source, VARIANTS[source]()) if source in VARIANTS else validate(str(ROOT / source))
    assert isinstance(result, Valid), [str(f) for f in result.findings]
    return result.spec, result.topology


@pytest.mark.parametrize("source", [*STACKS, *GOLDEN, *VARIANTS])
def test_every_bgp_session_of_the_design_runs_bfd_with_the_timers(source: str) -> None:
    spec, topology = _design(source)
    if spec.target != "onprem":
        pytest.skip(f"{source} is a cloud stack: no switch configs")
    files, _ = switch_files(spec, topology, allocate(spec, topology))
    assert bfd_problems(spec, topology, files) == []


def test_the_examples_cover_every_dialect_and_routed_network() -> None:
    """The table above reaches BFD in each dialect on fabric, storage and management sessions."""
    covered: set[tuple[str, str]] = set()
    for source in [*STACKS, *GOLDEN, *VARIANTS]:
        spec, topology = _design(source)
        if spec.target != "onprem":
            continue
        files, _ = switch_files(spec, topology, allocate(spec, topology))
        for path, text in files.items():
            name = path.rsplit("/", 1)[1]
            if name in READERS and READERS[name](text)[1]:
                covered.add((name, topology.graph.nodes[path.split("/")[1]]["network"]))
    assert covered == {(name, network) for name in READERS for network in ("fabric", "storage", "management")}


def _without_bfd_lines(tmp_path: Path, template: str, pattern: str) -> Path:
    """A copy of the templates in which `template` lost every line matching `pattern`."""
    copied = tmp_path / "templates"
    copy_templates(copied)
    path = copied / template
    kept = [line for line in path.read_text().splitlines(keepends=True) if not re.search(pattern, line)]
    assert len(kept) < len(path.read_text().splitlines()), (template, pattern)
    path.write_text("".join(kept))
    return copied


@pytest.mark.parametrize(("golden", "template", "pattern", "found"), [
    ("sonic", "frr/_bgp.j2", r"^ neighbor .* bfd", "without BFD"),
    ("sonic", "frr/_bfd.j2", r"^  receive-interval", "platform default timers"),
    ("nvue", "nvue/_bgp.j2", r"^nv set .* bfd ", "without BFD"),
    ("nvue", "nvue/_bgp.j2", r"^nv set .* bfd enable", "without BFD"),
    ("nvue", "nvue/_bgp.j2", r"^nv set .* bfd min-tx-interval", "platform default timers"),
    ("eos", "eos/_bgp.j2", r"^   neighbor .* bfd", "without BFD"),
    ("eos", "eos/_bgp.j2", r"^   neighbor .* bfd interval", "platform default timers"),
])
def test_a_template_that_drops_bfd_fails_the_check(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, golden: str,
                                                   template: str, pattern: str, found: str) -> None:
    spec, topology = _design(f"tests/golden/stacks/{golden}.yaml")
    broken = engine.build_environment(_without_bfd_lines(tmp_path, template, pattern), autoescape=False)
    monkeypatch.setattr(engine, "environment", lambda: broken)
    files, _ = switch_files(spec, topology, allocate(spec, topology))
    problems = bfd_problems(spec, topology, files)
    assert problems and all(found in problem for problem in problems), problems
    assert {problem.split(":")[0] for problem in problems} == set(designed_sessions(spec, topology))


def test_a_sonic_switch_without_bfdd_fails_the_check() -> None:
    spec, topology = _design("tests/golden/stacks/sonic.yaml")
    files, _ = switch_files(spec, topology, allocate(spec, topology))
    path = "switches/spine-001/config_db.json"
    files[path] = files[path].replace('"frr_mgmt_framework_config": "true", ', "")
    assert bfd_problems(spec, topology, files) == ["spine-001: frr_mgmt_framework_config is not true, bfdd does not start"]


@pytest.mark.parametrize("dialect", sorted(RANGES))
def test_the_timers_are_within_every_dialects_documented_range(dialect: str) -> None:
    (low, high), (fewest, most) = RANGES[dialect]
    assert low <= BFD_TIMERS.transmit_ms <= high and low <= BFD_TIMERS.receive_ms <= high
    assert fewest <= BFD_TIMERS.multiplier <= most


def test_a_silent_peer_is_detected_within_a_second_well_before_the_hold_timer() -> None:
    assert BFD_TIMERS.detect_ms == 600
    assert BFD_TIMERS.detect_ms < 1000 < BGP_HOLD_MS


@pytest.mark.parametrize(("timers", "detect_ms"), [
    (BfdTimers(200, 200, 3), 600),
    (BfdTimers(100, 300, 4), 1200),  # the peer sends no faster than we asked: 300 ms agreed
    (BfdTimers(300, 50, 3), 900),
])
def test_detection_time_is_the_agreed_interval_times_the_multiplier(timers: BfdTimers, detect_ms: int) -> None:
    assert timers.detect_ms == detect_ms
