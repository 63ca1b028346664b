"""Reports of a validation: text for a person, JSON for tools."""

from __future__ import annotations

import ipaddress
import json
from collections import Counter
from typing import Any

from cluster.catalog import load_catalog
from cluster.findings import Finding, Severity, printable
from cluster.intent.hostnet import address_owner, host_region
from cluster.intent.management import PROTOCOLS, oob_dhcp_plan
from cluster.pipeline import Result, Valid
from cluster.resizing import resize_text, resized
from cluster.rules.hosts import fabric_gbps_per_node
from cluster.spec import ClusterSpec, Nics, PoolSpec
from cluster.topology import NETWORKS, Topology
from cluster.words import counted


def _layout(nics: Nics) -> str:
    ports = f", {nics.ports_per_nic} ports each" if nics.ports_per_nic != 1 else ""
    return f"{nics.count} x {nics.gbps}G{ports}"


def unverified_nics(pool: PoolSpec) -> list[dict[str, str]]:
    """The server catalog's defaults an on-prem pool takes whose numbers are not VERIFIED (each NIC
    set the stack file leaves out, by the catalog's status), and a generic RDMA device order
    (no devices in the stack file or the catalog: mlx5_<rail>, which NCCL_IB_HCA and qos.sh use)."""
    server = load_catalog().servers.get(pool.server or "")
    if server is None:
        return []
    found = []
    for name in pool.catalog_nics:
        nics = getattr(server, name)
        if nics.status != "VERIFIED":
            found.append({"nics": name, "layout": _layout(getattr(pool, name)), "status": str(nics.status),
                          "path": f"{pool.path}.{name}"})
    ports = pool.fabric_nics.ports
    if not pool.fabric_nics.devices and len(server.fabric_nics.devices) != ports:
        found.append({"nics": "fabric_nics.devices", "layout": f"generic mlx5_0..mlx5_{ports - 1}", "status": "UNVERIFIED",
                      "path": f"{pool.path}.fabric_nics.devices"})
    return found


def switch_models(spec: ClusterSpec, topology: Topology) -> dict[str, dict[str, dict[str, Any]]]:
    """Per network and tier that is built: how many switches, the model, its ports, the OS it runs
    and where that comes from (the stack file's key, or "" for the model's catalog default), and
    why the model was picked when the stack file names none."""
    counts: dict[tuple[str, str], int] = Counter((data["network"], data["tier"]) for _, data in topology.switches())
    networks = {"fabric": spec.fabric, "storage": spec.storage, "management": spec.management, "oob": spec.oob}
    found: dict[str, dict[str, dict[str, Any]]] = {}
    for network in NETWORKS:
        for tier in ("leaf", "spine", "core"):
            model = getattr(networks.get(network), tier, None)
            if model is None or not counts.get((network, tier)):
                continue
            found.setdefault(network, {})[tier] = {
                "count": counts[(network, tier)], "model": model.model, "ports": model.ports,
                "port_gbps": model.port_gbps, "os": model.os, "os_source": model.os_source, "chosen": model.chosen}
    return found


