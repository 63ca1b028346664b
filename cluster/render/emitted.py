"""Read the QoS plan back out of what the renderers actually write: does a rendered file carry
exactly its intent? The read-back tests (tests/test_qos_readback.py) hold every dialect and both
host paths to the intent over generated QoS plans, so a template change that drops a DSCP mapping
or a PFC priority fails CI; validation itself renders nothing. Each reader starts from the
device's own default (what it does when a line is missing):
- ConnectX host (mlnx_qos / dcb): DSCP >> 3 (FACTS.md 4.2), no PFC;
- SONiC: a DSCP missing from DSCP_TO_TC_MAP goes to TC 0; pfc_enable as written;
- NVUE: DSCP >> 3, then the `qos roce` profile (26 -> 3, 48 -> 6, PFC on 3), then explicit lines;
- EOS: 0-7 -> 1, 8-15 -> 0, otherwise DSCP >> 3 (FACTS.md 4.3); PFC from `no-drop` lines.
"""

from __future__ import annotations

import json
import re

from cluster.intent.qos import SWITCH_MTU, QosSide, default_host_priority, qos_intent
from cluster.naming import MGMT_PORT, switch_port
from cluster.render import eos, nvue, sonic
from cluster.render.host import host_pool, render_pool
from cluster.render.views import Port, Switch
from cluster.spec import ClusterSpec
from cluster.topology import FABRIC, Topology

_PROBE_PORT = 0
_PROBE_MODEL = ("SN5600", 400)  # a model every dialect has port names for


def _probe_switch(spec: ClusterSpec, os: str) -> Switch:
    """A one-port fabric leaf in dialect `os`: the QoS part of the template is all that matters."""
    assert spec.qos is not None
    model, gbps = _PROBE_MODEL
    port = Port(name=switch_port(os, _PROBE_PORT, model, gbps), number=_PROBE_PORT, role="host", network=FABRIC,
                speed_gbps=gbps, mtu=SWITCH_MTU,
                description="probe-node-001 nic0", peer="probe-node-001", address=None, peer_address=None,
                peer_asn=None, qos=True, cable_m=5)
    return Switch(name="qos-probe", network=FABRIC, tier="leaf", os=os, model=model, port_gbps=gbps, loopback=None,
                  asn=None, ports=(port,), management="", management_port=MGMT_PORT[os], networks=(),
                  qos=qos_intent(spec.qos).switch)


def _side(mapping: dict[int, int], pfc: set[int], mtu: int, planned: list[int]) -> QosSide:
    return QosSide(dscp_to_priority={dscp: mapping[dscp] for dscp in planned}, pfc_priorities=frozenset(pfc),
                   strict_priorities=frozenset(), ecn_priorities=frozenset(), mtu=mtu)


def read_sonic(text: str, planned: list[int]) -> QosSide:
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


def read_nvue(text: str, planned: list[int]) -> QosSide:
    mapping = {dscp: dscp >> 3 for dscp in range(64)}
    pfc: set[int] = set()
    if re.search(r"^nv set qos roce( mode lossless)?$", text, re.M):
        mapping.update({26: 3, 48: 6})
        pfc = {3}
    for dscps, priority in re.findall(r"^nv set qos mapping default-global dscp ([\d,]+) switch-priority (\d+)$",
                                      text, re.M):
        mapping.update({int(dscp): int(priority) for dscp in dscps.split(",")})
    for values in re.findall(r"^nv set qos pfc default-global switch-priority ([\d,]+)$", text, re.M):
        pfc = {int(value) for value in values.split(",")}
    mtus = re.findall(r"^nv set interface \S+ link mtu (\d+)$", text, re.M)
    return _side(mapping, pfc, int(mtus[0]) if mtus else 1500, planned)


def read_eos(text: str, planned: list[int]) -> QosSide:
    mapping = {dscp: 1 if dscp < 8 else 0 if dscp < 16 else dscp >> 3 for dscp in range(64)}
    for dscps, tc in re.findall(r"^qos map dscp ([\d ]+) to traffic-class (\d+)$", text, re.M):
        mapping.update({int(dscp): int(tc) for dscp in dscps.split()})
    pfc = {int(p) for p in re.findall(r"^\s+priority-flow-control priority (\d+) no-drop$", text, re.M)}
    mtus = re.findall(r"^\s+mtu (\d+)$", text, re.M)
    return _side(mapping, pfc, int(mtus[0]) if mtus else 1500, planned)


def read_host(text: str, planned: list[int]) -> tuple[QosSide, QosSide]:
    """(mlnx_qos path, dcb path) of a host script."""
    mlnx = {dscp: default_host_priority(dscp) for dscp in range(64)}
    for dscp, priority in re.findall(r"mlnx_qos -i \S+ --dscp2prio set,(\d+),(\d+)$", text, re.M):
        mlnx[int(dscp)] = int(priority)
    flags = re.findall(r"mlnx_qos -i \S+ --pfc ([01,]+)$", text, re.M)
    mlnx_pfc = {index for index, flag in enumerate(flags[0].split(",")) if flag == "1"} if flags else set()
    dcb = {dscp: default_host_priority(dscp) for dscp in range(64)}
    for entries in re.findall(r"dcb app replace dev \S+ dscp-prio ([\d: ]+)$", text, re.M):
        dcb.update({int(d): int(p) for d, p in (entry.split(":") for entry in entries.split())})
    dcb_pfc: set[int] = set()
    for entries in re.findall(r"dcb pfc set dev \S+ prio-pfc ([\w: ]+)$", text, re.M):
        dcb_pfc = {int(entry.split(":")[0]) for entry in entries.split()
                   if entry.endswith(":on") and not entry.startswith("all")}
    mtus = re.findall(r"ip link set dev \S+ mtu (\d+) up$", text, re.M)
    mtu = int(mtus[0]) if mtus else 1500
    return _side(mlnx, mlnx_pfc, mtu, planned), _side(dcb, dcb_pfc, mtu, planned)


READERS = {"sonic": (sonic.render_switch, "config_db.json", read_sonic),
           "nvue": (nvue.render_switch, "nvue.sh", read_nvue),
           "eos": (eos.render_switch, "eos.cfg", read_eos)}


def read_back(spec: ClusterSpec, topology: Topology) -> dict[str, QosSide]:
    """{what was rendered: the QoS it states, all 64 DSCPs} for the host script of the first pool
    (its mlnx_qos and its dcb path) and a probe fabric leaf of every switch dialect."""
    assert spec.qos is not None
    every = list(range(64))
    script = render_pool(host_pool(spec, topology, None, spec.pools[0]))["qos.sh"]
    host_mlnx, host_dcb = read_host(script, every)
    sides = {"host script (mlnx_qos)": host_mlnx, "host script (dcb)": host_dcb}
    for os, (render_switch, file, reader) in sorted(READERS.items()):
        sides[f"{os} switch config"] = reader(render_switch(_probe_switch(spec, os))[file], every)
    return sides
