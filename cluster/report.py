"""Reports of a validation: text for a person, JSON for tools."""

from __future__ import annotations

import json
from collections import Counter
from typing import Any

from cluster.catalog import load_catalog
from cluster.findings import Severity, printable
from cluster.intent.hostnet import address_owner, host_region
from cluster.pipeline import Result, Valid
from cluster.rules.base import plural
from cluster.rules.hosts import fabric_gbps_per_node
from cluster.spec import ClusterSpec, Nics, PoolSpec
from cluster.topology import NETWORKS, Topology


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
        "oversubscription": worst,
        "fabric": fabric,
        "auto_sized": {name: list(plan_.auto) for name, plan_ in topology.network_plans.items() if plan_.auto},
        # default pools widened for this design: {pool: (used, the default it replaces)}
        "widened_pools": {key: [getattr(spec.addressing, key), default] for key, default in spec.derived_pools},
        # host NIC defaults from the server catalog that are not VERIFIED: {pool: {server, unverified}}
        "host_nics": {pool.name: {"server": pool.server, "unverified": found} for pool in spec.pools
                      if not spec.is_cloud and (found := unverified_nics(pool))},
        "host_network": host_network(spec, topology),
    }


def host_network(spec: ClusterSpec, topology: Topology) -> dict[str, Any]:
    """What the hosts' management and storage ports get on premises (empty on cloud targets)."""
    if spec.is_cloud or spec.fabric is None:
        return {}
    storage = [str(host_region(spec, "storage")), *(spec.storage.targets if spec.storage else ())]
    named = {pool.name: all(bool(nics.interfaces) for nics in (pool.management_nics, pool.storage_nics) if nics.ports)
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
            line = result.loaded.line_of(finding.path) if result.loaded.source else 0
            where = f"{printable(str(result.loaded.source))}:{line} " if line else ""
            tag = " (suppressed)" if finding.suppressed else ""
            lines.append(f"  {finding.rule}{tag} at {finding.path}: {finding.message}")
            lines.append(f"      {where}hint: {finding.hint}")
    if isinstance(result, Valid):
        lines.append("")
        lines.extend(_design_lines(summary(result.spec, result.topology)))
    return "\n".join(lines)


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
            f"  fabric: {fabric['transport']}, {fabric['design']}, {fabric['tiers']} tier(s), {fabric['planes']} "
            f"plane(s), {fabric['rails']} rails, leaves {fabric['leaf_model']}"
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
    for network, tiers in data["switches"].items():
        counts = ", ".join(f"{count} {plural(tier, count)}" for tier, count in tiers.items())
        lines.append(f"  {network} switches: {counts}")
    for network, keys in data["auto_sized"].items():
        lines.append(f"  auto-sized for {network}: {', '.join(keys)}")
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
    for key, (used, default) in data["widened_pools"].items():
        lines.append(f"  addressing.{key}: {used} (the default {default} cannot hold this design; "
                     f"set addressing.{key} to pin a pool)")
    return lines