def summary(spec: ClusterSpec, topology: Topology) -> dict[str, Any]:
    """The design at a glance; also the Pulumi stack outputs."""
    switches: dict[str, dict[str, int]] = {}
    worst: dict[str, float] = {}
    for name, data in topology.switches():
        counts = switches.setdefault(data["network"], {})
        counts[data["tier"]] = counts.get(data["tier"], 0) + 1
        if data["network"] == "fabric":
            load = topology.switch_loads[name]
            if load.up_links:
                worst[data["tier"]] = max(worst.get(data["tier"], 0.0), round(load.oversubscription, 3))
    per_gpu = {}
    for pool in spec.pools:
        effective, _ = fabric_gbps_per_node(topology, topology.hosts_by_pool[pool.name][0])
        per_gpu[pool.name] = effective / pool.gpus_per_node
    plan = topology.fabric_plan
    fabric: dict[str, Any] = {}
    if spec.fabric is not None and plan is not None:
        fabric = {
            "transport": spec.fabric.transport,
            "design": spec.fabric.design,
            "planes": spec.fabric.planes,
            "rails": spec.fabric.rails,
            "tiers": plan.tiers,
            "leaf_groups": plan.groups,
            "nodes_per_leaf": plan.nodes_per_leaf,
            "leaf_uplinks": plan.leaf_uplinks,
            "pods": plan.pods,
            "spine_uplinks": plan.spine_uplinks,
            "leaf_model": f"{spec.fabric.leaf.model} ({spec.fabric.leaf.ports} x {spec.fabric.leaf.port_gbps}G)",
            "auto_sized": list(plan.auto),
            "notes": list(plan.notes),
        }
    return {
        "name": spec.name,
        "target": spec.target,
        "nodes": spec.nodes,
        "gpus": spec.gpus,
        "pools": {pool.name: {"nodes": pool.nodes, "gpu": pool.gpu, "gpus": pool.gpus,
                              "instance_type": pool.instance_type,
                              "fabric_nics": f"{pool.fabric_nics.count} x {pool.fabric_nics.gbps}G {pool.fabric_kind}"}
                  for pool in spec.pools},
        "gbps_per_gpu": per_gpu,
        "switches": {network: switches[network] for network in NETWORKS if network in switches},
        # per network and tier: count, model, ports, OS and where each comes from
        "switch_models": switch_models(spec, topology),
        "oversubscription": worst,
        "fabric": fabric,
        "auto_sized": {name: list(plan_.auto) for name, plan_ in topology.network_plans.items() if plan_.auto},
        # default pools widened for this design: {pool: (used, the default it replaces)}
        "widened_pools": {key: [getattr(spec.addressing, key), default] for key, default in spec.derived_pools},
        # networks a setting re-sized (fabric.shared_with), by how much and the bill of materials' change
        "resized": [entry.to_dict() for entry in resized(spec, topology)],
        # host NIC defaults from the server catalog that are not VERIFIED: {pool: {server, unverified}}
        "host_nics": {pool.name: {"server": pool.server, "unverified": found} for pool in spec.pools
                      if not spec.is_cloud and (found := unverified_nics(pool))},
        "management_plane": management_summary(spec),
        "host_network": host_network(spec, topology),
    }


def management_summary(spec: ClusterSpec) -> dict[str, Any]:
    """What the switches' management plane will be (on premises; {} on cloud targets)."""
    if spec.is_cloud:
        return {}
    plane = spec.management_plane
    pool = ipaddress.IPv4Network(spec.addressing.oob)
    credentials = ["gpu-cluster:switch_password"]
    credentials += ["gpu-cluster:tacacs_key"] if plane.tacacs_servers else []
    credentials += ["gpu-cluster:snmp_community"] if plane.snmp is not None else []
    return {
        "addresses": (f"{list(pool.subnets(prefixlen_diff=1))[1]} of the oob segment {pool}" if spec.oob is not None
                      else "DHCP on the management port (no oob network)"),
        "gateway": plane.gateway if spec.oob is not None else None,
        "ntp": list(plane.ntp_servers or []),
        "syslog": list(plane.syslog_servers),
        "dns": list(plane.dns_servers),
        "tacacs": list(plane.tacacs_servers),
        "snmp": plane.snmp is not None,
        "api": plane.api,
        # collectors by push protocol (cluster.intent.management.PROTOCOLS), every interval_s; None: none
        "telemetry": ({"interval_s": plane.telemetry.interval_s,
                       **{key: list(getattr(plane.telemetry, key)) for key in PROTOCOLS}}
                      if plane.telemetry is not None else None),
        "users": [f"{user.name} ({user.role})" for user in plane.users],
        "credentials": credentials,
        "oob_dhcp": (f"Kea (dhcp/kea-dhcp4-oob.conf) on {dhcp.server}, pool {dhcp.first} - {dhcp.last} for BMCs and "
                     "switches booting for ZTP" if (dhcp := oob_dhcp_plan(spec)) is not None else None),
    }


def host_network(spec: ClusterSpec, topology: Topology) -> dict[str, Any]:
    """What the hosts' management and storage ports get on premises (empty on cloud targets)."""
    if spec.is_cloud or spec.fabric is None:
        return {}
    storage = [str(host_region(spec, "storage")), *(spec.storage.targets if spec.storage else ())]
    # the NIC sets whose netdevs netnames.sh pins unless the stack file names them (an InfiniBand rail has none)
    pinned = ("management_nics", "storage_nics") if spec.fabric.transport == "infiniband" else \
        ("management_nics", "storage_nics", "fabric_nics")
    named = {pool.name: all(bool(nics.interfaces) for nics in (getattr(pool, key) for key in pinned) if nics.ports)
             for pool in spec.pools}
    data: dict[str, Any] = {
        "files": "netplan (systemd-networkd) per host: hosts/<pool>/netplan/<host>.yaml",
        "management": "a /31 per port from its leaf, the default route over the first",
        "storage": f"a /31 per port from its leaf, routing {', '.join(storage)} over every storage port",
        "netdevs": {name: "the stack file's interfaces" if given else f"pinned on the host by hosts/{name}/netnames.sh"
                    for name, given in named.items()},
        "dhcp": None,
    }
    provisioning = spec.provisioning
    if provisioning is not None:
        owner = address_owner(spec, topology, "management", provisioning.dhcp_server)
        runs = f" ({owner[0]})" if owner is not None else ""
        data["dhcp"] = (f"Kea (dhcp/kea-dhcp4.conf) on {provisioning.dhcp_server}{runs}, relayed by the management "
                        "leaves: each port's /31 gives its planned address")
        if provisioning.boot_filename is not None:
            data["pxe"] = f"{provisioning.boot_filename} from {provisioning.next_server or provisioning.dhcp_server}"
    return data


