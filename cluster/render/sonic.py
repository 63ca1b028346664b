"""SONiC: config_db.json built as a dict and written with the json module (thousands of ports
stay fast and always valid JSON), plus FRR's bgpd config from a template.

Table and field names follow sonic-buildimage `files/build_templates/qos_config.j2` (FACTS.md
4.3): DSCP_TO_TC_MAP, TC_TO_PRIORITY_GROUP_MAP, TC_TO_QUEUE_MAP, MAP_PFC_PRIORITY_TO_QUEUE,
PFC_PRIORITY_TO_PRIORITY_GROUP_MAP, PORT_QOS_MAP (pfc_enable replaces the default "3,4"),
WRED_PROFILE, QUEUE, SCHEDULER (type STRICT / DWRR), CABLE_LENGTH and PFC_WD.
Buffers: no BUFFER_PROFILE / BUFFER_PG here. DEVICE_METADATA sets `buffer_model: dynamic`,
so buffermgrd derives each lossless profile from the port's speed, CABLE_LENGTH and MTU.
"""

from __future__ import annotations

import json
from typing import Any

from cluster.render.engine import render
from cluster.render.oob import oob_l2
from cluster.render.oob import sonic_tables as oob_tables
from cluster.render.views import PFC_WATCHDOG_MS, QosView, Switch

MAP = "ROCE"  # our map/profile name, so the platform's default AZURE maps are left alone
WRED = "ROCE_ECN"
SONIC_TYPE = {"leaf": "ToRRouter", "spine": "LeafRouter", "core": "SpineRouter"}  # SONiC's T0 / T1 / T2 names


def _scheduler(priority: int) -> str:
    return f"scheduler.{priority}"


def qos_tables(qos: QosView, ports: list[str], cable: dict[str, str]) -> dict[str, Any]:
    """The QoS tables for `ports` (all trusting DSCP with the same plan)."""
    dscp_to_tc = {str(dscp): str(priority) for dscp, priority in qos.dscp_map}  # unplanned: the lossy default
    identity = {str(priority): str(priority) for priority in range(8)}
    lossless = set(qos.lossless)
    tables: dict[str, Any] = {
        "DSCP_TO_TC_MAP": {MAP: dscp_to_tc},
        "TC_TO_QUEUE_MAP": {MAP: identity},
        "TC_TO_PRIORITY_GROUP_MAP": {MAP: {str(tc): str(tc if tc in lossless else 0) for tc in range(8)}},
        "MAP_PFC_PRIORITY_TO_QUEUE": {MAP: identity},
        "PFC_PRIORITY_TO_PRIORITY_GROUP_MAP": {MAP: {str(p): str(p) for p in qos.lossless}},
        "WRED_PROFILE": {WRED: {
            "ecn": "ecn_all",
            "wred_green_enable": "true", "wred_yellow_enable": "true", "wred_red_enable": "true",
            "green_min_threshold": str(qos.ecn_min_bytes), "green_max_threshold": str(qos.ecn_max_bytes),
            "yellow_min_threshold": str(qos.ecn_min_bytes), "yellow_max_threshold": str(qos.ecn_max_bytes),
            "red_min_threshold": str(qos.ecn_min_bytes), "red_max_threshold": str(qos.ecn_max_bytes),
            "green_drop_probability": "100", "yellow_drop_probability": "100", "red_drop_probability": "100",
        }},
        "SCHEDULER": {},
        "PORT_QOS_MAP": {"global": {"dscp_to_tc_map": MAP}},
        "QUEUE": {},
        "CABLE_LENGTH": {"AZURE": cable},
        "PFC_WD": {"GLOBAL": {"POLL_INTERVAL": str(PFC_WATCHDOG_MS)}},
    }
    for priority, weight in qos.dwrr:
        tables["SCHEDULER"][_scheduler(priority)] = {"type": "DWRR", "weight": str(weight)}
    for priority in qos.strict:
        tables["SCHEDULER"][_scheduler(priority)] = {"type": "STRICT"}
    queues = sorted({priority for priority, _ in qos.dwrr} | set(qos.strict))
    # one entry object per kind, shared by every port: big switches have thousands of queues
    port_qos = {"dscp_to_tc_map": MAP, "tc_to_queue_map": MAP, "tc_to_pg_map": MAP, "pfc_to_queue_map": MAP,
                "pfc_to_pg_map": MAP, "pfc_enable": qos.lossless_csv, "pfcwd_sw_enable": qos.lossless_csv}
    queue_entries = {queue: {"scheduler": _scheduler(queue), **({"wred_profile": WRED} if queue in qos.ecn else {})}
                     for queue in queues}
    watchdog = {"action": "drop", "detection_time": str(PFC_WATCHDOG_MS), "restoration_time": str(PFC_WATCHDOG_MS)}
    for port in ports:
        tables["PORT_QOS_MAP"][port] = port_qos
        for queue in queues:
            tables["QUEUE"][f"{port}|{queue}"] = queue_entries[queue]
        if qos.lossless:
            tables["PFC_WD"][port] = watchdog
    return tables


