"""The switches' management plane, read back from the rendered files of every dialect: each switch
on the oob segment at its own address in the upper half of `addressing.oob`, with the gateway and a
management VRF (an oob switch on its oob VLAN interface), the stack file's NTP, syslog, DNS,
TACACS+ and SNMP, SSH, the management API, the banner and the local users; no secret in any file,
only placeholders, which the deploy's own tools fill (envsubst for the files the OS loads, bash
from the environment for the scripts, stopping under `set -u` when one is missing)."""

from __future__ import annotations

import copy
import ipaddress
import json
import os
import re
import shutil
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import yaml

from cluster.artifacts import render_tree
from cluster.credentials import CREDENTIALS, PASSWORD_HASH_VARIABLE
from cluster.pipeline import Valid, validate_mapping
from tests.conftest import ROOT, missing_tool, run, stack
from tests.test_oob import _oob_designs

PROD = yaml.safe_load((ROOT / "stacks" / "Pulumi.prod.yaml").read_text())["config"]["gpu-cluster:cluster"]
FULL = {"ntp_servers": ["192.0.2.10", "192.0.2.11"], "syslog_servers": ["192.0.2.20"], "dns_servers": ["192.0.2.53"],
        "tacacs_servers": ["192.0.2.49", "192.0.2.50"], "snmp": {"location": "Hall A row 3", "contact": "noc at example",
                                                      "trap_receivers": ["192.0.2.162"]},
        "banner": "Property of Example Corp. Authorized use only.",
        "users": [{"name": "admin"}, {"name": "viewer", "role": "operator"}]}
VARIABLES = {*CREDENTIALS.values(), PASSWORD_HASH_VARIABLE}


@dataclass
class Stated:
    """What one switch's files say of its management plane."""

    address: str | None = None
    gateway: str | None = None
    vrf: bool = False  # the management address sits in a management VRF
    ntp: set[str] = field(default_factory=set)
    syslog: set[str] = field(default_factory=set)
    dns: set[str] = field(default_factory=set)
    tacacs: set[str] = field(default_factory=set)
    snmp: bool = False
    api: bool = False  # the OS's management API (eAPI, NVUE's REST API; SONiC's is its gNMI server)
    gnmi: bool = False
    banner: str | None = None
    users: dict[str, str] = field(default_factory=dict)  # name -> admin | operator
    secrets: set[str] = field(default_factory=set)  # the placeholder variables the files carry


def _variables(text: str) -> set[str]:
    return set(re.findall(r"\$\{(GPU_CLUSTER_[A-Z_]+)\}", text))


def read_eos(files: dict[str, str]) -> Stated:
    text = files["eos.cfg"]
    stated = Stated(secrets=_variables(text))
    port = re.search(r"^interface (Management\d|Vlan\d+)\n((?:   .*\n)*)", text, re.M)
    if port is not None:
        address = re.search(r"^   ip address (\S+)$", port[2], re.M)
        stated.address = address[1] if address and address[1] != "dhcp" else None
        stated.vrf = "   vrf MGMT" in port[2]
    route = re.search(r"^ip route (?:vrf MGMT )?0\.0\.0\.0/0 (\S+)$", text, re.M)
    stated.gateway = route[1] if route else None
    in_vrf = r"(?:vrf MGMT )?"
    stated.ntp = set(re.findall(rf"^ntp server {in_vrf}(\S+) iburst$", text, re.M))
    stated.syslog = set(re.findall(rf"^logging {in_vrf}host (\S+)$", text, re.M))
    stated.dns = set(re.findall(rf"^ip name-server {in_vrf}(\S+)$", text, re.M))
    hosts = set(re.findall(rf"^tacacs-server host (\S+) {in_vrf}key 0 \S+$", text, re.M))
    grouped = "aaa authentication login default group TACACS local" in text
    stated.tacacs = hosts if grouped else set()
    stated.snmp = bool(re.search(r"^snmp-server community \S+ ro$", text, re.M))
    stated.api = "management api http-commands" in text
    stated.gnmi = "management api gnmi" in text
    banner = re.search(r"^banner login\n(.*)\nEOF$", text, re.M)
    stated.banner = banner[1] if banner else None
    stated.users = {name: "admin" if role == "network-admin" else "operator" for name, role in re.findall(
        r"^username (\S+) privilege \d+ role (\S+) secret sha512 \S+$", text, re.M)}
    return stated