def to_json(result: Result) -> str:
    data: dict[str, Any] = {
        "stack": result.stack,
        "ok": result.ok,
        "findings": [finding.to_dict() for finding in result.findings],
    }
    if isinstance(result, Valid):
        data["summary"] = summary(result.spec, result.topology)
    return json.dumps(data, indent=2, sort_keys=False)


def to_text(result: Result) -> str:
    counts = Counter(str(f.severity) for f in result.findings if not f.suppressed)
    suppressed = sum(1 for f in result.findings if f.suppressed)
    verdict = "OK" if result.ok else "FAILED"
    parts = [f"{counts.get(level, 0)} {level}{'s' if counts.get(level, 0) != 1 else ''}"
             for level in ("error", "warning")]
    if suppressed:
        parts.append(f"{suppressed} suppressed")
    lines = [f"{result.stack}: {verdict} ({', '.join(parts)})"]
    for severity in (Severity.ERROR, Severity.WARNING, Severity.INFO):
        group = [f for f in result.findings if f.severity == severity]
        if not group:
            continue
        lines.append("")
        lines.append(f"{str(severity).upper()}S" if severity != Severity.INFO else "INFO")
        for finding in group:
            lines.extend(finding_lines(result, finding))
    if isinstance(result, Valid):
        lines.append("")
        lines.extend(_design_lines(summary(result.spec, result.topology)))
    return "\n".join(lines)


def switch_text(tier: str, entry: dict[str, Any]) -> str:
    """`16 leaves SN5600 400G sonic`, with what the stack file did not choose in parentheses."""
    left = [] if entry["os_source"] else ["catalog OS"]
    if entry["chosen"]:
        left.append("picked by cost")
    return (f"{counted(entry['count'], tier)} {entry['model']} {entry['port_gbps']}G {entry['os']}"
            + (f" ({', '.join(left)})" if left else ""))


def finding_lines(result: Result, finding: Finding) -> list[str]:
    """A finding as `validate` prints it: rule, path and message, then file:line and the hint."""
    line = result.loaded.line_of(finding.path) if result.loaded.source else 0
    where = f"{printable(str(result.loaded.source))}:{line} " if line else ""
    tag = " (suppressed)" if finding.suppressed else ""
    return [f"  {finding.rule}{tag} at {finding.path}: {finding.message}", f"      {where}hint: {finding.hint}"]


def notices(result: Valid, limit: int = 20, findings: bool = True) -> list[str]:
    """What `validate` says beside the design that a verb building it must not leave out: its
    findings (suppressed ones counted; past `limit`, the count and `run validate`) and the settings
    that re-sized a network. [] for a clean design that nothing re-sized."""
    shown = result.findings if findings else []
    active = [finding for finding in shown if not finding.suppressed]
    suppressed = len(shown) - len(active)
    stack = printable(str(result.loaded.source or result.stack))
    lines: list[str] = []
    if active or suppressed:
        counts = Counter(str(finding.severity) for finding in active)
        parts = [counted(counts[level], level) for level in ("error", "warning", "info") if counts[level]]
        parts += [f"{suppressed:,} suppressed"] if suppressed else []
        lines.append(f"{result.stack}: {', '.join(parts)} (`validate {stack}` shows the design)")
        for finding in active[:limit]:
            lines.extend(finding_lines(result, finding))
        if len(active) > limit:
            lines.append(f"  and {len(active) - limit:,} more: run `validate {stack}` for every one")
    changed = [resize_text(entry.to_dict()) for entry in resized(result.spec, result.topology)]
    prefix = "  " if lines else f"{result.stack}: "  # under the findings, or a line of its own
    return lines + [prefix + line for line in changed]


