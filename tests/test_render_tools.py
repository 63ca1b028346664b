"""Rendered artifacts checked by the real tools: iproute2 tc and ip in a network namespace,
FRR's vtysh --dryrun, and Python's json parser for SONiC config_db.json."""

from __future__ import annotations

import copy
import json
import os
import re
import shlex
import shutil
import subprocess
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import yaml

from cluster.ecmp import MAX_PATHS
from cluster.pipeline import validate, validate_mapping
from cluster.qos import switch_plan
from cluster.render import render_tree
from tests.conftest import ROOT, missing_tool
from tests.test_ecmp import wide_leaves

PROD = yaml.safe_load((ROOT / "stacks" / "Pulumi.prod.yaml").read_text())["config"]["gpu-cluster:cluster"]
MISSING_MODULE = re.compile(r"unknown|not found|Failed to load", re.I)
KNOWN_SONIC_TABLES = {
    "DEVICE_METADATA", "MGMT_PORT", "PORT", "DEVICE_NEIGHBOR", "LOOPBACK_INTERFACE", "INTERFACE",
    "DSCP_TO_TC_MAP", "TC_TO_QUEUE_MAP", "TC_TO_PRIORITY_GROUP_MAP", "MAP_PFC_PRIORITY_TO_QUEUE",
    "PFC_PRIORITY_TO_PRIORITY_GROUP_MAP", "WRED_PROFILE", "SCHEDULER", "PORT_QOS_MAP", "QUEUE", "CABLE_LENGTH",
    "PFC_WD", "VLAN", "VLAN_MEMBER", "PORTCHANNEL", "PORTCHANNEL_MEMBER", "STP", "STP_VLAN", "STP_PORT",
}


def render_mapping(data: dict[str, Any]) -> dict[str, str]:
    result = validate_mapping("t", data)
    assert result.ok and result.spec is not None and result.topology is not None
    return render_tree(result.spec, result.topology)


def dscp46_prod() -> dict[str, Any]:
    data = copy.deepcopy(PROD)
    data["qos"]["roce"] = {"dscp": 46, "priority": 3}
    data["fabric"]["leaf"]["os"] = "sonic"
    return data


# --------------------------------------------------------------------------- tc / ip in a namespace