def read_nvue(files: dict[str, str]) -> Stated:
    text = files["nvue.sh"]
    stated = Stated(secrets=_variables(text))
    eth0 = re.search(r"^nv set interface eth0 ip address (\S+)$", text, re.M)
    vlan = re.search(r"^nv set interface vlan\d+ ip address (\S+)$", text, re.M)
    stated.address = (eth0 or vlan)[1] if (eth0 or vlan) else None
    stated.vrf = bool(re.search(r"^nv set interface eth0 ip vrf mgmt$", text, re.M))
    gateway = re.search(r"^nv set interface eth0 ip gateway (\S+)$", text, re.M) or re.search(
        r"^nv set vrf default router static 0\.0\.0\.0/0 via (\S+)$", text, re.M)
    stated.gateway = gateway[1] if gateway else None
    vrf = "mgmt" if stated.vrf else "default"
    stated.ntp = set(re.findall(rf"^nv set service ntp {vrf} server (\S+) iburst on$", text, re.M))
    stated.syslog = set(re.findall(rf"^nv set service syslog {vrf} server (\S+)$", text, re.M))
    stated.dns = set(re.findall(rf"^nv set service dns {vrf} server (\S+)$", text, re.M))
    if re.search(rf"^nv set system aaa tacacs vrf {vrf}$", text, re.M) and "authentication-order 5 tacacs" in text:
        stated.tacacs = set(re.findall(r"^nv set system aaa tacacs server (\S+) priority \d+$", text, re.M))
    stated.snmp = "nv set service snmp-server enable on" in text and "readonly-community" in text
    stated.api = "nv set system api state enabled" in text
    stated.gnmi = "nv set system gnmi-server state enabled" in text
    banner = re.search(r"^nv set system message pre-login '(.*)'$", text, re.M)
    stated.banner = banner[1] if banner else None
    stated.users = {name: "admin" if role == "system-admin" else "operator" for name, role in re.findall(
        r"^nv set system aaa user (\S+) role (\S+)$", text, re.M)}
    return stated


def read_sonic(files: dict[str, str]) -> Stated:
    db = json.loads(files["config_db.json"])
    stated = Stated(secrets=_variables(files["config_db.json"]) | _variables(files.get("users.sh", "")))
    stated.vrf = db.get("MGMT_VRF_CONFIG", {}).get("vrf_global", {}).get("mgmtVrfEnabled") == "true"
    for key, entry in db.get("MGMT_INTERFACE", {}).items():
        stated.address, stated.gateway = key.split("|")[1], entry.get("gwaddr")
    for key in db.get("VLAN_INTERFACE", {}):
        if "|" in key:
            stated.address = key.split("|")[1]
            stated.gateway = db.get("STATIC_ROUTE", {}).get("0.0.0.0/0", {}).get("nexthop")
    stated.ntp = set(db.get("NTP_SERVER", {}))
    stated.syslog = set(db.get("SYSLOG_SERVER", {}))
    stated.dns = set(db.get("DNS_NAMESERVER", {}))
    if db.get("AAA", {}).get("authentication", {}).get("login", "").startswith("tacacs+"):
        stated.tacacs = set(db.get("TACPLUS_SERVER", {}))
    stated.snmp = bool(db.get("SNMP_COMMUNITY"))
    # without a server certificate SONiC runs gNMI without TLS on 127.0.0.1 only (gnmi-native.sh)
    gnmi = db.get("GNMI", {})
    stated.api = stated.gnmi = bool(gnmi.get("certs", {}).get("server_crt") and gnmi.get("certs", {}).get("server_key")
                                    and gnmi.get("gnmi", {}).get("port"))
    stated.banner = db.get("BANNER_MESSAGE", {}).get("global", {}).get("login")
    stated.users = {name: "admin" if groups else "operator"
                    for name, groups in re.findall(r'^account (\S+) "(.*)"$', files.get("users.sh", ""), re.M)}
    return stated


