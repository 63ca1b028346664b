"""`lab`: the rendered fabric in real FRR (Debian's zebra, bgpd, bfdd), one network namespace per
device, checked against the design, failed on purpose, and removed without a trace.

Each test's lab has its own state directory (so its own namespace prefix), and every test
removes its lab in a `finally`. Root is needed; on a root machine without FRR, lldpd, ping or
nft the tests fail (CI installs them from .ci/apt-packages.txt) rather than skip.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from cluster.lab import runtime

ROOT = Path(__file__).resolve().parent.parent

pytestmark = [pytest.mark.slow,
              pytest.mark.skipif(os.geteuid() != 0, reason="needs root to create network namespaces")]


def lab(state: Path, *args: str, timeout: float = 240) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "GPU_CLUSTER_LAB_DIR": str(state)}
    return subprocess.run([sys.executable, "-m", "cluster", "lab", *args], cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=timeout)


def leftovers(state: Path) -> tuple[list[str], list[int]]:
    """Namespaces with the lab's prefix, and processes whose command names its daemon folder."""
    prefix = runtime.namespace_prefix(state)
    nodes = str(runtime.NODES_ROOT / f"{prefix}nodes").encode()
    namespaces = [name for name in subprocess.run(["ip", "netns", "list"], capture_output=True, text=True,
                                                  check=True).stdout.split() if name.startswith(prefix)]
    processes = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if nodes in (entry / "cmdline").read_bytes():
                    processes.append(int(entry.name))
            except OSError:
                continue
    return namespaces, processes


@pytest.fixture(scope="module")
def ready() -> None:
    assert not runtime.missing_requirements(), runtime.missing_requirements()


@pytest.fixture()
def state(tmp_path: Path, ready: None) -> Iterator[Path]:
    folder = tmp_path / "lab"
    try:
        yield folder
    finally:
        lab(folder, "down", "any")
        assert leftovers(folder) == ([], [])


def test_dev_comes_up_checks_clean_fails_as_whatif_says_and_goes_down(state: Path) -> None:
    limit = Path("/proc/sys/net/ipv4/neigh/default/gc_thresh3")
    before = limit.read_text()
    up = lab(state, "up", "dev", "--format", "json")
    assert up.returncode == 0, up.stderr
    summary = json.loads(up.stdout)
    assert (summary["switches"], summary["hosts"], summary["cables"]) == (10, 4, 64)
    assert int(limit.read_text()) >= 65536  # every cable end holds an ARP entry, machine-wide
    assert summary["converge_s"] is not None

    again = lab(state, "up", "dev")
    assert again.returncode == 2 and "lab down" in again.stderr

    checked = lab(state, "check", "dev", "--format", "json")
    report = json.loads(checked.stdout)
    assert checked.returncode == 0, report["findings"][:5]
    assert report["counts"]["established"] == report["counts"]["sessions"] == 64
    assert report["counts"]["prefixes"] > 0 and report["counts"]["lldp_cables"] == 64

    for mode in ("link", "kill", "silent"):
        failed = lab(state, "fail", "dev", "spine-001", "--mode", mode, "--format", "json")
        result = json.loads(failed.stdout)
        assert failed.returncode == 0, result["findings"]
        assert result["withdraw_s"] is not None, mode
        # The surviving uplinks the leaves' kernels forward on give whatif's ratio.
        assert result["whatif_ratio"] and set(result["whatif_ratio"].values()) == {
            max(result["measured_ratio"].values())}
        # A silent spine is noticed by BFD, well inside BGP's 9 s hold time.
        assert mode != "silent" or result["worst_loss_s"] < 3, result["worst_loss_s"]
        assert lab(state, "restore", "dev").returncode == 0
        after = lab(state, "check", "dev", "--no-lldp", "--format", "json")
        assert after.returncode == 0, json.loads(after.stdout)["findings"][:3]

    # One cable of a bundle: the leaf keeps its other uplinks, as whatif's ratio for that cable says.
    cable = lab(state, "fail", "dev", "leaf-001-r0~spine-002", "--mode", "silent", "--format", "json")
    result = json.loads(cable.stdout)
    assert cable.returncode == 0, result["findings"]
    assert result["whatif_ratio"] == {"leaf-001-r0": max(result["measured_ratio"].values())}
    assert lab(state, "restore", "dev").returncode == 0

    down = lab(state, "down", "dev")
    assert down.returncode == 0 and "removed 14 namespaces" in down.stdout
    assert leftovers(state) == ([], [])
    assert lab(state, "check", "dev").returncode == 2
    assert limit.read_text() == before


def _break(tree: Path) -> dict[str, str]:
    """Three faults in a rendered dev tree: a wrong ASN, a missing neighbor, one 1500-byte port."""
    asn_file = tree / "switches/leaf-001-r0/frr.conf"
    text = asn_file.read_text()
    asn_file.write_text(re.sub(r"^router bgp (\d+)", r"router bgp 4200009999", text, count=1, flags=re.MULTILINE))
    neighbor_file = tree / "switches/leaf-001-r1/frr.conf"
    text = neighbor_file.read_text()
    missing = re.search(r"^ neighbor (\S+) peer-group FABRIC$", text, re.MULTILINE)
    assert missing
    neighbor_file.write_text("".join(line + "\n" for line in text.splitlines()
                                     if not line.startswith(f" neighbor {missing.group(1)} ")))
    db_file = tree / "switches/leaf-001-r4/config_db.json"
    db = json.loads(db_file.read_text())
    uplink = next(key.split("|")[0] for key in db["INTERFACE"] if key.split("|")[-1].startswith("10.64."))
    db["PORT"][uplink]["mtu"] = "1500"
    db_file.write_text(json.dumps(db, indent=4))
    return {"neighbor": missing.group(1), "port": uplink}


