"""The QoS plan as the rendered files state it, read from the files (not the templates) per dialect:
every one of the 64 DSCPs mapped explicitly exactly once, the lossless priorities exactly the
plan's PFC priorities, no unplanned DSCP on a lossless priority, every planned priority on a queue
of its own, ECN only on the RoCE queue. The platform's default map is never relied on."""

from __future__ import annotations

import copy
import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml

from cluster.configs import render_configs
from cluster.intent.qos import classes
from cluster.pipeline import Valid, validate, validate_mapping
from cluster.stackfile import Qos
from tests.conftest import ROOT

PROD = yaml.safe_load((ROOT / "stacks" / "Pulumi.prod.yaml").read_text())["config"]["gpu-cluster:cluster"]
NVUE_PROFILE_ECN = {0, 3}  # `nv set qos roce` marks ECN on TC 0 and 3 (Cumulus Linux 5.14 RoCE page)


@dataclass
class Stated:
    """What one switch config says, explicitly."""

    dscp_lines: dict[int, list[int]]  # DSCP -> every priority a line gives it (must be exactly one)
    lossless: set[int]
    queue_of: dict[int, int]  # priority -> queue / traffic class, explicit lines only
    ecn_queues: set[int]


def _csv(text: str, sep: str = ",") -> list[int]:
    return [int(value) for value in text.split(sep) if value]


def read_nvue(text: str) -> Stated:
    dscps: dict[int, list[int]] = {}
    for values, priority in re.findall(r"^nv set qos mapping default-global dscp (\S+) switch-priority (\d+)$", text, re.M):
        for dscp in _csv(values):
            dscps.setdefault(dscp, []).append(int(priority))
    lossless = {p for values in re.findall(r"^nv set qos pfc default-global switch-priority (\S+)$", text, re.M)
                for p in _csv(values)}
    queue_of = {int(sp): int(tc) for sp, tc in re.findall(
        r"^nv set qos egress-queue-mapping default-global switch-priority (\d+) traffic-class (\d+)$", text, re.M)}
    ecn = set(NVUE_PROFILE_ECN) if re.search(r"^nv set qos roce\b", text, re.M) else set()
    for tc, state in re.findall(r"^nv set qos congestion-control default-global traffic-class (\d+) ecn (\w+)$",
                                text, re.M):
        (ecn.add if state == "enable" else ecn.discard)(int(tc))
    return Stated(dscps, lossless, queue_of, ecn)


def read_eos(text: str) -> Stated:
    dscps: dict[int, list[int]] = {}
    for values, tc in re.findall(r"^qos map dscp ([\d ]+) to traffic-class (\d+)$", text, re.M):
        for dscp in _csv(values, " "):
            dscps.setdefault(dscp, []).append(int(tc))
    queue_of = {int(tc): int(queue) for tc, queue in re.findall(r"^qos map traffic-class (\d+) to tx-queue (\d+)$",
                                                                text, re.M)}
    lossless: set[int] | None = None
    ecn: set[int] = set()
    for block in re.split(r"^interface ", text, flags=re.M)[1:]:
        if "   qos trust dscp" not in block:
            continue
        port_lossless = {int(p) for p in re.findall(r"^   priority-flow-control priority (\d+) no-drop$", block, re.M)}
        assert lossless is None or port_lossless == lossless, "ports differ in their lossless priorities"
        lossless = port_lossless
        for queue, body in re.findall(r"^   uc-tx-queue (\d+)\n((?:      .*\n)*)", block, re.M):
            if "random-detect ecn" in body:
                ecn.add(int(queue))
    return Stated(dscps, lossless or set(), queue_of, ecn)


def read_sonic(text: str) -> Stated:
    db = json.loads(text)
    ports = {name: entry for name, entry in db["PORT_QOS_MAP"].items() if name != "global"}
    names = {entry["dscp_to_tc_map"] for entry in ports.values()}
    assert len(names) == 1
    dscps = {int(dscp): [int(tc)] for dscp, tc in db["DSCP_TO_TC_MAP"][names.pop()].items()}
    pfc = {entry["pfc_enable"] for entry in ports.values()}
    assert len(pfc) == 1
    tc_queue = {entry["tc_to_queue_map"] for entry in ports.values()}
    queue_of = {int(tc): int(queue) for tc, queue in db["TC_TO_QUEUE_MAP"][tc_queue.pop()].items()}
    ecn = {int(key.split("|")[1]) for key, entry in db["QUEUE"].items() if "wred_profile" in entry}
    return Stated(dscps, set(_csv(pfc.pop())), queue_of, ecn)


READERS = {"nvue.sh": read_nvue, "eos.cfg": read_eos, "config_db.json": read_sonic}


