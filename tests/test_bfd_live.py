"""Live: BFD in real FRR 8.4 on the two ends of one leaf-spine link of the dev stack.

Each switch is a network namespace running zebra, bfdd and bgpd with its rendered frr.conf, loaded
unmodified (`vtysh -N <ns> -f frr.conf`); the link is a veth pair named after the two SONiC ports
and addressed with the link's /31. The BGP session and its BFD session come up with the design's
timers. Then the spine goes silent with its link up, as a switch that dies without losing carrier:
a `pfifo limit 0` root qdisc on its port drops everything it sends. The leaf's BFD session must go
down and take the BGP session with it (FRR's notification `Cease/BFD Down`, not the hold timer).
Every wait is bounded and polls states; no duration is asserted.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from cluster.addressing import allocate
from cluster.configs import switch_files
from cluster.intent.switch import BFD_TIMERS, Port, switch_views
from cluster.pipeline import Valid, validate
from tests.conftest import missing_tool
from tests.test_verify_live import sh

FRR = Path("/usr/lib/frr")
DAEMONS = ("zebra", "bfdd", "bgpd")  # in start order: bfdd and bgpd connect to zebra
PATHSPACES = Path("/var/run/frr")  # `-N <ns>` puts each daemon's sockets under /var/run/frr/<ns>
LEAF, SPINE = "leaf-001-r0", "spine-001"

pytestmark = [pytest.mark.slow,
              pytest.mark.skipif(os.geteuid() != 0, reason="needs root to create network namespaces")]


def wait_for(what: str, ready: Callable[[], bool], timeout: float, polls: int = 1) -> None:
    """Poll every 0.2 s until `ready` holds `polls` times in a row; fail after `timeout` seconds."""
    deadline = time.monotonic() + timeout
    in_a_row = 0
    while True:
        in_a_row = in_a_row + 1 if ready() else 0
        if in_a_row >= polls:
            return
        if time.monotonic() > deadline:
            pytest.fail(f"not reached within {timeout:.0f} s: {what}")
        time.sleep(0.2)


@dataclass
class Router:
    """One switch: a namespace, its FRR daemons (by PID) and their socket folder."""

    switch: str
    namespace: str
    logs: Path
    daemons: list[subprocess.Popen[bytes]] = field(default_factory=list)

    @property
    def sockets(self) -> Path:
        return PATHSPACES / self.namespace

    def start(self) -> None:
        self.sockets.mkdir(mode=0o755)
        shutil.chown(self.sockets, "frr", "frr")  # the daemons drop to user frr
        for daemon in DAEMONS:
            log = (self.logs / f"{self.switch}-{daemon}.log").open("wb")
            self.daemons.append(subprocess.Popen(
                ["ip", "netns", "exec", self.namespace, str(FRR / daemon), "-N", self.namespace, "-f", "/dev/null",
                 "-P", "0", "--log", "stdout"], stdout=log, stderr=subprocess.STDOUT))
            wait_for(f"{daemon} of {self.switch} listening", (self.sockets / f"{daemon}.vty").exists, 30)

    def vtysh(self, *arguments: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(["vtysh", "-N", self.namespace, *arguments], capture_output=True, text=True,
                              timeout=30, check=False)

    def show(self, command: str) -> Any:
        """vtysh's JSON answer, or {} while the daemon has none (`% No such peer` for a session not yet made)."""
        try:
            return json.loads(self.vtysh("-c", command).stdout)
        except ValueError:
            return {}

    def bfd(self, peer: str) -> dict[str, Any]:
        answer = self.show(f"show bfd peer {peer} json")
        return answer if isinstance(answer, dict) else {}

    def bgp(self, peer: str) -> dict[str, Any]:
        neighbor: dict[str, Any] = self.show(f"show ip bgp neighbors {peer} json").get(peer, {})
        return neighbor

    def stop(self) -> None:
        for process in self.daemons:
            if process.poll() is None:
                process.terminate()
        for process in self.daemons:
            try:
                process.wait(timeout=5)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait(timeout=5)


def _link(ports: dict[str, tuple[Port, ...]]) -> tuple[Port, Port]:
    """The leaf's first port towards the spine, and the spine's port at its other end."""
    leaf_port = next(port for port in ports[LEAF] if port.peer == SPINE)
    assert leaf_port.address is not None
    spine_port = next(port for port in ports[SPINE] if port.peer_address == leaf_port.address.split("/")[0])
    return leaf_port, spine_port