def test_broken_configs_give_the_finding_that_names_them(state: Path, tmp_path: Path) -> None:
    tree = tmp_path / "rendered"
    rendered = subprocess.run([sys.executable, "-m", "cluster", "render", "dev", "--out", str(tree)], cwd=ROOT,
                              capture_output=True, text=True, timeout=120)
    assert rendered.returncode == 0, rendered.stderr
    broken = _break(tree)
    up = lab(state, "up", "dev", "--from", str(tree), "--timeout", "20")
    assert up.returncode in (0, 1), up.stderr  # 1: a missing neighbor never converges
    checked = lab(state, "check", "dev", "--format", "json")
    assert checked.returncode == 1
    findings = json.loads(checked.stdout)["findings"]
    by_rule: dict[str, list[dict[str, str]]] = {}
    for finding in findings:
        by_rule.setdefault(finding["rule"], []).append(finding)
    assert any(f["path"] == "switches/leaf-001-r0/frr.conf" and "AS 4200009999" in f["message"]
               for f in by_rule["LAB-ASN"])
    assert any(f["path"] == "switches/leaf-001-r1/frr.conf" and broken["neighbor"] in f["message"]
               and "no BGP neighbor configured" in f["message"] for f in by_rule["LAB-BGP"])
    assert any(f["path"] == "switches/leaf-001-r4/config_db.json" and broken["port"] in f["message"]
               for f in by_rule["LAB-MTU"])
    # The missing session also narrows leaf-001-r1's ECMP width, which the route check sees.
    assert any("leaf-001-r1 reaches" in f["message"] for f in by_rule["LAB-ROUTE"])
    named = {f["path"] for f in findings if f["rule"] in ("LAB-ASN", "LAB-BGP")}
    assert all(any(device in path for device in ("leaf-001-r0", "leaf-001-r1", "spine-00")) for path in named)


def test_two_leaf_groups_of_eight_rails_converge_and_a_spine_fails_as_whatif_says(state: Path) -> None:
    up = lab(state, "up", "article-c", "--format", "json")
    assert up.returncode == 0, up.stderr
    summary = json.loads(up.stdout)
    assert summary["switches"] == 24 and summary["hosts"] == 64
    checked = lab(state, "check", "article-c", "--format", "json")
    assert checked.returncode == 0, json.loads(checked.stdout)["findings"][:5]
    failed = lab(state, "fail", "article-c", "spine-003", "--format", "json")
    result = json.loads(failed.stdout)
    assert failed.returncode == 0, result["findings"]
    assert set(result["whatif_ratio"].values()) == {max(result["measured_ratio"].values())}


def test_a_slice_holds_one_leaf_group_with_every_spine_and_checks_clean(state: Path) -> None:
    up = lab(state, "up", "article-c", "--slice", "groups=1", "--format", "json")
    assert up.returncode == 0, up.stderr
    summary = json.loads(up.stdout)
    assert summary["switches"] == 16 and summary["hosts"] == 32
    assert "leaf groups 1-1 of 2" in summary["slice"]
    checked = lab(state, "check", "article-c", "--no-lldp", "--format", "json")
    assert checked.returncode == 0, json.loads(checked.stdout)["findings"][:5]


def test_down_removes_a_lab_whose_up_was_killed_half_way(state: Path) -> None:
    env = {**os.environ, "GPU_CLUSTER_LAB_DIR": str(state)}
    up = subprocess.Popen([sys.executable, "-m", "cluster", "lab", "up", "dev"], cwd=ROOT, env=env,
                          stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        for _ in range(600):  # until daemons run: namespaces, cables and some FRR exist
            namespaces, processes = leftovers(state)
            if namespaces and processes:
                break
            time.sleep(0.05)
        else:
            pytest.fail("lab up created nothing within 30 s")
    finally:
        up.kill()
        up.wait()
    assert leftovers(state)[0], "the killed lab left nothing to remove: the test proves nothing"
    assert lab(state, "up", "dev").returncode == 2  # the half-built lab is still recorded
    down = lab(state, "down", "dev")
    assert down.returncode == 0 and "removed" in down.stdout
    assert leftovers(state) == ([], [])


def test_up_refuses_a_namespace_it_did_not_create_and_leaves_it_alone(state: Path) -> None:
    foreign = runtime.namespace_prefix(state) + "spine-001"
    subprocess.run(["ip", "netns", "add", foreign], check=True)
    try:
        up = lab(state, "up", "dev")
        assert up.returncode == 2 and f"network namespace {foreign} exists" in up.stderr
        assert foreign in subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout
        assert lab(state, "status", "dev").stdout.startswith("lab status: no lab is up")
    finally:
        subprocess.run(["ip", "netns", "del", foreign], check=False)
