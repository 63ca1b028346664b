"""Build and remove a lab: network namespaces, veth cables, FRR and lldpd per device.

Everything created is written to the state file (`<state dir>/state.json`) before it is created,
so `lab down` removes it after a crash too: namespaces by name, daemons by pid (checked against
the command they were started with, so a reused pid is never killed) and any other process left
inside one of the lab's namespaces. One lab per state directory; a second `lab up` refuses while
the state file exists.

Needs root, iproute2, FRR (zebra, bgpd, bfdd, vtysh; Debian's `frr`), lldpd, iputils ping and
nftables (`lab fail --mode silent`); `.ci/run` installs them from .ci/apt-packages.txt.
"""

from __future__ import annotations

import contextlib
import fcntl
import functools
import hashlib
import ipaddress
import json
import os
import re
import shutil
import signal
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cluster.atomic import write_atomic
from cluster.dialects import Management
from cluster.findings import printable
from cluster.inputs import Unreadable, read_text_bounded
from cluster.lab.model import OOB_DHCP, LabPlan, LabSwitch, ifname

DEFAULT_STATE_DIR = Path("/run/gpu-cluster-lab")
FRR_DIR = Path("/usr/lib/frr")
#: Daemon sockets, pid files and configs: under /run, whose path FRR's and lldpd's own users can
#: walk (a state directory may sit below a private folder).
NODES_ROOT = Path("/run")
DAEMONS = ("zebra", "bgpd", "bfdd")
#: Lab-only zebra setting: FRR 8.4's kernel nexthop groups can leave stale next hops in the
#: kernel after links return (fixed upstream after 8.4.4); plain multipath routes do not.
ZEBRA_CONF = "no zebra nexthop kernel enable\n"
#: The kernel's ARP table limits are machine-wide, and every cable end of the lab holds an entry:
#: past the default 1024 entries pings fail ("No buffer space available"). Restored by `lab down`.
NEIGH_SAVED = Path("/run/gpu-cluster-lab.neighbor-limits.json")  # what the machine had before any lab
NEIGH_SYSCTLS = {"net.ipv4.neigh.default.gc_thresh1": 8192, "net.ipv4.neigh.default.gc_thresh2": 32768,
                 "net.ipv4.neigh.default.gc_thresh3": 65536}
#: Every switch namespace: forwarding, loose return paths for ECMP, L4 hashing so flows spread
#: over the equal-cost paths as a switch ASIC spreads them.
SWITCH_SYSCTLS = {"net.ipv4.ip_forward": "1", "net.ipv4.conf.all.rp_filter": "0",
                  "net.ipv4.fib_multipath_hash_policy": "1"}
NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,200}")
#: A state file records a plan of every device, cable and rendered config of the lab.
MAX_STATE_BYTES = 64 * 1024 * 1024
TOOLS = {"ip": "iproute2", "vtysh": "frr", "lldpd": "lldpd", "lldpctl": "lldpd", "ping": "iputils-ping",
         "nft": "nftables"}
# What a lab whose design plans DHCP also runs: the relay on its management leaves, the server, a client per host
DHCP_TOOLS = {"dhcrelay": "isc-dhcp-relay", "kea-dhcp4": "kea-dhcp4-server", "udhcpc": "udhcpc"}


class LabError(Exception):
    """The lab cannot do what was asked; the message says why and what to do (exit 2), on one
    line: paths and names in it (--state-dir, a failed device) are shown escaped."""

    def __init__(self, message: str) -> None:
        super().__init__(printable(message))


def state_dir(given: str | None = None) -> Path:
    return Path(given or os.environ.get("GPU_CLUSTER_LAB_DIR") or DEFAULT_STATE_DIR)


def missing_requirements() -> list[str]:
    """What this machine lacks to run a lab, one line each (empty: ready)."""
    problems = []
    if os.geteuid() != 0:
        problems.append("root: network namespaces and FRR need it (run as root)")
    for tool, package in TOOLS.items():
        if shutil.which(tool) is None:
            problems.append(f"{tool}: not found (Debian package {package})")
    for daemon in DAEMONS:
        if not (FRR_DIR / daemon).exists():
            problems.append(f"{FRR_DIR / daemon}: not found (Debian package frr)")
    return problems