def problems(stated: Stated, qos: Qos, nvue: bool) -> list[str]:
    """Everything the rendered file gets wrong against the plan."""
    found = []
    planned = {dscp: priority for dscp, priority in classes(qos).values()}
    pfc = set(qos.pfc_priorities) if qos.mode == "lossless" else set()
    for dscp in range(64):
        lines = stated.dscp_lines.get(dscp, [])
        if len(lines) != 1:
            found.append(f"DSCP {dscp} mapped {len(lines)} times")
        elif dscp in planned and lines[0] != planned[dscp]:
            found.append(f"DSCP {dscp} on priority {lines[0]}, plan {planned[dscp]}")
        elif dscp not in planned and lines[0] in pfc:
            found.append(f"unplanned DSCP {dscp} on lossless priority {lines[0]}")
    if stated.lossless != pfc:
        found.append(f"lossless priorities {sorted(stated.lossless)}, plan {sorted(pfc)}")
    queues = {}
    for name, (_, priority) in classes(qos).items():
        if priority not in stated.queue_of:
            found.append(f"{name} priority {priority} has no queue")
        else:
            queues[name] = stated.queue_of[priority]
    for name in ("cnp", "storage"):
        if name in queues and queues[name] == queues.get("roce") and classes(qos)[name][1] != qos.roce.priority:
            found.append(f"{name} shares the RoCE queue {queues['roce']}")
    roce_queue = queues.get("roce")
    if roce_queue is not None and stated.ecn_queues != {roce_queue}:
        found.append(f"ECN on queues {sorted(stated.ecn_queues)}, plan only the RoCE queue {roce_queue}")
    return found


def fabric_configs(files: dict[str, str], inventory: dict[str, Any]) -> list[tuple[str, str, str]]:
    """(switch, file name, text) of every RoCE fabric switch config."""
    out = []
    for path, text in sorted(files.items()):
        parts = Path(path).parts
        if parts[0] == "switches" and parts[2] in READERS and inventory[parts[1]]["network"] == "fabric":
            out.append((parts[1], parts[2], text))
    return out


def check_design(files: dict[str, str], qos: Qos) -> list[str]:
    inventory = json.loads(files["inventory.json"])["switches"]
    configs = fabric_configs(files, inventory)
    assert configs, "no fabric switch config rendered"
    found = []
    for switch, name, text in configs:
        found += [f"{switch}/{name}: {problem}" for problem in problems(READERS[name](text), qos, name == "nvue.sh")]
    return found


def _stacks() -> list[Path]:
    paths = sorted((ROOT / "stacks").glob("Pulumi.*.yaml")) + sorted((ROOT / "tests" / "golden" / "stacks").glob("*.yaml"))
    return [path for path in paths if "infiniband" not in path.name]


@pytest.mark.parametrize("path", _stacks(), ids=lambda path: path.stem)
def test_every_example_states_the_whole_plan(path: Path) -> None:
    result = validate(str(path))
    if not result.ok or not isinstance(result, Valid) or result.spec.qos is None:
        pytest.skip(f"{path.name}: no rendered RoCE fabric (fails validation on purpose, cloud, or InfiniBand)")
    if result.spec.fabric is not None and result.spec.fabric.transport != "roce":
        pytest.skip(f"{path.name}: InfiniBand fabric")
    assert check_design(render_configs(result.spec, result.topology), result.spec.qos) == []


PLANS = {
    "default": {},
    "roce-on-2-storage-on-3": {"roce": {"dscp": 34, "priority": 2}, "storage": {"dscp": 26, "priority": 3},
                               "pfc_priorities": [2]},
    "storage-lossless": {"pfc_priorities": [3, 1]},
    "lossy": {"mode": "lossy", "pfc_priorities": []},
    "cnp-46-on-5": {"cnp": {"dscp": 46, "priority": 5}},
}


@pytest.mark.parametrize("os", ["nvue", "eos", "sonic"])
@pytest.mark.parametrize("plan", sorted(PLANS))
def test_every_dialect_states_any_plan(os: str, plan: str) -> None:
    data = copy.deepcopy(PROD)
    data["qos"] = {**data.get("qos", {}), **PLANS[plan]}
    data["fabric"]["leaf"]["os"] = os
    data["fabric"]["spine"]["os"] = os
    if os == "eos":  # an SN5600 does not run EOS: an Arista box of the same size
        data["fabric"]["leaf"]["switch"] = data["fabric"]["spine"]["switch"] = "7060X6"
    result = validate_mapping("t", data)
    assert isinstance(result, Valid) and result.spec.qos is not None, result.findings
    errors = [f for f in result.findings if str(f.severity) == "error" and not f.suppressed]
    assert errors == [], errors
    assert check_design(render_configs(result.spec, result.topology), result.spec.qos) == []


def test_the_check_fails_on_a_partial_map() -> None:
    """The readers see the fault this issue fixed: only the planned DSCPs mapped (DSCP 24-31 left
    to Cumulus' default, which puts them on the lossless priority 3)."""
    qos = Qos()
    partial = "\n".join(["nv set qos roce mode lossless", "nv set qos pfc default-global switch-priority 3",
                         *(f"nv set qos mapping default-global dscp {d} switch-priority {p}"
                           for d, p in ((0, 0), (10, 1), (26, 3), (48, 6))),
                         *(f"nv set qos egress-queue-mapping default-global switch-priority {p} traffic-class {t}"
                           for p, t in ((0, 0), (3, 3), (6, 6)))]) + "\n"
    found = problems(read_nvue(partial), qos, True)
    assert "DSCP 24 mapped 0 times" in found
    assert "storage priority 1 has no queue" in found
    assert "ECN on queues [0, 3], plan only the RoCE queue 3" in found