READERS = {"eos.cfg": read_eos, "nvue.sh": read_nvue, "config_db.json": read_sonic}
# Cumulus Linux runs no gNMI server on a Spectrum-1 switch (Cumulus Linux 5.14, gNMI Streaming)
SPECTRUM_1 = {"SN2201"}


def switch_files(files: dict[str, str]) -> dict[str, dict[str, str]]:
    """{switch: {file name: text}} of every switch config."""
    switches: dict[str, dict[str, str]] = {}
    for path, text in files.items():
        parts = path.split("/")
        if parts[0] == "switches":
            switches.setdefault(parts[1], {})[parts[2]] = text
    return switches


def problems(result: Valid, files: dict[str, str]) -> list[str]:
    """Every way the rendered files differ from the design's management plane."""
    spec = result.spec
    plane = spec.management_plane
    pool = ipaddress.IPv4Network(spec.addressing.oob)
    upper = list(pool.subnets(prefixlen_diff=1))[1]
    found: list[str] = []
    addresses: dict[str, str] = {}
    for switch, own in sorted(switch_files(files).items()):
        reader = next((READERS[name] for name in own if name in READERS), None)
        if reader is None:
            continue
        stated = reader(own)
        node = result.topology.switch(switch)
        oob_switch = node["network"] == "oob"
        gnmi = plane.api and not (reader is read_nvue and node["model"] in SPECTRUM_1)
        if spec.oob is None:
            if stated.address is not None:
                found.append(f"{switch}: address {stated.address} with no oob network (its port keeps DHCP)")
        elif stated.address is None or stated.gateway != plane.gateway:
            found.append(f"{switch}: management address {stated.address} via {stated.gateway}, want one via {plane.gateway}")
        else:
            interface = ipaddress.IPv4Interface(stated.address)
            if interface.network != pool or interface.ip not in upper:
                found.append(f"{switch}: {stated.address} is not in the upper half of {pool} with its prefix length")
            if stated.address in addresses.values():
                found.append(f"{switch}: {stated.address} is also another switch's")
            addresses[switch] = stated.address
        if stated.vrf == oob_switch:
            found.append(f"{switch}: management VRF {'on' if stated.vrf else 'off'} on {'an oob' if oob_switch else 'a'} switch")
        wanted = {"ntp": set(plane.ntp_servers or ()), "syslog": set(plane.syslog_servers), "dns": set(plane.dns_servers),
                  "tacacs": set(plane.tacacs_servers)}
        for service, servers in wanted.items():
            if getattr(stated, service) != servers:
                found.append(f"{switch}: {service} {sorted(getattr(stated, service))}, want {sorted(servers)}")
        if (stated.snmp != (plane.snmp is not None) or stated.api != plane.api or stated.gnmi != gnmi
                or stated.banner != plane.banner):
            found.append(f"{switch}: snmp {stated.snmp}, api {stated.api}, gnmi {stated.gnmi}, banner {stated.banner!r}")
        if stated.users != {user.name: user.role for user in plane.users}:
            found.append(f"{switch}: users {stated.users}")
        if not stated.secrets <= VARIABLES or PASSWORD_HASH_VARIABLE not in stated.secrets:
            found.append(f"{switch}: placeholders {sorted(stated.secrets)}")
    return found


def _design(data: dict[str, Any]) -> tuple[Valid, dict[str, str]]:
    result = validate_mapping("t", data)
    assert isinstance(result, Valid) and result.ok, [str(f) for f in result.findings if str(f.severity) == "error"]
    return result, render_tree(result.spec, result.topology)


