"""SONiC: config_db.json built as a dict and written with the json module (thousands of ports
stay fast and always valid JSON), plus FRR's bgpd config from a template.

Table and field names follow sonic-buildimage `files/build_templates/qos_config.j2` (FACTS.md
4.3): DSCP_TO_TC_MAP, TC_TO_PRIORITY_GROUP_MAP, TC_TO_QUEUE_MAP, MAP_PFC_PRIORITY_TO_QUEUE,
PFC_PRIORITY_TO_PRIORITY_GROUP_MAP, PORT_QOS_MAP (pfc_enable replaces the default "3,4"),
WRED_PROFILE, QUEUE, SCHEDULER (type STRICT / DWRR), CABLE_LENGTH and PFC_WD.
Buffers: SONiC's dynamic model (`buffer_model: dynamic`), laid out as SONiC's
`files/build_templates/buffers_config.j2` and the SKU's buffers_defaults_*.j2 lay it out in
dynamic mode: BUFFER_POOL (pool sizes left to buffermgrd but the egress lossless pool's),
BUFFER_PROFILE, per QoS port BUFFER_PORT_INGRESS/EGRESS_PROFILE_LIST, BUFFER_PG (a `NULL`
profile on each lossless priority group, which tells buffermgrd to size its headroom from the
port's speed, CABLE_LENGTH and MTU; the lossy profile on PG 0) and BUFFER_QUEUE (the lossless
profile on the plan's lossless queues, the lossy one on the others), and the
DEFAULT_LOSSLESS_BUFFER_PARAMETER and LOSSLESS_TRAFFIC_PATTERN buffermgrd reads. Upstream's
templates hard-code PGs and queues 3-4; here they follow the plan's PFC priorities (priority =
TC = PG = queue, as the maps above set it). Ports the plan does not cover (every port of a
storage, management or oob switch) get the lossy profiles on PG 0 and queues 0-6, as the SKU's
templates give a port without PFC, so `create_only_config_db_buffers` leaves no port without buffers.

PORT entries take name, lanes, alias and index from the model's SKU (sonic_ports.yaml in this folder,
from the SKU's port_config.ini); DEVICE_METADATA names that SKU (`hwsku`) and its `platform`,
and a base MAC derived from the cluster's and the switch's names. Routing: `docker_routing_config_mode:
split-unified`, the mode in which SONiC's docker-fpm-frr start script keeps the one frr.conf
written here and runs it as FRR's integrated config (`split` deletes frr.conf; `separated` and
`unified` generate FRR's config from config_db instead). `frr_mgmt_framework_config: "true"`
because frr.conf runs BFD on every BGP session: the bgp container's supervisord template
(`dockers/docker-fpm-frr/frr/supervisord/supervisord.conf.common.j2`) starts bfdd, and lists it
as a critical process, only with that flag. The flag also runs frrcfgd instead of bgpcfgd, which
only acts on CONFIG_DB's BGP tables (none are written here) and replays nothing in split-unified.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from cluster.dialects.sonic import sku_port
from cluster.dialects.sonic.skus import SonicBuffers, sonic_platforms, sonic_sku
from cluster.intent.management import ManagementPlane, Telemetry
from cluster.intent.oob import DEFAULT_BRIDGE_PRIORITY, OOB_VLAN, OobL2, oob_l2
from cluster.intent.qos import SWITCH_MTU, QosPlan, QosSide
from cluster.intent.switch import PFC_WATCHDOG_MS, Switch
from cluster.render.engine import render

MAP = "ROCE"  # our map/profile name, so the platform's default AZURE maps are left alone
WRED = "ROCE_ECN"
ROUTING_MODE = "split-unified"
SONIC_TYPE = {"leaf": "ToRRouter", "spine": "LeafRouter", "core": "SpineRouter"}  # SONiC's T0 / T1 / T2 names


def _scheduler(priority: int) -> str:
    return f"scheduler.{priority}"


def qos_tables(qos: QosPlan, ports: list[str], cable: dict[str, str]) -> dict[str, Any]:
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


def base_mac(cluster: str, name: str) -> str:
    """A MAC address that depends on the cluster's and the switch's names only: the first six
    bytes of the SHA-256 of `cluster/name`, with the locally administered bit set and the
    multicast bit clear (IEEE 802, bits 1 and 0 of the first octet), so it cannot collide with a
    vendor's burned-in address. The cluster's name is in it because switch names repeat from
    one cluster to the next (every design has a `leaf-001-r0`), and two clusters on one site
    must not share chassis MACs (the LLDP chassis id, the router MAC on every routed port)."""
    octets = bytearray(hashlib.sha256(f"{cluster}/{name}".encode()).digest()[:6])
    octets[0] = (octets[0] & 0xFC) | 0x02
    return ":".join(f"{octet:02x}" for octet in octets)


def _ranges(numbers: list[int]) -> list[str]:
    """[0, 1, 2, 4, 5, 6] -> ["0-2", "4-6"]: SONiC's `a-b` keys for runs of PGs or queues."""
    runs: list[list[int]] = []
    for number in sorted(numbers):
        if runs and number == runs[-1][-1] + 1:
            runs[-1].append(number)
        else:
            runs.append([number])
    return [f"{run[0]}-{run[-1]}" if len(run) > 1 else str(run[0]) for run in runs]


