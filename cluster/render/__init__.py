"""On-prem rendering: switch configs per dialect and host scripts per pool, from one spec.

`render_configs(spec, topology)` returns {relative path: text}; the whole tree (with the exports
and the verify files) is `cluster.artifacts.render_tree`; nothing touches the disk here (see
`cluster.publish`). Layout:
  switches/<name>/config_db.json + frr.conf (sonic) | nvue.sh (nvue) | eos.cfg (eos)
  fabric/opensm.conf + partitions.conf             (InfiniBand fabrics)
  hosts/<pool>/qos.sh + nccl.env + nccl-socket.sh   (qos.sh: RoCE only)
  inventory.json                                    (loopback, ASN, dialect per switch)
"""

from __future__ import annotations

import json
from collections.abc import Collection

from cluster.addressing import Addresses, allocate
from cluster.intent.qos import qos_intent
from cluster.render import eos, nvue, sonic
from cluster.render.host import host_pool, render_ib_pool, render_pool, render_socket, socket_pool
from cluster.render.opensm import render_fabric
from cluster.render.views import Switch, switch_views
from cluster.spec import ClusterSpec
from cluster.topology import FABRIC, Topology, gc_paused

DIALECTS = {"sonic": sonic.render_switch, "nvue": nvue.render_switch, "eos": eos.render_switch}


def render_switch(switch: Switch) -> dict[str, str]:
    """{file name: text} of one switch in its dialect."""
    return DIALECTS[switch.os](switch)


def render_configs(spec: ClusterSpec, topology: Topology, addresses: Addresses | None = None) -> dict[str, str]:
    """Switch configs, subnet-manager files, host QoS scripts and NCCL env files alone."""
    with gc_paused():
        return _render_configs(spec, topology, addresses)


def switch_files(spec: ClusterSpec, topology: Topology, addresses: Addresses, names: Collection[str] | None = None
                  ) -> tuple[dict[str, str], dict[str, dict[str, object]]]:
    """({path: text} of every switch config (of `names`, or all), {switch: its inventory entry})."""
    switch_qos = qos_intent(spec.qos).switch if spec.qos is not None else None
    infiniband = spec.fabric is not None and spec.fabric.transport == "infiniband"
    files: dict[str, str] = {}
    inventory: dict[str, dict[str, object]] = {}
    for switch in switch_views(spec, topology, addresses, switch_qos, names):
        inventory[switch.name] = {"network": switch.network, "tier": switch.tier, "os": switch.os,
                                  "model": switch.model, "loopback": switch.loopback, "asn": switch.asn}
        if infiniband and switch.network == FABRIC:
            continue  # managed by the subnet manager
        for file, text in render_switch(switch).items():
            files[f"switches/{switch.name}/{file}"] = text
    return files, inventory


def _render_configs(spec: ClusterSpec, topology: Topology, addresses: Addresses | None) -> dict[str, str]:
    addresses = addresses if addresses is not None else allocate(spec, topology)
    infiniband = spec.fabric is not None and spec.fabric.transport == "infiniband"
    files, inventory = switch_files(spec, topology, addresses)
    if infiniband:
        for file, text in render_fabric(spec, topology).items():
            files[f"fabric/{file}"] = text
    for pool in spec.pools:
        rendered = (render_ib_pool(spec, pool) if infiniband
                    else render_pool(host_pool(spec, topology, addresses, pool)))
        rendered.update(render_socket(socket_pool(spec, topology, addresses, pool)))
        for file, text in rendered.items():
            files[f"hosts/{pool.name}/{file}"] = text
    files["inventory.json"] = json.dumps({"stack": spec.name, "switches": inventory}, indent=2, sort_keys=True) + "\n"
    return files