def _designs() -> list[tuple[str, dict[str, Any]]]:
    designs = [(name, data) for name, data in _oob_designs() if name.startswith("prod-")]
    designs.append(("prod-full-services-eos", {**copy.deepcopy(dict(designs)["prod-eos"]), "management_plane": FULL}))
    designs.append(("prod-full-services-sonic", {**copy.deepcopy(dict(designs)["prod-sonic"]), "management_plane": FULL}))
    designs.append(("prod-full-services-nvue", {**copy.deepcopy(dict(designs)["prod-nvue"]), "management_plane": FULL}))
    eos = copy.deepcopy(dict(designs)["prod-eos"])
    eos["fabric"]["leaf"] = eos["fabric"]["spine"] = {"switch": "7060X6", "port_gbps": 400, "os": "eos"}
    designs.append(("prod-fabric-eos", {**eos, "management_plane": FULL}))
    sonic = copy.deepcopy(dict(designs)["prod-sonic"])
    for tier in ("leaf", "spine"):
        sonic["fabric"][tier] = {**sonic["fabric"][tier], "os": "sonic"}
    designs.append(("prod-fabric-sonic", {**sonic, "management_plane": FULL}))
    sn2201 = copy.deepcopy(dict(designs)["prod-nvue"])
    sn2201["oob"] = {"leaf": {"switch": "SN2201"}}
    designs.append(("prod-sn2201-oob", sn2201))
    designs.append(("prod-no-api", {**copy.deepcopy(dict(designs)["prod-sonic"]), "management_plane": {"api": False}}))
    dev = yaml.safe_load((ROOT / "stacks" / "Pulumi.dev.yaml").read_text())["config"]["gpu-cluster:cluster"]
    designs.append(("dev", dev))
    return designs


COMMUNITY = "${GPU_CLUSTER_SNMP_COMMUNITY}"


@pytest.mark.parametrize("name", ["prod-fabric-eos", "prod-full-services-nvue"])
def test_snmp_traps_leave_by_the_management_vrf_with_the_community_placeholder(name: str) -> None:
    """management_plane.snmp.trap_receivers: EOS `snmp-server host ... vrf MGMT version 2c` (AVD
    eos_cli_config_gen snmp-server.j2) and `snmp-server enable traps`; NVUE `trap-destination ... vrf
    ... community-password ... version 2c` (Cumulus Linux 5.x NVUE command reference) with link and
    authentication-failure traps; an oob switch sends from its default VRF. No SONiC tier here: none
    is told it sends nothing."""
    result, files = _design(dict(_designs())[name])
    eos = [text for path, text in files.items() if path.endswith("eos.cfg")]
    nvue = [text for path, text in files.items() if path.endswith("nvue.sh")]
    assert eos if name == "prod-fabric-eos" else nvue
    for text in eos:
        vrf = " vrf MGMT" if "\nvrf instance MGMT\n" in text else ""
        assert f"snmp-server host 192.0.2.162{vrf} version 2c {COMMUNITY}\n" in text
        assert "\nsnmp-server enable traps\n" in text
    for text in nvue:
        vrf = "mgmt" if "nv set interface eth0 ip vrf mgmt" in text else "default"
        assert (f'nv set service snmp-server trap-destination 192.0.2.162 vrf {vrf} community-password "{COMMUNITY}" '
                "version 2c") in text
        assert "nv set service snmp-server trap-link-down check-frequency 15" in text
    assert not [f for f in result.findings if f.path == "management_plane.snmp.trap_receivers"]


def test_a_sonic_tier_is_told_it_sends_no_snmp_traps() -> None:
    result, files = _design(dict(_designs())["prod-fabric-sonic"])
    [ignored] = [f for f in result.findings if f.path == "management_plane.snmp.trap_receivers"]
    assert ignored.rule == "SPEC-IGNORED" and "fabric.leaf (SONiC (FRR))" in ignored.message
    assert "fabric.core" not in ignored.message  # a two-tier fabric: only the tiers built are named
    assert not any("192.0.2.162" in text for path, text in files.items() if path.endswith("config_db.json"))


@pytest.mark.parametrize(("name", "data"), _designs(), ids=[name for name, _ in _designs()])
def test_every_switch_states_the_design_management_plane(name: str, data: dict[str, Any]) -> None:
    result, files = _design(data)
    assert problems(result, files) == []
    assert any(name in READERS for own in switch_files(files).values() for name in own)


