"""What a SONiC switch runs, read from its rendered files as SONiC reads them: port MTU, admin
state and addresses from config_db.json (PORT, INTERFACE, LOOPBACK_INTERFACE), its management port
(MGMT_INTERFACE `eth0|prefix` with its `gwaddr`, in the VRF `mgmt` when MGMT_VRF_CONFIG enables
it: SONiC's management VRF design, sonic-mgmt_vrf.yang), and frr.conf unmodified, as FRR runs it
in SONiC's `split-unified` routing mode (one integrated config)."""

from __future__ import annotations

import ipaddress
import json
from collections.abc import Mapping
from typing import Any

from cluster.dialects import Management, RenderedFiles, Running, RunningPort

DEFAULT_MTU = 9100  # SONiC's port MTU when PORT gives none
MANAGEMENT_PORT = "eth0"  # SONiC's one management port (MGMT_PORT, MGMT_INTERFACE keys)
MANAGEMENT_VRF = "mgmt"  # the VRF SONiC creates when MGMT_VRF_CONFIG enables it
TABLES = ("PORT", "INTERFACE", "LOOPBACK_INTERFACE", "MGMT_INTERFACE", "MGMT_VRF_CONFIG")


def translate(name: str, tree: RenderedFiles) -> Running | None:
    """The switch `name` as SONiC runs its rendered files (None: they cannot say; reported)."""
    path = f"switches/{name}/config_db.json"
    routed = f"switches/{name}/frr.conf"
    frr_conf = tree.text(routed, "the switch's FRR config")  # first: reported even beside a broken config_db
    db = _config_db(tree, path)
    if db is None:
        return None
    addresses = _addresses(tree, path, db)
    ports = {port: _port(tree, path, port, entry, addresses) for port, entry in db["PORT"].items() if isinstance(entry, dict)}
    if frr_conf is None:
        return None
    return Running(addresses.get("Loopback0"), ports, frr_conf, f"{path} and {routed} (split-unified: FRR's integrated config)",
                   management=_management(tree, path, db))


def _management(tree: RenderedFiles, path: str, db: Mapping[str, dict[str, Any]]) -> Management | None:
    """eth0 as MGMT_INTERFACE and MGMT_VRF_CONFIG set it (None: no MGMT_INTERFACE address)."""
    found = [(key.partition("|")[2], entry) for key, entry in db["MGMT_INTERFACE"].items()
             if key.partition("|")[0] == MANAGEMENT_PORT and key.partition("|")[2]]
    if not found:
        return None
    prefix, entry = found[0]
    try:
        ipaddress.IPv4Interface(prefix)
    except ValueError:
        tree.problem(path, f"MGMT_INTERFACE {MANAGEMENT_PORT}|{prefix!r} is not an IPv4 interface address",
                     f"write it as eth0|a.b.c.d/len, or {tree.again}")
        return None
    gateway = entry.get("gwaddr") if isinstance(entry, dict) else None
    enabled = db["MGMT_VRF_CONFIG"].get("vrf_global", {})
    vrf = MANAGEMENT_VRF if isinstance(enabled, dict) and enabled.get("mgmtVrfEnabled") == "true" else None
    return Management(MANAGEMENT_PORT, prefix, gateway if isinstance(gateway, str) else None, vrf)


def _config_db(tree: RenderedFiles, path: str) -> dict[str, dict[str, Any]] | None:
    """The TABLES of a config_db the lab reads (None: not one)."""
    text = tree.text(path, "the switch's SONiC config")
    if text is None:
        return None
    try:
        db = json.loads(text)
    except (ValueError, RecursionError) as error:  # RecursionError: nesting deeper than the parser goes
        tree.problem(path, f"not a SONiC config_db ({error})", tree.again)
        return None
    if not isinstance(db, dict):
        tree.problem(path, f"not a SONiC config_db (a JSON {type(db).__name__}, not an object of tables)",
                     tree.again)
        return None
    tables = {table: db.get(table, {}) for table in TABLES}
    wrong = [table for table, value in tables.items() if not isinstance(value, dict)]
    for table in wrong:
        tree.problem(path, f"not a SONiC config_db ({table} is a {type(tables[table]).__name__}, not a table)",
                     tree.again)
    return None if wrong else tables


def _addresses(tree: RenderedFiles, path: str, db: Mapping[str, dict[str, Any]]) -> dict[str, str]:
    """{port: a.b.c.d/len} of the INTERFACE and LOOPBACK_INTERFACE keys (`port|prefix`)."""
    addresses: dict[str, str] = {}
    for key in [*db["INTERFACE"], *db["LOOPBACK_INTERFACE"]]:
        port, _, prefix = key.partition("|")
        if not prefix:
            continue  # the interface's own entry; its addresses are the `port|prefix` keys
        try:
            ipaddress.IPv4Interface(prefix)
        except ValueError:
            tree.problem(path, f"{key!r} is not an IPv4 interface address", f"write it as PORT|a.b.c.d/len, or {tree.again}")
            continue
        addresses[port] = prefix
    return addresses


def _port(tree: RenderedFiles, path: str, port: str, entry: Mapping[str, Any], addresses: Mapping[str, str]) -> RunningPort:
    try:
        mtu = int(entry.get("mtu", DEFAULT_MTU))
    except (TypeError, ValueError):
        tree.problem(path, f"PORT|{port} mtu {entry.get('mtu')!r} is not a number", tree.again)
        mtu = 0  # the plan is not built: this only lets the other ports be examined
    return RunningPort(addresses.get(port), mtu, entry.get("admin_status") == "up")