def _design_lines(data: dict[str, Any]) -> list[str]:
    lines = ["DESIGN"]
    pools = ", ".join(f"{name} {pool['nodes']} x {pool['gpu']}" for name, pool in data["pools"].items())
    lines.append(f"  {data['gpus']:,} GPUs on {data['nodes']:,} nodes ({pools}), target {data['target']}")
    per_gpu = ", ".join(f"{name} {value:g}" for name, value in data["gbps_per_gpu"].items())
    lines.append(f"  fabric Gbps per GPU: {per_gpu}")
    fabric = data["fabric"]
    for name, pool in data["pools"].items():
        if pool["instance_type"]:
            lines.append(f"  {name}: {pool['instance_type']}, fabric {pool['fabric_nics']} per node (the provider's)")
    if fabric:
        lines.append(
            f"  fabric: {fabric['transport']}, {fabric['design']}, {counted(fabric['tiers'], 'tier')}, "
            f"{counted(fabric['planes'], 'plane')}, {counted(fabric['rails'], 'rail')}, leaves {fabric['leaf_model']}"
        )
        lines.append(
            f"  leaf groups {fabric['leaf_groups']} of {fabric['nodes_per_leaf']} nodes, {fabric['leaf_uplinks']} "
            f"uplinks per leaf" + (f", {fabric['pods']} pods, {fabric['spine_uplinks']} uplinks per spine"
                                   if fabric["tiers"] == 3 else "")
        )
        ratios = ", ".join(f"{tier} {value:g}:1" for tier, value in data["oversubscription"].items()) or "none"
        lines.append(f"  oversubscription (worst per tier): {ratios}")
        if fabric["auto_sized"]:
            lines.append(f"  auto-sized for the fabric: {', '.join(fabric['auto_sized'])}")
        lines.extend(f"  sizing: {note}" for note in fabric["notes"])
    for network, tiers in data["switch_models"].items():
        lines.append(f"  {network} switches: {', '.join(switch_text(tier, entry) for tier, entry in tiers.items())}")
    for network, keys in data["auto_sized"].items():
        lines.append(f"  auto-sized for {network}: {', '.join(keys)}")
    lines.extend(f"  {resize_text(entry)}" for entry in data["resized"])
    for name, nics in data["host_nics"].items():
        items = nics["unverified"]
        shown = ", ".join(f"{item['nics']} {item['layout']} {item['status']}" for item in items)
        lines.append(f"  host NICs of {name} not verified (server {nics['server']}): {shown}")
        lines.append(f"      hint: check a host (`rdma link show`, `ip link`) and set {', '.join(i['path'] for i in items)}")
    hosts = data["host_network"]
    if hosts:
        lines.append(f"  host networking: {hosts['files']}; management {hosts['management']}; storage {hosts['storage']}")
        lines.append("  host netdevs: " + ", ".join(f"{pool} {how}" for pool, how in hosts["netdevs"].items()))
        lines.append(f"  host DHCP: {hosts['dhcp'] or 'none (static addresses only): set provisioning.dhcp_server'}"
                     + (f"; PXE {hosts['pxe']}" if "pxe" in hosts else ""))
    plane = data["management_plane"]
    if plane:
        via = f", gateway {plane['gateway']}" if plane["gateway"] else ""
        lines.append(f"  management plane: every switch at {plane['addresses']}{via}, in a management VRF (oob "
                     "switches on their oob VLAN)")
        services = [f"{name} {', '.join(plane[key]) or 'none'}" for name, key in
                    (("NTP", "ntp"), ("syslog", "syslog"), ("DNS", "dns"), ("TACACS+", "tacacs"))]
        services.append(f"SNMP {'on' if plane['snmp'] else 'off'}")
        services.append("SSH, API and gNMI on" if plane["api"] else "SSH on, API off")
        lines.append(f"      {'; '.join(services)}; users {', '.join(plane['users'])}")
        telemetry = plane["telemetry"]
        pushed = [f"{key} {', '.join(telemetry[key])}" for key in PROTOCOLS if telemetry and telemetry[key]]
        lines.append(f"      telemetry pushed every {telemetry['interval_s']} s to {'; '.join(pushed)}" if pushed
                     else "      telemetry: none pushed (management_plane.telemetry)")
        lines.append(f"      the deploy fills the switch files' placeholders from {', '.join(plane['credentials'])} "
                     "(secret config or the environment)")
        if plane["gateway"]:  # an oob segment (without one, each switch keeps its OS's DHCP)
            lines.append(f"      oob DHCP: {plane['oob_dhcp'] or 'none rendered: set management_plane.dhcp_server'}")
    for key, (used, default) in data["widened_pools"].items():
        lines.append(f"  addressing.{key}: {used} (the default {default} cannot hold this design; "
                     f"set addressing.{key} to pin a pool)")
    return lines