def test_the_check_fails_on_a_config_without_a_management_plane() -> None:
    """Before the management plane, EOS named Management1 only in a comment: the reader sees no
    address, no VRF, no users."""
    result, files = _design(dict(_designs())["prod-fabric-eos"])
    stripped = {path: re.sub(r"(?s)^!\nvrf instance MGMT\n.*?^EOF\n", "", text, flags=re.M) for path, text in files.items()}
    found = problems(result, stripped)
    assert any("management address None" in problem for problem in found), found
    assert any("users {}" in problem for problem in found), found


def test_management_addresses_are_stable_when_a_pool_is_added() -> None:
    data = stack(oob={"leaf": {"switch": "OOB-48x1"}})
    before = _addresses(data)
    data["node_pools"].append({"name": "b200", "nodes": 8, "gpu": "B200"})
    after = _addresses(data)
    assert before and all(after[switch] == address for switch, address in before.items())


def _addresses(data: dict[str, Any]) -> dict[str, str]:
    _, files = _design(data)
    return {switch: str(read_nvue(own).address) for switch, own in switch_files(files).items() if "nvue.sh" in own}


# --- bad stack input: SCHEMA findings with the path and the fix ------------------------------

@pytest.mark.parametrize(("plane", "path", "words"), [
    ({"gateway": "172.16.200.1"}, "management_plane.gateway", "lower half of addressing.oob"),
    ({"gateway": "10.1.2.3"}, "management_plane.gateway", "lower half of addressing.oob"),
    ({"ntp_servers": ["ntp.example.com"]}, "management_plane.ntp_servers[0]", "IPv4 address"),
    ({"tacacs_servers": ["192.0.2.1", "192.0.2.1"]}, "management_plane", "twice"),
    ({"users": [{"name": "admin"}, {"name": "admin", "role": "operator"}]}, "management_plane", "twice"),
    ({"users": []}, "management_plane.users", "at least 1"),
    ({"banner": "it's $(reboot)"}, "management_plane.banner", "no quote, `$` or backslash"),
    ({"snmp": {"location": "a\nb"}}, "management_plane.snmp.location", "one line"),
    ({"users": [{"name": "Admin"}]}, "management_plane.users[0].name", "login name"),
    # the oob DHCP server: in the static first quarter, never in its own pool or among the switches
    ({"dhcp_server": "172.16.64.9"}, "management_plane.dhcp_server", "172.16.0.0/18"),
    ({"dhcp_server": "172.16.200.1"}, "management_plane.dhcp_server", "the switches' management addresses"),
    ({"dhcp_server": "10.9.0.1"}, "management_plane.dhcp_server", "such as 172.16.0.2"),
])
def test_a_bad_management_plane_is_a_schema_finding(plane: dict[str, Any], path: str, words: str) -> None:
    result = run(stack(management_plane=plane, oob={"leaf": {"switch": "OOB-48x1"}}))
    schema = [f for f in result.findings if f.rule == "SCHEMA"]
    assert result.exit_code == 2 and schema, [str(f) for f in result.findings]
    assert any(f.path == path and words in f"{f.message} {f.hint}" for f in schema), [str(f) for f in schema]


def test_an_oob_pool_too_small_for_the_switches_is_an_address_finding() -> None:
    result = run({**copy.deepcopy(PROD), "addressing": {"oob": "172.16.0.0/26"}})
    assert any(f.rule == "ADDR-POOL" and f.path == "addressing.oob" and "/2" in f.hint for f in result.findings), \
        [str(f) for f in result.findings]


def test_the_oob_pool_may_not_overlap_another() -> None:
    result = run(stack(addressing={"oob": "10.0.0.0/16"}))
    assert any(f.rule == "SCHEMA" and f.path == "addressing.oob" and "overlaps" in f.message for f in result.findings)


def test_a_cloud_stack_ignores_the_management_plane() -> None:
    data = yaml.safe_load((ROOT / "stacks" / "Pulumi.aws-p5e.yaml").read_text())["config"]["gpu-cluster:cluster"]
    result = run({**data, "management_plane": {"ntp_servers": ["192.0.2.10"]}})
    assert any(f.rule == "SPEC-IGNORED" and f.path == "management_plane" for f in result.findings)