@dataclass
class Applied:
    namespace: str
    ok: list[str] = field(default_factory=list)
    missing: list[tuple[str, str]] = field(default_factory=list)  # (line, tc's message)
    failed: list[tuple[str, int, str]] = field(default_factory=list)

    def run(self, *argv: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(["ip", "netns", "exec", self.namespace, *argv], capture_output=True, text=True,
                              timeout=30, check=False)


def _need_root_and_iproute() -> None:
    if os.geteuid() != 0:
        pytest.skip("network namespaces need root (CI runs as root)")
    if shutil.which("ip") is None or shutil.which("tc") is None:
        missing_tool("iproute2 is not installed (listed in .ci/apt-packages.txt)")


def tc_lines(script: str) -> list[str]:
    return [line.strip() for line in script.splitlines() if line.strip().startswith("tc ")]


@pytest.fixture(scope="module")
def namespace_with_rails() -> Iterator[Applied]:
    """A namespace of its own with one veth pair per rail (rail0..rail7 <-> peer0..peer7)."""
    _need_root_and_iproute()
    name = f"gc-render-{uuid.uuid4().hex[:8]}"
    subprocess.run(["ip", "netns", "add", name], check=True, timeout=30)
    applied = Applied(name)
    try:
        for rail in range(8):
            result = applied.run("ip", "link", "add", f"rail{rail}", "type", "veth", "peer", "name", f"peer{rail}")
            assert result.returncode == 0, result.stderr
            for device in (f"rail{rail}", f"peer{rail}"):
                applied.run("ip", "link", "set", device, "up")
        yield applied
    finally:
        subprocess.run(["ip", "netns", "del", name], check=False, timeout=30)


@pytest.fixture(scope="module")
def dscp46_files() -> dict[str, str]:
    return render_mapping(dscp46_prod())


@pytest.fixture(scope="module")
def tc_applied(namespace_with_rails: Applied, dscp46_files: dict[str, str]) -> Applied:
    """Every tc line of the rendered host script, in order, with the machine's own tc."""
    applied = namespace_with_rails
    lines = tc_lines(dscp46_files["hosts/h200/qos.sh"])
    assert len(lines) > 50
    for line in lines:
        if line.endswith("2>/dev/null || true"):
            # an idempotency guard (delete what a previous run left); its failure is expected on a fresh device
            applied.run("bash", "-c", line)
            continue
        result = applied.run(*shlex.split(line))
        if result.returncode == 0:
            applied.ok.append(line)
        elif result.returncode == 2 and MISSING_MODULE.search(result.stderr):
            applied.missing.append((line, result.stderr.strip().splitlines()[0]))
        else:
            applied.failed.append((line, result.returncode, result.stderr.strip()))
    return applied


def test_real_tc_accepts_every_rendered_line(tc_applied: Applied) -> None:
    assert tc_applied.failed == [], tc_applied.failed
    assert tc_applied.ok, "no tc line applied"
    for line, message in tc_applied.missing:
        print(f"kernel module missing here (not a syntax error): {line}: {message}")


def test_dscp_46_filter_reads_back_as_the_correct_dsfield_match(tc_applied: Applied) -> None:
    shown = tc_applied.run("tc", "filter", "show", "dev", "rail0", "parent", "1:").stdout
    blocks = shown.split("filter parent 1: protocol ip pref ")
    roce = [block for block in blocks if "*flowid 1:13" in block]
    assert roce and "match 00b80000/00fc0000 at 0" in roce[0], shown
    assert "match 00280000/00fc0000 at 0" in shown  # storage DSCP 10
    assert "match 00c00000/00fc0000 at 0" in shown  # CNP DSCP 48
    classes = tc_applied.run("tc", "class", "show", "dev", "rail7").stdout
    assert "class htb 1:13 parent 1:1" in classes and "class htb 1:16 parent 1:1 prio 0" in classes


def test_hardware_priority_lines_apply_where_the_kernel_has_skbedit(tc_applied: Applied) -> None:
    skbedit = [line for line in tc_lines_of(tc_applied) if "skbedit" in line]
    missing = [message for line, message in tc_applied.missing if "skbedit" in line]
    if missing:
        pytest.skip(f"this kernel lacks the skbedit action ({missing[0]}); the lines parsed (exit 2, not 1)")
    shown = tc_applied.run("tc", "filter", "show", "dev", "rail0", "egress").stdout
    assert skbedit and "skbedit" in shown and "priority 3" in shown


def tc_lines_of(applied: Applied) -> list[str]:
    return applied.ok + [line for line, _ in applied.missing]


def test_a_broken_tc_line_is_caught(namespace_with_rails: Applied) -> None:
    """The check cannot pass vacuously: the widely shared `match ip dscp` is rejected with exit 1."""
    result = namespace_with_rails.run(*shlex.split(
        "tc filter add dev peer0 parent ffff: protocol ip prio 1 u32 match ip dscp 46 0xfc flowid 1:1"))
    assert result.returncode == 1 and "Illegal" in result.stderr


def test_rail_routing_section_applies_with_real_ip(namespace_with_rails: Applied, dscp46_files: dict[str, str]) -> None:
    script = dscp46_files["hosts/h200/qos.sh"]
    section = script[script.index('case "$HOST" in'):script.rindex('echo "qos.sh:')]
    program = "set -euo pipefail\nHOST=h200-node-002\n" + section
    result = namespace_with_rails.run("bash", "-c", program)
    assert result.returncode == 0, result.stderr
    rules = namespace_with_rails.run("ip", "rule", "show").stdout
    assert "from 10.128.0.16 lookup 100" in rules and "from 10.128.0.30 lookup 107" in rules
    table = namespace_with_rails.run("ip", "route", "show", "table", "103").stdout
    assert "default via 10.128.0.23 dev rail3" in table
    main = namespace_with_rails.run("ip", "route", "show", "10.128.0.0/11").stdout
    assert main.count("nexthop via") == 8
    sysctl = namespace_with_rails.run("sysctl", "-n", "net.ipv4.conf.rail5.arp_ignore", "net.ipv4.conf.rail5.arp_announce",
                                      "net.ipv4.conf.rail5.rp_filter").stdout.split()
    assert sysctl == ["1", "2", "2"]


# --------------------------------------------------------------------------- FRR


def _vtysh() -> str:
    path = shutil.which("vtysh")
    if path is None:
        missing_tool("FRR is not installed (Debian `frr`, listed in .ci/apt-packages.txt)")
    return path


def _dryrun(path: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([_vtysh(), "--dryrun", "-f", str(path)], capture_output=True, text=True, timeout=60, check=False)


def _frr_files() -> dict[str, str]:
    files: dict[str, str] = {}
    for stack in ("dev", "tests/golden/stacks/infiniband.yaml"):
        result = validate(stack if "/" not in stack else str(ROOT / stack))
        assert result.spec is not None and result.topology is not None
        files.update({f"{stack}:{path}": text for path, text in render_tree(result.spec, result.topology).items()
                      if path.endswith("frr.conf")})
    files.update({f"dscp46:{path}": text for path, text in render_mapping(dscp46_prod()).items() if path.endswith("frr.conf")})
    # 128 uplinks per leaf: `maximum-paths 128` on the leaves, 32 on the spines
    files.update({f"wide:{path}": text for path, text in render_mapping(wide_leaves("sonic")).items()
                  if path.endswith("frr.conf")})
    return files


def test_real_frr_accepts_every_rendered_bgp_config(tmp_path: Path) -> None:
    files = _frr_files()
    assert len(files) >= 10
    for index, (name, text) in enumerate(sorted(files.items())):
        path = tmp_path / f"{index}.conf"
        path.write_text(text)
        result = _dryrun(path)
        assert result.returncode == 0, (name, result.stdout, result.stderr)


def test_real_frr_installs_exactly_as_many_paths_as_the_renderer_allows(tmp_path: Path) -> None:
    """FRR's multipath limit (a build option, 256 in Debian's and SONiC's FRR builds before 512) is the
    cap cluster.ecmp renders with: the limit parses, one more does not."""
    text = next(text for name, text in sorted(_frr_files().items()) if name.startswith("wide:") and "leaf-001-r0" in name)
    assert "  maximum-paths 128\n" in text
    for paths, accepted in ((MAX_PATHS["sonic"], True), (MAX_PATHS["sonic"] + 1, False)):
        path = tmp_path / f"{paths}.conf"
        path.write_text(text.replace("  maximum-paths 128\n", f"  maximum-paths {paths}\n"))
        assert (_dryrun(path).returncode == 0) is accepted, paths


def test_real_frr_rejects_a_broken_config(tmp_path: Path) -> None:
    text = next(text for name, text in sorted(_frr_files().items()) if "spine-001" in name)
    assert "remote-as external" in text
    path = tmp_path / "broken.conf"
    path.write_text(text.replace("remote-as external", "remote-as outside"))
    result = _dryrun(path)
    assert result.returncode != 0, result.stdout


# --------------------------------------------------------------------------- SONiC config_db.json


@pytest.mark.parametrize("source", ["dev", "dscp46", "tests/golden/stacks/infiniband.yaml"])
def test_every_sonic_config_db_parses_with_real_tables_and_the_plans_pfc(source: str) -> None:
    if source == "dscp46":
        data = dscp46_prod()
        result = validate_mapping("t", data)
    else:
        result = validate(source if "/" not in source else str(ROOT / source))
    assert result.spec is not None and result.topology is not None
    files = render_tree(result.spec, result.topology)
    plan = switch_plan(result.spec.qos) if result.spec.qos is not None else None
    checked = 0
    for path, text in sorted(files.items()):
        if not path.endswith("config_db.json"):
            continue
        db = json.loads(text)
        checked += 1
        assert set(db) <= KNOWN_SONIC_TABLES, set(db) - KNOWN_SONIC_TABLES
        name = path.split("/")[1]
        fabric_roce = plan is not None and result.topology.graph.nodes[name]["network"] == "fabric"
        if not fabric_roce:
            assert "PORT_QOS_MAP" not in db
            continue
        assert plan is not None
        assert db["DEVICE_METADATA"]["localhost"]["buffer_model"] == "dynamic"  # buffermgrd sizes lossless PGs
        maps = db["DSCP_TO_TC_MAP"]["ROCE"]
        assert {int(d): int(tc) for d, tc in maps.items() if int(d) in plan.dscp_to_priority} == plan.dscp_to_priority
        expected_pfc = ",".join(str(p) for p in sorted(plan.pfc_priorities))
        ports = [port for port in db["PORT_QOS_MAP"] if port != "global"]
        assert ports and all(db["PORT_QOS_MAP"][port]["pfc_enable"] == expected_pfc for port in ports)
        roce = result.spec.qos.roce.priority if result.spec.qos else 3
        cnp = result.spec.qos.cnp.priority if result.spec.qos else 6
        assert db["QUEUE"][f"{ports[0]}|{roce}"]["wred_profile"] == "ROCE_ECN"
        assert db["SCHEDULER"][db["QUEUE"][f"{ports[0]}|{cnp}"]["scheduler"]]["type"] == "STRICT"
        assert "wred_profile" not in db["QUEUE"][f"{ports[0]}|{cnp}"]
        assert set(db["PFC_WD"]) == {"GLOBAL", *ports}
        assert set(db["CABLE_LENGTH"]["AZURE"]) == set(ports)
    assert checked >= 3


def test_bash_parses_every_rendered_script(tmp_path: Path, dscp46_files: dict[str, str]) -> None:
    scripts = {path: text for path, text in dscp46_files.items() if path.endswith(".sh")}
    assert "hosts/h200/qos.sh" in scripts and any(path.endswith("nvue.sh") for path in scripts)
    for index, (path, text) in enumerate(sorted(scripts.items())):
        target = tmp_path / f"{index}.sh"
        target.write_text(text)
        result = subprocess.run(["bash", "-n", str(target)], capture_output=True, text=True, timeout=30, check=False)
        assert result.returncode == 0, (path, result.stderr)
    broken = tmp_path / "broken.sh"
    broken.write_text(scripts["hosts/h200/qos.sh"].replace("esac", "", 1))
    assert subprocess.run(["bash", "-n", str(broken)], capture_output=True, timeout=30, check=False).returncode != 0


def test_shellcheck_finds_nothing_in_the_rendered_scripts(tmp_path: Path, dscp46_files: dict[str, str]) -> None:
    shellcheck = shutil.which("shellcheck")
    if shellcheck is None:
        missing_tool("shellcheck is not installed (Debian `shellcheck`, listed in .ci/apt-packages.txt)")
    paths = []
    for index, path in enumerate(sorted(p for p in dscp46_files if p.endswith(".sh"))):
        target = tmp_path / f"{index}.sh"
        target.write_text(dscp46_files[path])
        paths.append(str(target))
    result = subprocess.run([shellcheck, "--severity=warning", *paths], capture_output=True, text=True, timeout=120,
                            check=False)
    assert result.returncode == 0, result.stdout[:3000]