LOSSY_QUEUES_UP_TO = 6  # upstream's templates give queues 0-6 a profile and leave queue 7 alone


def buffer_tables(buffers: SonicBuffers, qos: QosPlan | None, qos_ports: list[str], lossy_ports: list[str]
                  ) -> dict[str, Any]:
    """The dynamic-model buffer tables of one switch (see the module text): `qos_ports` buffered
    for the plan, `lossy_ports` (every port of a switch outside the RoCE fabric) with lossy
    profiles on PG 0 and queues 0-6, as the SKU's templates give a port without PFC."""
    ingress_lossy = "ingress_lossy_pool" if buffers.ingress_lossy_pool else "ingress_lossless_pool"
    pools: dict[str, Any] = {
        "ingress_lossless_pool": {"mode": "dynamic", "type": "ingress"},
        "egress_lossless_pool": {"mode": "dynamic", "size": str(buffers.egress_lossless_pool_bytes), "type": "egress"},
        "egress_lossy_pool": {"mode": "dynamic", "type": "egress"},
    }
    if buffers.ingress_lossy_pool:
        pools["ingress_lossy_pool"] = {"mode": "dynamic", "type": "ingress"}
    profiles = {
        "ingress_lossy_profile": {"dynamic_th": "3", "pool": ingress_lossy, "size": "0"},
        "egress_lossy_profile": {"dynamic_th": "7", "pool": "egress_lossy_pool", "size": "9216"},
        "q_lossy_profile": {"dynamic_th": "3", "pool": "egress_lossy_pool", "size": "0"},
    }
    if buffers.lossless:  # a lossy-only SKU's templates define no lossless profile (C256S1)
        profiles["ingress_lossless_profile"] = {"dynamic_th": "7", "pool": "ingress_lossless_pool", "size": "0"}
        profiles["egress_lossless_profile"] = {"dynamic_th": "7", "pool": "egress_lossless_pool", "size": "0"}
    # the SKU family's lists (buffers_defaults_objects.j2 generate_profile_lists), the same on every port
    ingress_list = {"profile_list": ",".join(
        (["ingress_lossless_profile"] if buffers.lossless else [])
        + (["ingress_lossy_profile"] if buffers.ingress_lossy_pool or not buffers.lossless else []))}
    egress_list = {"profile_list": ",".join((["egress_lossless_profile"] if buffers.lossless else [])
                                            + ["egress_lossy_profile"])}
    lossless = list(qos.lossless) if qos is not None else []
    used = ({priority for priority, _ in qos.dwrr} | set(qos.strict) | set(lossless)) if qos is not None else set()
    plans = [(qos_ports, lossless, used), (lossy_ports, [], set())]
    pg: dict[str, Any] = {}
    queue: dict[str, Any] = {}
    lossless_pg = {"profile": "NULL"}
    lossy_pg = {"profile": "ingress_lossy_profile"}
    lossless_queue = {"profile": "egress_lossless_profile"}
    lossy_queue = {"profile": "q_lossy_profile"}
    for ports, pfc, queues in plans:
        lossy_queues = _ranges([number for number in range(max([LOSSY_QUEUES_UP_TO, *queues]) + 1)
                                if number not in pfc])
        for port in ports:
            for run in _ranges(pfc):
                pg[f"{port}|{run}"] = lossless_pg
                queue[f"{port}|{run}"] = lossless_queue
            if 0 not in pfc:
                pg[f"{port}|0"] = lossy_pg  # TC_TO_PRIORITY_GROUP_MAP sends every lossy TC to PG 0
            for run in lossy_queues:
                queue[f"{port}|{run}"] = lossy_queue
    every = qos_ports + lossy_ports
    return {
        "BUFFER_POOL": pools,
        "BUFFER_PROFILE": profiles,
        "BUFFER_PORT_INGRESS_PROFILE_LIST": {port: ingress_list for port in every},
        "BUFFER_PORT_EGRESS_PROFILE_LIST": {port: egress_list for port in every},
        "BUFFER_PG": pg,
        "BUFFER_QUEUE": queue,
        # buffers_config.j2, dynamic mode: the values buffermgrd sizes headroom with
        "DEFAULT_LOSSLESS_BUFFER_PARAMETER": {"AZURE": {"default_dynamic_th": "0"}},
        "LOSSLESS_TRAFFIC_PATTERN": {"AZURE": {"mtu": "1024", "small_packet_percentage": "50"}},
    }