@pytest.fixture()
def link(tmp_path: Path) -> Iterator[tuple[Router, Router, Port, Port]]:
    for daemon in DAEMONS:
        if not (FRR / daemon).exists():
            missing_tool(f"{FRR / daemon} not found: FRR is not installed (Debian `frr`, in .ci/apt-packages.txt)")
    for tool in ("vtysh", "ip", "tc"):
        if shutil.which(tool) is None:
            missing_tool(f"{tool} not found: apt-get install frr iproute2 (both in .ci/apt-packages.txt)")
    result = validate("dev")
    assert isinstance(result, Valid)
    spec, topology = result.spec, result.topology
    addresses = allocate(spec, topology)
    files, _ = switch_files(spec, topology, addresses, [LEAF, SPINE])
    views = {switch.name: switch.ports for switch in switch_views(spec, topology, addresses, None, [LEAF, SPINE])}
    leaf_port, spine_port = _link(views)
    tag = uuid.uuid4().hex[:6]
    leaf, spine = Router(LEAF, f"gcbfd{tag}l", tmp_path), Router(SPINE, f"gcbfd{tag}s", tmp_path)
    made: list[Router] = []
    try:
        for router in (leaf, spine):
            sh("ip", "netns", "add", router.namespace)
            made.append(router)
            sh("ip", "-n", router.namespace, "link", "set", "lo", "up")
        sh("ip", "link", "add", leaf_port.name, "netns", leaf.namespace, "type", "veth",
           "peer", "name", spine_port.name, "netns", spine.namespace)
        for router, port in ((leaf, leaf_port), (spine, spine_port)):
            assert port.address is not None
            sh("ip", "-n", router.namespace, "addr", "add", port.address, "dev", port.name)
            sh("ip", "-n", router.namespace, "link", "set", port.name, "up")
            router.start()
            config = tmp_path / f"{router.switch}.conf"
            config.write_text(files[f"switches/{router.switch}/frr.conf"])
            loaded = router.vtysh("-f", str(config))
            assert loaded.returncode == 0, (router.switch, loaded.stdout, loaded.stderr)
        yield leaf, spine, leaf_port, spine_port
    finally:
        for router in made:
            router.stop()
            subprocess.run(["ip", "netns", "del", router.namespace], capture_output=True, timeout=30, check=False)
            shutil.rmtree(router.sockets, ignore_errors=True)


def _carrier(router: Router, port: Port) -> bool:
    flags = sh("ip", "-n", router.namespace, "-o", "link", "show", port.name).split("<", 1)[1].split(">", 1)[0]
    return "LOWER_UP" in flags.split(",")


def test_a_silent_spine_takes_the_bgp_session_down_by_bfd(link: tuple[Router, Router, Port, Port]) -> None:
    leaf, spine, leaf_port, spine_port = link
    assert leaf_port.peer_address is not None and spine_port.peer_address is not None
    towards_spine = leaf_port.peer_address

    def up() -> bool:
        return (leaf.bfd(towards_spine).get("status") == "up"
                and leaf.bgp(towards_spine).get("bgpState") == "Established"
                and spine.bfd(spine_port.peer_address).get("status") == "up")

    # steady: a BFD session can flap once while both ends start, so ask for ten polls in a row
    wait_for("BGP established and BFD up on the link", up, 90, polls=10)
    session = leaf.bfd(towards_spine)
    agreed = (session["transmit-interval"], session["receive-interval"], session["detect-multiplier"])
    remote = (session["remote-transmit-interval"], session["remote-receive-interval"],
              session["remote-detect-multiplier"])
    design = (BFD_TIMERS.transmit_ms, BFD_TIMERS.receive_ms, BFD_TIMERS.multiplier)
    assert agreed == design and remote == design, session
    dropped = leaf.bgp(towards_spine)["connectionsDropped"]

    sh("ip", "netns", "exec", spine.namespace, "tc", "qdisc", "add", "dev", spine_port.name, "root", "pfifo", "limit", "0")

    def down() -> bool:
        neighbor = leaf.bgp(towards_spine)
        return (leaf.bfd(towards_spine).get("status") == "down" and neighbor.get("bgpState") != "Established"
                and neighbor.get("connectionsDropped", 0) > dropped)

    wait_for("the leaf's BFD session and BGP session down", down, 60)
    neighbor = leaf.bgp(towards_spine)
    assert neighbor["lastNotificationReason"] == "Cease/BFD Down", neighbor
    assert leaf.bfd(towards_spine)["diagnostic"] == "control detection time expired"
    assert _carrier(leaf, leaf_port) and _carrier(spine, spine_port)  # silent, not unplugged
