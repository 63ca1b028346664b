"""Debian's ibsim, in a network namespace of its own: a simulated InfiniBand fabric that the real
tools (ibnetdiscover, OpenSM) walk through `ibsim-run`, answered by no other simulator on the
machine (`unshare -n`: ibsim's socket lives in the namespace)."""

from __future__ import annotations

import shlex
import subprocess
import tempfile
from pathlib import Path


def on_simulator(net: Path, command: list[str], anchor: str | None = None, *,
                 environment: dict[str, str] | None = None, timeout: int = 120) -> subprocess.CompletedProcess[str]:
    """Run `command` through ibsim-run against ibsim simulating `net` (ibsim-utils' net format),
    once the simulator answers; `anchor`: the node the tool runs on (SIM_HOST, ibsim's node id),
    else the simulator's first node. The command's exit code, stdout and stderr are returned."""
    settings = {**({"SIM_HOST": anchor} if anchor else {}), **(environment or {})}
    prefix = " ".join(f"{key}={shlex.quote(value)}" for key, value in settings.items())
    script = f"""
        ip link set lo up
        ibsim -s -n {shlex.quote(str(net))} >/dev/null 2>&1 &
        sim=$!
        tries=0
        until {prefix} ibsim-run ibnetdiscover >/dev/null 2>&1; do
            tries=$((tries + 1))
            [ $tries -ge 100 ] && break
            sleep 0.1
        done
        {prefix} timeout {timeout} ibsim-run {shlex.join(command)}
        code=$?
        kill $sim
        wait $sim 2>/dev/null
        exit $code
    """
    with tempfile.TemporaryDirectory() as folder:  # ibsim-run's tools write a fake sysfs (sys-<pid>/) here
        return subprocess.run(["unshare", "-n", "sh", "-c", script], capture_output=True, text=True,
                              timeout=timeout + 30, cwd=folder)