def config_db(switch: Switch) -> dict[str, Any]:
    """The whole config_db.json of one switch."""
    sku = sonic_sku(switch.model, switch.port_gbps)
    platform = sonic_platforms().get(switch.model)
    if sku is None or platform is None:
        raise ValueError(f"{switch.name}: no SONiC SKU for {switch.model} at {switch.port_gbps}G")
    metadata: dict[str, str] = {
        "hostname": switch.name,
        "type": SONIC_TYPE.get(switch.tier, "ToRRouter") if switch.routed else "MgmtToRRouter",
        "hwsku": sku.hwsku,
        "platform": platform.platform,
        "mac": base_mac(switch.cluster, switch.name),
    }
    if switch.routed:
        metadata.update({"bgp_asn": str(switch.asn), "docker_routing_config_mode": ROUTING_MODE,
                         "frr_mgmt_framework_config": "true"})
    metadata["buffer_model"] = "dynamic"
    if sku.buffers.create_only_config_db_buffers:
        # as the SKU's or platform's create_only_config_db_buffers.json: buffers only for the tables below, which
        # cover every port (the plan's lossless ones where the plan applies, lossy elsewhere)
        metadata["create_only_config_db_buffers"] = "true"
    db: dict[str, Any] = {
        "DEVICE_METADATA": {"localhost": metadata},
        "MGMT_PORT": {"eth0": {"admin_status": "up", "alias": "eth0", "description": switch.management or "oob"}},
        "PORT": {},
        "DEVICE_NEIGHBOR": {},
    }
    for port in switch.ports:
        hardware = sku_port(switch.model, switch.port_gbps, port.number)
        entry = db["PORT"][port.name] = {
            "admin_status": "up",
            "alias": hardware.alias,
            "description": port.description,
            "index": hardware.front_panel,
            "lanes": hardware.lanes,
            "mtu": str(port.mtu),
            "speed": str(port.speed_mbps),
        }
        if port.speed_gbps == switch.port_gbps:
            entry["fec"] = sku.fec  # the SKU speed's FEC; a port run slower negotiates its own
        if port.forced:
            entry["autoneg"] = "off"  # the model cannot auto-negotiate at this speed (catalog forced_speeds)
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
    if switch.management_plane is not None:
        db.update(management_tables(switch.management_plane))
    qos_names = [port.name for port in switch.qos_ports] if switch.qos is not None else []
    if switch.qos is not None and qos_names:
        cable = {port.name: f"{port.cable_m}m" for port in switch.qos_ports}
        db.update(qos_tables(switch.qos, qos_names, cable))
    planned = set(qos_names)
    db.update(buffer_tables(sku.buffers, switch.qos, qos_names, [port.name for port in switch.ports
                                                               if port.name not in planned]))
    return db


def oob_tables(oob: OobL2) -> dict[str, Any]:
    """VLAN, VLAN_MEMBER, PORTCHANNEL(_MEMBER) and STP tables (sonic-vlan, sonic-portchannel and
    sonic-spanning-tree YANG models): the oob segment in PVST."""
    vlan = f"Vlan{oob.vlan}"
    untagged = {"tagging_mode": "untagged"}
    members = [*oob.access, *(bundle.name for bundle in oob.bundles)]
    tables = {
        "VLAN": {vlan: {"vlanid": str(oob.vlan), "admin_status": "up", "mtu": str(SWITCH_MTU), "description": "oob"}},
        "VLAN_MEMBER": {f"{vlan}|{port}": untagged for port in members},
        "PORTCHANNEL": {bundle.name: {"admin_status": "up", "min_links": "1", "mtu": str(SWITCH_MTU),
                                      "lacp_key": "auto", "description": bundle.peer} for bundle in oob.bundles},
        "PORTCHANNEL_MEMBER": {f"{bundle.name}|{port}": {} for bundle in oob.bundles for port in bundle.members},
        "STP": {"GLOBAL": {"mode": "pvst", "priority": str(DEFAULT_BRIDGE_PRIORITY)}},
        "STP_VLAN": {vlan: {"vlanid": str(oob.vlan), "enabled": "true", "priority": str(oob.bridge_priority)}},
        "STP_PORT": {port: {"enabled": "true"} for port in members},
    }
    return {table: entries for table, entries in tables.items() if entries}