def config_db(switch: Switch) -> dict[str, Any]:
    """The whole config_db.json of one switch."""
    metadata: dict[str, str] = {
        "hostname": switch.name,
        "type": SONIC_TYPE.get(switch.tier, "ToRRouter") if switch.routed else "MgmtToRRouter",
        "platform_model": switch.model,
    }
    if switch.routed:
        metadata.update({"bgp_asn": str(switch.asn), "docker_routing_config_mode": "split"})
    if switch.qos is not None:
        metadata["buffer_model"] = "dynamic"
    db: dict[str, Any] = {
        "DEVICE_METADATA": {"localhost": metadata},
        "MGMT_PORT": {"eth0": {"admin_status": "up", "alias": "eth0", "description": switch.management or "oob"}},
        "PORT": {},
        "DEVICE_NEIGHBOR": {},
    }
    for port in switch.ports:
        db["PORT"][port.name] = {
            "admin_status": "up",
            "description": port.description,
            "mtu": str(port.mtu),
            "speed": str(port.speed_mbps),
        }
        db["DEVICE_NEIGHBOR"][port.name] = {"name": port.peer, "port": port.description.split(" ", 1)[1]}
    if switch.routed:
        db["LOOPBACK_INTERFACE"] = {"Loopback0": {}, f"Loopback0|{switch.loopback}/32": {}}
        interfaces: dict[str, Any] = {}
        for port in switch.ports:
            if port.address is not None:
                interfaces[port.name] = {}
                interfaces[f"{port.name}|{port.address}"] = {}
        db["INTERFACE"] = interfaces
    oob = oob_l2(switch)
    if oob is not None:
        db.update(oob_tables(oob))
    if switch.qos is not None and switch.qos_ports:
        cable = {port.name: f"{port.cable_m}m" for port in switch.qos_ports}
        db.update(qos_tables(switch.qos, [port.name for port in switch.qos_ports], cable))
    return db


_ENCODE = json.JSONEncoder(sort_keys=True).encode  # built once: json.dumps(sort_keys=...) builds one per call


def dumps(db: dict[str, Any]) -> str:
    """config_db JSON with one table entry per line: readable and diffable, yet fast. Each table
    is one call to json's C encoder (indent= would use the pure-Python one, 10x slower); entries
    are then put on their own lines by splitting at `}, "`, which cannot occur inside a JSON
    string (a quote inside a string is always escaped)."""
    tables = []
    for table in sorted(db):
        body = _ENCODE(db[table])[1:-1]
        entries = body.replace('}, "', '},\n        "')
        tables.append(f"    {_ENCODE(table)}: {{\n        {entries}\n    }}" if body else f"    {_ENCODE(table)}: {{}}")
    return "{\n" + ",\n".join(tables) + "\n}\n"


def render_switch(switch: Switch) -> dict[str, str]:
    """{file name: text} for one SONiC switch."""
    files = {"config_db.json": dumps(config_db(switch))}
    if switch.routed:
        files["frr.conf"] = render("frr/bgpd.conf.j2", switch=switch)
    return files