# --- secrets: placeholders only, filled by the deploy's tools --------------------------------

SENTINEL = "s3ntinel-Mgmt-42"


def _secret_values() -> dict[str, str]:
    values = {variable: f"{SENTINEL}-{variable.lower()}" for variable in CREDENTIALS.values()}
    values[PASSWORD_HASH_VARIABLE] = f"$6${SENTINEL}salt$hash"
    return values


def test_filled_by_envsubst_the_files_carry_the_secrets_and_no_placeholder() -> None:
    """eos.cfg and config_db.json are loaded by the OS, not run: the push step fills them with
    envsubst and the variable list (docs/reference/dialects.md); every placeholder is one of the credentials."""
    envsubst = shutil.which("envsubst")
    if envsubst is None:
        missing_tool("envsubst not found (Debian gettext-base, in .ci/apt-packages.txt)")
    values = _secret_values()
    listed = " ".join(f"${{{variable}}}" for variable in sorted(values))
    for design in ("prod-full-services-eos", "prod-fabric-sonic"):
        _, files = _design(dict(_designs())[design])
        loaded = {path: text for path, text in files.items() if path.endswith(("eos.cfg", "config_db.json"))}
        assert loaded and all(SENTINEL not in text for text in loaded.values())
        for path, text in loaded.items():
            filled = subprocess.run([envsubst, listed], input=text, capture_output=True, text=True, check=True,
                                    env={**values, "PATH": os.environ.get("PATH", "")}).stdout
            assert "${GPU_CLUSTER_" not in filled and SENTINEL in filled, path
            if path.endswith("config_db.json"):
                json.loads(filled)  # still JSON: the hash's `$` and the key's characters need no escape


def _stub_bin(tmp_path: Path, names: tuple[str, ...]) -> tuple[Path, Path]:
    """A folder of stub commands that record their arguments, one line per call."""
    folder, log = tmp_path / "bin", tmp_path / "calls.log"
    folder.mkdir()
    for name in names:
        stub = folder / name
        stub.write_text(f'#!/bin/sh\necho "{name} $*" >> "{log}"\n[ "{name}" != id ]\n')
        stub.chmod(0o755)
    return folder, log


@pytest.mark.parametrize(("design", "script", "commands"), [
    ("prod-full-services-nvue", "nvue.sh", ("nv",)),
    ("prod-fabric-sonic", "users.sh", ("id", "useradd", "usermod")),
])
def test_the_scripts_take_the_secrets_from_the_environment(tmp_path: Path, design: str, script: str,
                                                            commands: tuple[str, ...]) -> None:
    """nvue.sh and users.sh run with the credentials in the environment and pass them on; without
    them bash stops (`set -u`) before any switch setting, so no half-configured switch is left."""
    bash = shutil.which("bash")
    assert bash is not None
    _, files = _design(dict(_designs())[design])
    path, text = next((path, text) for path, text in sorted(files.items()) if path.endswith(f"/{script}"))
    target = tmp_path / script
    target.write_text(text)
    folder, log = _stub_bin(tmp_path, commands)
    base = {"PATH": f"{folder}:/usr/bin:/bin"}
    ran = subprocess.run([bash, str(target)], capture_output=True, text=True, env={**base, **_secret_values()}, timeout=60)
    assert ran.returncode == 0, ran.stderr
    calls = log.read_text()
    assert f"$6${SENTINEL}salt$hash" in calls
    if script == "nvue.sh":
        assert f"secret {SENTINEL}-gpu_cluster_tacacs_key" in calls and calls.rstrip().endswith("nv config apply -y")
    log.unlink()
    missing = subprocess.run([bash, str(target)], capture_output=True, text=True, env=base, timeout=60)
    assert missing.returncode != 0 and "unbound variable" in missing.stderr, (path, missing.stderr)
    assert not log.exists() or "config apply" not in log.read_text()