# ----- the management plane (forms and sources: docs/reference/dialects.md, *Management plane*): the CONFIG_DB
# tables of cluster.intent.management, each of a SONiC YANG model (tests/test_sonic_yang.py loads
# them with SONiC's own loader), and the local users, which SONiC keeps outside CONFIG_DB: a
# `users.sh` the deploy runs on the switch.
#
# A switch on the oob segment through its management port runs SONiC's management VRF (`mgmt`,
# MGMT_VRF_CONFIG) with its address and gateway on `eth0` (MGMT_INTERFACE); every service names that
# VRF. An oob switch carries its address on the oob VLAN's interface in the default VRF with a default
# route to the gateway.

MGMT_VRF = "mgmt"  # SONiC's management VRF name (sonic-ntp.yang, sonic-syslog.yang: `mgmt|default`)
GNMI_PORT = "50052"  # the port of SONiC's own sample CONFIG_DB (sonic-yang-models tests/files/sample_config_db.json)
# gNMI's TLS server certificate, which the deploy installs: without GNMI|certs SONiC's gnmi-native.sh
# starts the server with --noTLS on 127.0.0.1 only (sonic-buildimage dockers/docker-sonic-gnmi)
GNMI_CERTS = {"server_crt": "/etc/sonic/tls/gnmi-server.cer", "server_key": "/etc/sonic/tls/gnmi-server.key"}
SNMP_PORT = "161"
# gNMI dial-out (sonic-telemetry_client.yang; SONiC doc/system-telemetry/dialout.md): one destination group
# of the collectors, tried in order, and one periodic subscription to COUNTERS_DB. The paths are those a
# GPU fabric is watched by: every port's counters, PFC pause frames sent and received per priority among
# them (SAI_PORT_STAT_PFC_<n>_RX_PKTS / _TX_PKTS), the name map that ties a port's OID to its name
# (dialout.md's own subscription), and the per-queue counters (bytes, packets, drops) of the
# `COUNTERS/Ethernet*/Queues` virtual path (doc/system-telemetry/grpc_telemetry.md, *Virtual path*).
TELEMETRY_GROUP = "COLLECTORS"
TELEMETRY_SUBSCRIPTION = "GPU_FABRIC_COUNTERS"
TELEMETRY_PATHS = "COUNTERS/Ethernet*,COUNTERS/Ethernet*/Queues,COUNTERS_PORT_NAME_MAP"
TELEMETRY_RETRY_S = "30"  # dialout.md: the default, stated
TACACS_PORT = "49"
USER_GROUPS = {"admin": "sudo,docker", "operator": ""}  # sonic-buildimage build_debian.sh: useradd -G sudo,docker


def management_tables(plane: ManagementPlane) -> dict[str, Any]:
    """The CONFIG_DB tables of one switch's management plane."""
    services = plane.services
    vrf = MGMT_VRF if plane.vrf else "default"
    tables: dict[str, Any] = {}
    if plane.vrf:
        tables["MGMT_VRF_CONFIG"] = {"vrf_global": {"mgmtVrfEnabled": "true"}}
        if plane.address is not None and plane.gateway is not None:
            tables["MGMT_INTERFACE"] = {f"eth0|{plane.address}": {"gwaddr": plane.gateway}}
    elif plane.address is not None and plane.gateway is not None:
        vlan = f"Vlan{OOB_VLAN}"
        tables["VLAN_INTERFACE"] = {vlan: {}, f"{vlan}|{plane.address}": {}}
        tables["STATIC_ROUTE"] = {"0.0.0.0/0": {"nexthop": plane.gateway}}
    if services.ntp:
        tables["NTP"] = {"global": {"vrf": vrf, **({"src_intf": "eth0"} if plane.vrf else {})}}
        tables["NTP_SERVER"] = {server: {"association_type": "server", "iburst": "on"} for server in services.ntp}
    if services.syslog:
        tables["SYSLOG_SERVER"] = {server: {"vrf": vrf} for server in services.syslog}
    if services.dns:
        tables["DNS_NAMESERVER"] = {server: {} for server in services.dns}
    if services.tacacs:
        tables["TACPLUS"] = {"global": {"auth_type": "pap", "passkey": services.tacacs_key}}
        tables["TACPLUS_SERVER"] = {server: {"priority": str(len(services.tacacs) - index), "tcp_port": TACACS_PORT,
                                             "vrf": vrf}
                                    for index, server in enumerate(services.tacacs)}
        login = {"login": "tacacs+,local", "failthrough": "True", "fallback": "True"}
        tables["AAA"] = {"authentication": login, "authorization": {"login": "tacacs+,local"}}
    if services.snmp:
        snmp: dict[str, Any] = {}
        if services.snmp_location:
            snmp["LOCATION"] = {"Location": services.snmp_location}
        if services.snmp_contact:
            snmp["CONTACT"] = {"Contact": services.snmp_contact}
        if snmp:
            tables["SNMP"] = snmp
        tables["SNMP_COMMUNITY"] = {services.snmp_community: {"TYPE": "RO"}}
        if plane.host is not None:
            tables["SNMP_AGENT_ADDRESS_CONFIG"] = {f"{plane.host}|{SNMP_PORT}|{MGMT_VRF if plane.vrf else ''}": {}}
    tables["BANNER_MESSAGE"] = {"global": {"state": "enabled", "login": services.banner}}
    if services.api:
        # logins are the switch's accounts (local users, TACACS+) over TLS, as on EOS and NVUE: no client
        # certificate asked (client_auth false), password authentication (user_auth)
        tables["GNMI"] = {"certs": dict(GNMI_CERTS),
                          "gnmi": {"client_auth": "false", "port": GNMI_PORT, "user_auth": "password", "vrf": vrf}}
    if services.telemetry is not None and services.telemetry.gnmi_dialout:
        tables["TELEMETRY_CLIENT"] = telemetry_client(plane, services.telemetry)
    return tables