def sh(*command: str, ns: str | None = None, check: bool = True, timeout: float = 30,
       stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    """Run a command (inside namespace `ns`); a failure raises LabError with its message."""
    full = ["ip", "netns", "exec", ns, *command] if ns else list(command)
    try:
        done = subprocess.run(full, input=stdin, capture_output=True, text=True, timeout=timeout, check=False)
    except subprocess.TimeoutExpired:
        raise LabError(f"`{' '.join(full)}` did not finish in {timeout:g} s") from None
    if check and done.returncode != 0:
        raise LabError(f"`{' '.join(full[:8])}{' ...' if len(full) > 8 else ''}` failed: "
                       f"{(done.stderr or done.stdout).strip()[:500]}")
    return done


@dataclass
class Lab:
    """A lab's state directory and what its state file records."""

    root: Path
    state: dict[str, Any]

    @functools.cached_property
    def plan(self) -> LabPlan:
        return LabPlan.from_dict(self.state["plan"])

    def ns(self, device: str) -> str:
        return str(self.state["namespaces"][device])

    def node_dir(self, device: str) -> Path:
        return Path(self.state["nodes"]) / device

    def save(self) -> None:
        write_state(self.root, self.state)

    def vtysh(self, device: str, command: str, timeout: float = 20) -> str:
        folder = self.node_dir(device)
        return sh("vtysh", "--vty_socket", str(folder), "--config_dir", str(folder), "-c", command,
                  timeout=timeout).stdout


def write_state(root: Path, state: dict[str, Any]) -> None:
    write_atomic(root / "state.json", json.dumps(state, indent=1, sort_keys=True))


def load(root: Path) -> Lab | None:
    """The lab whose state file is in `root` (None: there is none). The file is read like every
    input, bounded and only if it is a regular file, and checked before anything acts on it: a
    lab command may kill the processes and delete the namespaces it names."""
    path = root / "state.json"
    if not os.path.lexists(path):
        return None
    try:
        state = json.loads(read_text_bounded(path, MAX_STATE_BYTES, "lab state"))
        lab = Lab(root, _checked_state(state))
        _ = lab.plan  # built once here (it is cached), so that a broken plan is reported here
    except Unreadable as error:
        problem = str(error).removeprefix(f"{path}: ")
        raise LabError(f"{path}: {problem}; {_BY_HAND}") from None
    except RecursionError:
        raise LabError(f"{path}: unreadable lab state (nested deeper than any state gpu-cluster writes); "
                       f"{_BY_HAND}") from None
    except ValueError as error:  # json.JSONDecodeError included
        raise LabError(f"{path}: unreadable lab state ({error}); {_BY_HAND}") from None
    except (KeyError, TypeError, AttributeError) as error:
        raise LabError(f"{path}: unreadable lab state (its plan: {type(error).__name__} {str(error)[:100]}); "
                       f"{_BY_HAND}") from None
    return lab


_BY_HAND = "remove the lab's namespaces by hand (`ip netns list`) and delete the file"
_STATE_TEXT = ("stack", "slice", "phase", "nodes")


def _checked_state(state: object) -> dict[str, Any]:
    """`state` if it has the shape `up` writes; ValueError naming the first key that does not."""
    if not isinstance(state, dict):
        raise ValueError(f"a JSON {type(state).__name__}, not an object")
    missing = [key for key in (*_STATE_TEXT, "plan", "namespaces", "created", "pids", "failures") if key not in state]
    if missing:
        raise ValueError(f"no {', '.join(missing)}")
    for key in _STATE_TEXT:
        if not isinstance(state[key], str) or not state[key].isprintable():
            raise ValueError(f'"{key}" is not a line of text')
    if not isinstance(state["plan"], dict):
        raise ValueError('"plan" is not an object')
    namespaces, created, pids, failures = (state[key] for key in ("namespaces", "created", "pids", "failures"))
    if not (isinstance(namespaces, dict) and all(isinstance(device, str) and isinstance(name, str) and NAME.fullmatch(name)
                                                 for device, name in namespaces.items())):
        raise ValueError('"namespaces" is not an object of namespace names')
    if not (isinstance(created, list) and all(isinstance(name, str) and NAME.fullmatch(name) for name in created)):
        raise ValueError('"created" is not a list of namespace names')
    if not (isinstance(pids, dict) and all(
            isinstance(role, str) and isinstance(entry, list) and len(entry) == 2 and type(entry[0]) is int
            and entry[0] > 0 and isinstance(entry[1], str) for role, entry in pids.items())):
        raise ValueError('"pids" is not an object of [pid, program] pairs')
    if not (isinstance(failures, list) and all(
            isinstance(item, dict) and isinstance(item.get("name"), str) and item["name"].isprintable()
            and isinstance(item.get("mode"), str) for item in failures)):
        raise ValueError('"failures" is not a list of {"name", "mode"} objects')
    return state


@contextlib.contextmanager
def locked(root: Path) -> Iterator[None]:
    """One lab command at a time per state directory."""
    root.mkdir(parents=True, exist_ok=True)
    with open(root / "lock", "w") as handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise LabError(f"another lab command is running on {root}; wait for it to finish") from None
        yield


def namespace_prefix(root: Path) -> str:
    """`gcl-` for the default state directory, else one derived from the directory, so two labs
    (a user's and a test's) never share a namespace name."""
    if root == DEFAULT_STATE_DIR:
        return "gcl-"
    return "gcl" + hashlib.sha256(str(root.resolve()).encode()).hexdigest()[:5] + "-"


def up(plan: LabPlan, root: Path, stack: str, slice_text: str, converge_timeout: float) -> dict[str, Any]:
    """Build `plan`, wait (at most `converge_timeout` s) for every session it configures inside the
    lab, and return the summary (times, memory, what the lab represents)."""
    problems = missing_requirements()
    if plan.dhcp_host or plan.oob_dhcp or any(switch.relay_server for switch in plan.switches):
        problems += [f"{tool}: not found (Debian package {package}); the design plans DHCP"
                     for tool, package in DHCP_TOOLS.items() if shutil.which(tool) is None]
    if problems:
        raise LabError("this machine cannot run a lab: " + "; ".join(problems))
    with locked(root):
        running = load(root)
        if running is not None:
            raise LabError(f"a lab of stack {running.state['stack']} is up (state {root / 'state.json'}); "
                           "run `lab down` first")
        prefix = namespace_prefix(root)
        devices = [switch.name for switch in plan.switches] + [host.name for host in plan.hosts] + \
            [bridge.name for bridge in plan.bridges] + [bmc.name for bmc in plan.bmcs] + \
            ([OOB_DHCP] if plan.oob_dhcp else [])
        namespaces = {device: (prefix + device if NAME.fullmatch(device) else f"{prefix}{index}")
                      for index, device in enumerate(devices)}
        lab = Lab(root, {"stack": stack, "slice": slice_text, "phase": "building", "plan": plan.to_dict(),
                         "namespaces": namespaces, "nodes": str(NODES_ROOT / f"{prefix}nodes"),
                         "created": [], "pids": {}, "failures": []})
        lab.save()
        started = time.monotonic()
        try:
            _build(lab, plan)
            built = time.monotonic() - started
            converged = wait_converged(lab, converge_timeout)
        except BaseException:
            teardown(lab)
            raise
        lab.state["phase"] = "up"
        lab.save()
    summary = {"stack": stack, "slice": plan.slice, "switches": len(plan.switches), "hosts": len(plan.hosts),
               "cables": len(plan.cables), "oob_switches": len(plan.bridges), "oob_cables": len(plan.oob_cables),
               "build_s": round(built, 2),
               "converge_s": None if converged is None else round(converged, 2),
               "memory_mb": round(memory_kb(lab) / 1024, 1), "notes": list(plan.notes), "state": str(root)}
    return summary


def _build(lab: Lab, plan: LabPlan) -> None:
    existing = set(sh("ip", "netns", "list").stdout.split())
    taken = sorted(existing & {lab.ns(device) for device in lab.state["namespaces"]})
    if taken:  # never record, and so never remove, a namespace this lab did not create
        raise LabError(f"network namespace {taken[0]} exists and is not this lab's"
                       f"{f' (and {len(taken) - 1} more)' if len(taken) > 1 else ''}: remove it "
                       f"(`ip netns del {taken[0]}`) if it is a left-over lab's, or use another --state-dir")
    created: list[str] = lab.state["created"]
    for device in lab.state["namespaces"]:
        created.append(lab.ns(device))
    lab.save()
    sh("ip", "-batch", "-", stdin="".join(f"netns add {lab.ns(device)}\n" for device in lab.state["namespaces"]))
    sh("ip", "-batch", "-", stdin="".join(
        f"link add {cable.a_if} netns {lab.ns(cable.a)} type veth peer name {cable.b_if} netns {lab.ns(cable.b)}\n"
        for cable in (*plan.cables, *plan.oob_cables)))
    for device in plan.devices:
        commands = ["link set lo up"]
        for interface in device.interfaces:
            commands.append(f"link set {interface.name} mtu {interface.mtu}")
            if interface.address and isinstance(device, LabSwitch):
                commands.append(f"address add {interface.address} dev {interface.name}")
            if interface.up:
                commands.append(f"link set {interface.name} up")
        loopback = getattr(device, "loopback", None)
        if loopback:
            commands.append(f"address add {loopback} dev lo")
        sh("ip", "-n", lab.ns(device.name), "-batch", "-", stdin="\n".join(commands) + "\n")
    _build_oob(lab, plan)
    _raise_neighbor_limits()
    for switch in plan.switches:
        sh("sysctl", "-qw", *(f"{key}={value}" for key, value in SWITCH_SYSCTLS.items()), ns=lab.ns(switch.name))
    for host in plan.hosts:
        sh("bash", "-c", host.routing, ns=lab.ns(host.name))
        if host.network:  # its storage and management ports, as its netplan file sets them; like
            # networkd, a route the kernel refuses (a gateway off the port's subnet) leaves the rest
            # set, and `lab check` shows what is then missing
            sh("ip", "-force", "-n", lab.ns(host.name), "-batch", "-", stdin=host.network, check=False)
    for switch in plan.switches:
        start_frr(lab, switch.name, switch.frr_conf)
    for device in plan.devices:
        _start_lldpd(lab, device.name, device.model if isinstance(device, LabSwitch) else None,
                     {i.name: i.port for i in device.interfaces if i.name != i.port})
    for switch in plan.switches:
        load_frr(lab, switch.name)
    _start_dhcp(lab, plan)


#: A switch's management VRF in the lab: a routing table of its own, chosen by rules for what
#: enters by, leaves by or is sent from the management port (a Linux VRF device does the same with
#: l3mdev rules; the lab's kernel may be built without one). Any table the lab's FRR does not use.
MANAGEMENT_TABLE = 1001
MANAGEMENT_RULE_PREF = 100
#: The root oob switch's bridge port to the oob DHCP server.
OOB_DHCP_PORT = "dhcp0"
#: Spanning tree's forward delay on the oob bridges: the kernel's least (2 s; 15 s by default), so
#: ports forward within about 4 s of `lab up`.
FORWARD_DELAY_CS = 200


def _build_oob(lab: Lab, plan: LabPlan) -> None:
    """The out-of-band network: each oob switch a bridge (its ports untagged members, spanning
    tree on where it links to other oob switches, its management address on the bridge), and each
    switch's management port as its files set it: its address and default gateway, in a table of
    its own when the files put it in a VRF."""
    for bridge in plan.bridges:
        stp = f" stp_state 1 forward_delay {FORWARD_DELAY_CS}" if bridge.links else ""
        commands = [f"link add br0 type bridge{stp} priority {bridge.priority}"]
        for port in (*bridge.ports, *bridge.links):
            commands += [f"link set {port} master br0", f"link set {port} up"]
        commands += ["link set br0 up", "link set lo up"]
        if bridge.address:
            commands.append(f"address add {bridge.address} dev br0")
        sh("ip", "-n", lab.ns(bridge.name), "-batch", "-", stdin="\n".join(commands) + "\n")
    cabled = {(cable.a, cable.a_if) for cable in plan.oob_cables}
    for switch in plan.switches:
        management = switch.management
        if management is None or (switch.name, ifname(management.port)) not in cabled:
            continue
        # like the OS, a setting the kernel refuses leaves the rest set; `lab check` shows what is missing
        sh("ip", "-force", "-n", lab.ns(switch.name), "-batch", "-", stdin="\n".join(_management_port(management)) + "\n",
           check=False)
    for bmc in plan.bmcs:  # a BMC boots with its port up and no address: `lab check` has it ask for a lease
        _node_folder(lab, bmc.name)
        sh("ip", "-n", lab.ns(bmc.name), "-batch", "-", stdin=f"link set lo up\nlink set {bmc.interface} up\n")
    server = plan.oob_dhcp
    if server is not None:  # its port into the root oob switch's bridge (the site's own cable: not in cabling.csv)
        _node_folder(lab, OOB_DHCP)
        sh("ip", "link", "add", "eth0", "netns", lab.ns(OOB_DHCP), "type", "veth", "peer", "name", OOB_DHCP_PORT,
           "netns", lab.ns(server.bridge))
        sh("ip", "-n", lab.ns(server.bridge), "-batch", "-",
           stdin=f"link set {OOB_DHCP_PORT} master br0\nlink set {OOB_DHCP_PORT} up\n")
        sh("ip", "-n", lab.ns(OOB_DHCP), "-batch", "-",
           stdin=f"link set lo up\nlink set eth0 up\naddress add {server.address} dev eth0\n")


def _management_port(management: Management) -> list[str]:
    """The `ip` commands that configure a management port as its files set it."""
    port = ifname(management.port)
    commands = [f"link set {port} up"]
    if management.vrf is None:
        if management.address:
            commands.append(f"address add {management.address} dev {port}")
        if management.gateway:
            commands.append(f"route add default via {management.gateway} dev {port}")
        return commands
    table = f"table {MANAGEMENT_TABLE}"
    commands += [f"rule add iif {port} lookup {MANAGEMENT_TABLE} pref {MANAGEMENT_RULE_PREF}",
                 f"rule add oif {port} lookup {MANAGEMENT_TABLE} pref {MANAGEMENT_RULE_PREF}"]
    if management.address:
        address = ipaddress.IPv4Interface(management.address)
        commands += [f"address add {address} dev {port} noprefixroute",
                     f"route add {address.network} dev {port} src {address.ip} {table}",
                     f"rule add from {address.ip} lookup {MANAGEMENT_TABLE} pref {MANAGEMENT_RULE_PREF}"]
    if management.gateway:
        commands.append(f"route add default via {management.gateway} dev {port} {table}")
    return commands


def _start_dhcp(lab: Lab, plan: LabPlan) -> None:
    """isc-dhcp-relay on each switch whose files configure a relay, on the ports they name, and Kea
    with the rendered configuration on the host that holds the server's address. Lab-only: Kea's
    leases in memory and its pid and lock files in the host's folder (the rendered file keeps them in
    /var/lib/kea and /run)."""
    for switch in plan.switches:
        if switch.relay_server:
            _spawn(lab, switch.name, "dhcrelay", [
                "dhcrelay", "-4", "-d", "--no-pid", *(word for port in switch.relay_down for word in ("-id", port)),
                *(word for port in switch.relay_up for word in ("-iu", port)), switch.relay_server])
    if plan.dhcp_host:
        folder = lab.node_dir(plan.dhcp_host)
        config = json.loads(plan.dhcp_config)
        config["Dhcp4"]["lease-database"] = {"type": "memfile", "persist": False}
        (folder / "kea-dhcp4.conf").write_text(json.dumps(config, indent=1))
        _spawn(lab, plan.dhcp_host, "kea-dhcp4", ["kea-dhcp4", "-c", str(folder / "kea-dhcp4.conf")],
               {"KEA_PIDFILE_DIR": str(folder), "KEA_LOCKFILE_DIR": str(folder)})
    if plan.oob_dhcp is not None:  # the oob segment's server, lab-only in the same ways
        folder = lab.node_dir(OOB_DHCP)
        config = json.loads(plan.oob_dhcp.config)
        config["Dhcp4"]["lease-database"] = {"type": "memfile", "persist": False}
        (folder / "kea-dhcp4-oob.conf").write_text(json.dumps(config, indent=1))
        _spawn(lab, OOB_DHCP, "kea-dhcp4", ["kea-dhcp4", "-c", str(folder / "kea-dhcp4-oob.conf")],
               {"KEA_PIDFILE_DIR": str(folder), "KEA_LOCKFILE_DIR": str(folder)})


def _raise_neighbor_limits() -> None:
    """Raise the machine-wide ARP table limits; the first lab records the values it found."""
    found = {key: int(Path("/proc/sys", *key.split(".")).read_text()) for key in NEIGH_SYSCTLS}
    if not NEIGH_SAVED.exists():
        NEIGH_SAVED.write_text(json.dumps(found, sort_keys=True))
    for key, value in NEIGH_SYSCTLS.items():
        if found[key] < value:
            sh("sysctl", "-qw", f"{key}={value}")


def _restore_neighbor_limits(own_nodes: Path) -> None:
    """The last lab down puts back the limits the first one found (another lab's daemon folder
    in NODES_ROOT means it still runs)."""
    others = [folder for folder in NODES_ROOT.glob("gcl*-nodes") if folder != own_nodes]
    if others or not NEIGH_SAVED.exists():
        return
    with contextlib.suppress(OSError, ValueError):
        for key, value in json.loads(NEIGH_SAVED.read_text()).items():
            if key in NEIGH_SYSCTLS:
                sh("sysctl", "-qw", f"{key}={int(value)}", check=False)
    NEIGH_SAVED.unlink(missing_ok=True)


def _spawn(lab: Lab, device: str, role: str, command: list[str], environment: dict[str, str] | None = None) -> None:
    folder = lab.node_dir(device)
    with open(folder / f"{role}.log", "ab") as log:
        process = subprocess.Popen(["ip", "netns", "exec", lab.ns(device), *command], stdout=log,
                                   stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, start_new_session=True,
                                   env={**os.environ, **environment} if environment else None)
    lab.state["pids"][f"{device}/{role}"] = [process.pid, command[0]]
    lab.save()


def _node_folder(lab: Lab, device: str) -> Path:
    folder = lab.node_dir(device)
    folder.mkdir(parents=True, exist_ok=True)
    folder.chmod(0o755)  # FRR and lldpd drop to their own users and must reach their sockets
    shutil.chown(folder, "frr", "frr")
    return folder


def start_frr(lab: Lab, device: str, config: str) -> None:
    folder = _node_folder(lab, device)
    (folder / "frr.conf").write_text(config)
    (folder / "zebra.conf").write_text(ZEBRA_CONF)
    (folder / "empty.conf").write_text("")
    (folder / "vtysh.conf").write_text("")
    for name in ("zebra.conf", "empty.conf", "frr.conf"):
        (folder / name).chmod(0o644)
    defaults = re.search(r"^frr defaults (\S+)", config, re.MULTILINE)
    profile = ["-F", defaults.group(1)] if defaults else []
    common = ["--vty_socket", str(folder), "-P", "0", "-z", str(folder / "zserv.api"), *profile]
    _spawn(lab, device, "zebra", [str(FRR_DIR / "zebra"), "-f", str(folder / "zebra.conf"),
                                  "-i", str(folder / "zebra.pid"), *common])
    _wait_for(folder / "zserv.api", f"{device}: zebra")
    _spawn(lab, device, "bfdd", [str(FRR_DIR / "bfdd"), "-f", str(folder / "empty.conf"),
                                 "-i", str(folder / "bfdd.pid"), "--bfdctl", str(folder / "bfdd.sock"), *common])
    _spawn(lab, device, "bgpd", [str(FRR_DIR / "bgpd"), "-f", str(folder / "empty.conf"),
                                 "-i", str(folder / "bgpd.pid"), *common])


def load_frr(lab: Lab, device: str) -> None:
    """Push the rendered config as vtysh does at boot with an integrated config."""
    folder = lab.node_dir(device)
    for daemon in DAEMONS:
        _wait_for(folder / f"{daemon}.vty", f"{device}: {daemon}")
    done = sh("vtysh", "--vty_socket", str(folder), "--config_dir", str(folder), "-f", str(folder / "frr.conf"),
              check=False, timeout=60)
    errors = [line for line in (done.stdout + done.stderr).splitlines()
              if line.startswith("%") and "vtysh.conf" not in line]
    if done.returncode != 0 and errors:
        raise LabError(f"{device}: FRR refused its config: {'; '.join(errors)[:500]}")


def _start_lldpd(lab: Lab, device: str, model: str | None, port_ids: dict[str, str]) -> None:
    """lldpd for a device; a switch (`model` given) advertises its ports by name and its model in
    its system description, as a switch OS does (`import` reads the model from it)."""
    folder = _node_folder(lab, device)
    lines = [f"configure system hostname {device}", "configure lldp tx-interval 1"]
    if model is not None:
        lines.append("configure lldp portidsubtype ifname")
        if model:
            lines.append(f'configure system description "gpu-cluster lab switch, model {model}"')
        # A port whose platform name Linux cannot carry (EOS Ethernet3/5) advertises that name.
        lines.extend(f"configure ports {name} lldp portidsubtype local {port} description {port}"
                     for name, port in port_ids.items())
    (folder / "lldpd.conf").write_text("\n".join(lines) + "\n")
    _spawn(lab, device, "lldpd", ["lldpd", "-d", "-u", str(folder / "lldpd.sock"), "-O", str(folder / "lldpd.conf")])


def _wait_for(path: Path, what: str, timeout: float = 20) -> None:
    deadline = time.monotonic() + timeout
    while not path.exists():
        if time.monotonic() > deadline:
            raise LabError(f"{what} did not start in {timeout:g} s (no {path}); see the .log files beside it")
        time.sleep(0.02)


def bgp_summary(lab: Lab, device: str) -> tuple[int | None, dict[str, dict[str, Any]]]:
    """(the switch's own ASN, its BGP peers) as `show bgp summary json` lists them (None and
    none: no BGP running)."""
    return read_bgp_summary(device, lab.vtysh(device, "show bgp summary json"))


def read_bgp_summary(device: str, text: str) -> tuple[int | None, dict[str, dict[str, Any]]]:
    """`show bgp summary json` of `device` as (its own ASN, its peers)."""
    summary = vtysh_json(device, "show bgp summary json", text or "{}")
    if not isinstance(summary, dict):
        raise LabError(f"{device}: `show bgp summary json` is no object: {text[:200]}")
    unicast = summary.get("ipv4Unicast", {})
    return unicast.get("as"), unicast.get("peers", {})


def vtysh_json(device: str, command: str, text: str) -> Any:
    """The JSON `device`'s vtysh printed for `command` (LabError when it is none)."""
    try:
        return json.loads(text)
    except ValueError:
        raise LabError(f"{device}: unreadable `{command}`: {text[:200]}") from None


def vtysh_each(lab: Lab, devices: list[str], command: str, timeout: float = 30) -> dict[str, str]:
    """One vtysh `command` on every device at once: {device: its output}."""
    return run_each(lab, {device: ["vtysh", "--vty_socket", str(lab.node_dir(device)), "--config_dir",
                                   str(lab.node_dir(device)), "-c", command] for device in devices}, timeout)


def vtysh_many(lab: Lab, devices: list[str], commands: tuple[str, ...], timeout: float = 30) -> dict[str, list[str]]:
    """Several vtysh `commands` (each printing one JSON value) in one vtysh per device:
    {device: each command's output, in order}. vtysh prints the values one after another; a device
    whose output does not split into one value per command (a daemon that printed nothing) is read
    again one command at a time."""
    texts = run_each(lab, {device: ["vtysh", "--vty_socket", str(lab.node_dir(device)), "--config_dir",
                                    str(lab.node_dir(device)), *(word for command in commands for word in ("-c", command))]
                           for device in devices}, timeout)
    result = {device: parts for device, text in texts.items() if (parts := split_json(text)) and len(parts) == len(commands)}
    again = [device for device in devices if device not in result]
    if again:
        alone = [vtysh_each(lab, again, command, timeout) for command in commands]
        result.update({device: [outputs[device] for outputs in alone] for device in again})
    return result


def split_json(text: str) -> list[str] | None:
    """The JSON values printed one after another in `text`, each as its text (None: not such a run)."""
    decoder = json.JSONDecoder()
    parts: list[str] = []
    index = 0
    while True:
        while index < len(text) and text[index].isspace():
            index += 1
        if index == len(text):
            return parts
        try:
            _, end = decoder.raw_decode(text, index)
        except ValueError:
            return None
        parts.append(text[index:end])
        index = end


def in_lab_peers(lab: Lab) -> dict[str, set[str]]:
    """Per switch, the peer addresses of its cables inside the lab (a slice leaves the sessions
    to switches outside it unanswered)."""
    plan = lab.plan
    result: dict[str, set[str]] = {switch.name: set() for switch in plan.switches}
    for cable, a, b in plan.cable_addresses(switches_only=True):
        if a and b:
            result[cable.a].add(b)
            result[cable.b].add(a)
    return result


def wait_converged(lab: Lab, timeout: float, quiet_s: float = 1.5, flapped_only: bool = False) -> float | None:
    """Seconds until every configured session inside the lab is Established with its BFD session
    up (`flapped_only`: every session that has been Established is again), and then neither a
    switch's kernel BGP routes nor any session's count of times it came up have changed for
    `quiet_s` (None: not within `timeout`; `lab check` then says what is missing)."""
    started = time.monotonic()
    expected = in_lab_peers(lab)
    pending = sorted(expected)
    while pending:
        pending = _unsettled(lab, pending, expected, flapped_only)
        if time.monotonic() - started > timeout:
            return None
        if pending:
            time.sleep(0.2)
    waited = time.monotonic() - started
    settled = _wait_quiet(lab, timeout - waited, quiet_s)
    return None if settled is None else waited + settled


def _unsettled(lab: Lab, devices: list[str], expected: dict[str, set[str]], flapped_only: bool) -> list[str]:
    """The devices with a session inside the lab not yet Established (`flapped_only`: of those that
    have been) or, unless `flapped_only`, whose BFD session toward an Established peer is not up:
    BFD coming up late (or going down under load) tears the BGP session it guards."""
    if flapped_only:
        summaries, bfd = vtysh_each(lab, devices, "show bgp summary json"), {}
    else:  # both in one vtysh per switch
        both = vtysh_many(lab, devices, ("show bgp summary json", "show bfd peers json"))
        summaries, bfd = {device: texts[0] for device, texts in both.items()}, \
            {device: texts[1] for device, texts in both.items()}
    pending = []
    for device in devices:
        _, peers = read_bgp_summary(device, summaries[device])
        inside = {address: peers[address] for address in expected[device] & set(peers)}
        waiting = [address for address, peer in inside.items() if peer.get("state") != "Established"
                   and (not flapped_only or peer.get("connectionsEstablished", 0))]
        if not flapped_only:
            waiting += [address for address, status in read_bfd_peers(device, bfd[device]).items()
                        if address in inside and status.get("status") != "up"]
        if waiting:
            pending.append(device)
    return pending


def _wait_quiet(lab: Lab, timeout: float, quiet_s: float) -> float | None:
    """Seconds until the last change of the lab's routing (every switch's kernel BGP routes and
    each session's state and count of times it came up), once none has changed for `quiet_s`
    (None: it still changed within `timeout`)."""
    started = time.monotonic()
    last: tuple[dict[str, str], dict[str, str]] = ({}, {})
    changed = started
    while time.monotonic() - changed < quiet_s:
        if time.monotonic() - started > timeout:
            return None
        now = (route_tables(lab), _session_marks(lab))
        if now != last:
            last, changed = now, time.monotonic()
        time.sleep(0.2)
    return changed - started


def _session_marks(lab: Lab) -> dict[str, str]:
    """Per switch, each BGP peer's state and the times its session came up: a session that flapped
    changes its mark even when it is Established again by the next read."""
    devices = [switch.name for switch in lab.plan.switches]
    marks = {}
    for device, text in vtysh_each(lab, devices, "show bgp summary json").items():
        _, peers = read_bgp_summary(device, text)
        marks[device] = " ".join(f"{address}:{peer.get('state')}:{peer.get('connectionsEstablished')}"
                                 for address, peer in sorted(peers.items()))
    return marks


def read_bfd_peers(device: str, text: str) -> dict[str, dict[str, Any]]:
    """`show bfd peers json` of `device` as {peer address: its session}."""
    peers = vtysh_json(device, "show bfd peers json", text or "[]")
    if not isinstance(peers, list):
        raise LabError(f"{device}: `show bfd peers json` is no list: {text[:200]}")
    return {str(peer.get("peer")): peer for peer in peers if isinstance(peer, dict)}


def route_tables(lab: Lab) -> dict[str, str]:
    """Every switch's kernel BGP routes as `ip route` prints them."""
    return run_each(lab, {switch.name: ["ip", "route", "show", "proto", "bgp"] for switch in lab.plan.switches})


#: At most this many of a read's processes run at once: the lab's daemons already keep a small
#: machine busy, and a process per namespace started together only queue for the same cores.
MAX_PARALLEL = max(4, 2 * (os.cpu_count() or 1))


def run_each(lab: Lab, commands: dict[str, list[str]], timeout: float = 30) -> dict[str, str]:
    """Run one command per device namespace (see `run_all`); {device: stdout}. A failure (an exit
    code other than 0, or no exit in time) raises LabError."""
    result = {}
    failed = []
    for device, (code, out, err) in run_all(lab, commands, timeout).items():
        if code is None:
            failed.append(f"{device}: `{commands[device][0]}` did not finish in {timeout:g} s")
        elif code != 0:
            failed.append(f"{device}: `{' '.join(commands[device][:3])}` failed: {err.strip()[:200]}")
        else:
            result[device] = out
    if failed:
        raise LabError("; ".join(failed[:5]) + (f" (and {len(failed) - 5} more)" if len(failed) > 5 else ""))
    return result


def run_all(lab: Lab, commands: dict[str, list[str]],
            timeout: float = 30) -> dict[str, tuple[int | None, str, str]]:
    """Run one command per device namespace, at most MAX_PARALLEL at a time, each within `timeout`
    s of its start: {device: (exit code, None when it did not finish in time; stdout; stderr)}."""
    pending = list(commands.items())
    running: dict[str, tuple[subprocess.Popen[str], float]] = {}
    result: dict[str, tuple[int | None, str, str]] = {}
    while pending or running:
        while pending and len(running) < MAX_PARALLEL:
            device, command = pending.pop(0)
            running[device] = (subprocess.Popen(["ip", "netns", "exec", lab.ns(device), *command],
                                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True),
                               time.monotonic())
        device = next(iter(running))
        process, started = running.pop(device)
        try:
            out, err = process.communicate(timeout=max(0.0, started + timeout - time.monotonic()))
        except subprocess.TimeoutExpired:
            process.kill()
            out, err = process.communicate()
            result[device] = (None, out, err)
            continue
        result[device] = (process.returncode, out, err)
    return result


def memory_kb(lab: Lab, devices: set[str] | None = None) -> int:
    """Resident memory of the lab's daemons now (of `devices`' daemons, when given)."""
    total = 0
    for role, (pid, _) in lab.state["pids"].items():
        if devices is not None and role.split("/")[0] not in devices:
            continue
        with contextlib.suppress(OSError):
            status = Path(f"/proc/{pid}/status").read_text()
            match = re.search(r"^VmRSS:\s+(\d+)", status, re.MULTILINE)
            total += int(match.group(1)) if match else 0
    return total


def _alive(pid: int, program: str) -> bool:
    try:
        command = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    except OSError:
        return False
    return any(part.decode(errors="replace") == program for part in command)


def _namespace_processes(namespaces: set[str]) -> list[int]:
    """Processes whose network namespace is one of `namespaces` (left behind by a crash)."""
    inodes = set()
    for name in namespaces:
        with contextlib.suppress(OSError):
            inodes.add(os.stat(f"/run/netns/{name}").st_ino)
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            with contextlib.suppress(OSError):
                if os.stat(entry / "ns" / "net").st_ino in inodes:
                    found.append(int(entry.name))
    return found


def teardown(lab: Lab) -> dict[str, int]:
    """Remove everything the state file records; safe to run again."""
    killed = 0
    pids = [int(pid) for pid, program in lab.state["pids"].values() if _alive(int(pid), program)]
    pids += [pid for pid in _namespace_processes(set(lab.state["created"])) if pid not in pids and pid != os.getpid()]
    for pid in pids:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGCONT)  # a frozen (silent) daemon must see its SIGTERM
            os.kill(pid, signal.SIGTERM)
            killed += 1
    deadline = time.monotonic() + 3
    while time.monotonic() < deadline and any(Path(f"/proc/{pid}").exists() and _zombie_free(pid) for pid in pids):
        time.sleep(0.05)
    for pid in pids:
        with contextlib.suppress(ProcessLookupError):
            if _zombie_free(pid):
                os.kill(pid, signal.SIGKILL)
    removed = 0
    existing = set(sh("ip", "netns", "list").stdout.split())
    for name in lab.state["created"]:
        if name in existing:
            sh("ip", "netns", "del", name, check=False)
            removed += 1
    _restore_neighbor_limits(Path(lab.state["nodes"]))
    shutil.rmtree(lab.state["nodes"], ignore_errors=True)
    with contextlib.suppress(FileNotFoundError):
        (lab.root / "state.json").unlink()
    return {"namespaces": removed, "processes": killed}


def _zombie_free(pid: int) -> bool:
    """True while `pid` is a live process (not a zombie waiting for its parent)."""
    try:
        return " Z " not in Path(f"/proc/{pid}/stat").read_text().split(")", 1)[1][:4]
    except OSError:
        return False


def down(root: Path) -> dict[str, int] | None:
    """`lab down`: None when no lab is up."""
    with locked(root):
        lab = load(root)
        if lab is None:
            return None
        return teardown(lab)