def telemetry_client(plane: ManagementPlane, telemetry: Telemetry) -> dict[str, Any]:
    """TELEMETRY_CLIENT: gNMI dial-out of the fabric's counters to the gnmi_dialout collectors, from
    the management address (without one, the dial-out client's default: the management IP)."""
    source = {"src_ip": plane.host} if plane.host is not None else {}
    return {
        "Global": {"encoding": "JSON_IETF", "retry_interval": TELEMETRY_RETRY_S, **source, "unidirectional": "true"},
        f"DestinationGroup|{TELEMETRY_GROUP}": {
            "dst_addr": ",".join(f"{collector.address}:{collector.port}" for collector in telemetry.gnmi_dialout)},
        f"Subscription|{TELEMETRY_SUBSCRIPTION}": {
            "dst_group": TELEMETRY_GROUP, "path_target": "COUNTERS_DB", "paths": TELEMETRY_PATHS,
            "report_interval": str(telemetry.interval_s * 1000), "report_type": "periodic"},
    }


def users_script(name: str, plane: ManagementPlane) -> str:
    """users.sh: the local accounts, which SONiC keeps in /etc/passwd, not CONFIG_DB."""
    users = [(user.name, USER_GROUPS[user.role]) for user in plane.services.users]
    return render("sonic/users.sh.j2", switch=name, users=users, password_hash=plane.services.users[0].password_hash)


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
    if switch.management_plane is not None:
        files["users.sh"] = users_script(switch.name, switch.management_plane)
    if switch.routed:
        files["frr.conf"] = render("frr/bgpd.conf.j2", switch=switch, suppress_fib_pending=True)
    return files


QOS_FILE = "config_db.json"


def _side(mapping: dict[int, int], pfc: set[int], mtu: int, planned: list[int]) -> QosSide:
    return QosSide(dscp_to_priority={dscp: mapping[dscp] for dscp in planned}, pfc_priorities=frozenset(pfc),
                   strict_priorities=frozenset(), ecn_priorities=frozenset(), mtu=mtu)


def read_qos(text: str, planned: list[int]) -> QosSide:
    """The QoS a config_db.json states: a DSCP missing from DSCP_TO_TC_MAP goes to TC 0; pfc_enable as written."""
    db = json.loads(text)
    maps = db.get("DSCP_TO_TC_MAP", {})
    port_maps = {name: entry for name, entry in db.get("PORT_QOS_MAP", {}).items() if name != "global"}
    mapping = {dscp: 0 for dscp in range(64)}
    pfc: set[int] = set()
    mtu = 0
    for port, entry in sorted(port_maps.items()):
        table = maps.get(entry.get("dscp_to_tc_map", ""), {})
        mapping.update({int(dscp): int(tc) for dscp, tc in table.items()})
        pfc = {int(value) for value in entry.get("pfc_enable", "").split(",") if value}
        mtu = int(db.get("PORT", {}).get(port, {}).get("mtu", 0))
        break
    return _side(mapping, pfc, mtu, planned)
