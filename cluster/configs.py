"""The device configs of a design: switch configs per dialect and host scripts per pool, from one spec.

`render_configs(spec, topology)` returns {relative path: text}; the whole tree (with the exports
and the verify files) is `cluster.artifacts.render_tree`; nothing touches the disk here (see
`cluster.publish`). Layout:
  switches/<name>/config_db.json + frr.conf + users.sh (sonic) | nvue.sh (nvue) | eos.cfg (eos)
  fabric/opensm.conf + partitions.conf             (InfiniBand fabrics)
  hosts/<pool>/qos.sh + nccl.env + nccl-socket.sh   (qos.sh: RoCE only)
  hosts/<pool>/storage-qos.sh                       (the storage ports' side of the storage QoS plan)
  hosts/<pool>/netplan/<host>.yaml                  (management and storage ports, per host)
  hosts/<pool>/netnames.sh                          (pins those and the rails' netdev names where the stack file gives none)
  dhcp/kea-dhcp4.conf                               (with `provisioning`: the management network's DHCP)
  dhcp/kea-dhcp4-oob.conf                           (with `management_plane.dhcp_server`: the oob segment's DHCP)
  inventory.json                                    (loopback, ASN, management address, dialect per switch)
"""

from __future__ import annotations

import importlib
import json
from collections.abc import Callable, Collection, Iterator
from functools import cache
from types import ModuleType

from cluster.addressing import Addresses, allocate
from cluster.dialects import for_transport, platform
from cluster.dialects.host.render import (
    render_ib_pool,
    render_kea,
    render_kea_oob,
    render_netnames,
    render_netplan,
    render_pool,
    render_socket,
    render_storage,
)
from cluster.intent.host import host_pool, socket_pool, storage_ports
from cluster.intent.hostnet import dhcp_plan, host_networks, leaf_port_names, net_names
from cluster.intent.management import oob_dhcp_plan
from cluster.intent.qos import fabric_qos_intent
from cluster.intent.storage_qos import storage_intent
from cluster.intent.switch import Switch, switch_views
from cluster.spec import ClusterSpec
from cluster.topology import Topology, gc_paused


@cache
def dialect_renderer(os: str) -> ModuleType:
    """The `render` module of dialect `os` (cluster/dialects/<os>/render.py)."""
    return importlib.import_module(f"cluster.dialects.{os}.render")


def render_switch(switch: Switch) -> dict[str, str]:
    """{file name: text} of one switch in its dialect."""
    renderer: Callable[[Switch], dict[str, str]] = dialect_renderer(switch.os).render_switch
    return renderer(switch)


def render_configs(spec: ClusterSpec, topology: Topology, addresses: Addresses | None = None) -> dict[str, str]:
    """Switch configs, subnet-manager files, host QoS scripts and NCCL env files alone."""
    with gc_paused():
        return dict(config_stream(spec, topology, addresses))


def switch_files(spec: ClusterSpec, topology: Topology, addresses: Addresses, names: Collection[str] | None = None
                  ) -> tuple[dict[str, str], dict[str, dict[str, object]]]:
    """({path: text} of every switch config (of `names`, or all), {switch: its inventory entry})."""
    inventory: dict[str, dict[str, object]] = {}
    files = dict(switch_stream(spec, topology, addresses, inventory, names))
    return files, inventory


def switch_stream(spec: ClusterSpec, topology: Topology, addresses: Addresses, inventory: dict[str, dict[str, object]],
                  names: Collection[str] | None = None) -> Iterator[tuple[str, str]]:
    """(path, text) of every switch config (of `names`, or all), one switch at a time, filling
    `inventory` with each switch's entry as it goes (the configs of 262,144 GPUs are 1.3 GB of
    text: `render` writes them as they come instead of holding them)."""
    switch_qos = intent.switch if (intent := fabric_qos_intent(spec)) is not None else None
    storage = storage_intent(spec)
    for switch in switch_views(spec, topology, addresses, switch_qos, names,
                               storage.switch if storage is not None else None):
        inventory[switch.name] = {"network": switch.network, "tier": switch.tier, "os": switch.os,
                                  "model": switch.model, "loopback": switch.loopback, "asn": switch.asn,
                                  "management": switch.management_plane.address if switch.management_plane else None}
        if platform(switch.os).config_file is None:
            continue  # configured fabric-wide (the subnet manager's files)
        for file, text in render_switch(switch).items():
            yield f"switches/{switch.name}/{file}", text


def config_stream(spec: ClusterSpec, topology: Topology, addresses: Addresses | None = None) -> Iterator[tuple[str, str]]:
    """(path, text) of every file `render_configs` returns, in its order, one switch's files at a time."""
    addresses = addresses if addresses is not None else allocate(spec, topology)
    infiniband = spec.fabric is not None and spec.fabric.transport == "infiniband"
    inventory: dict[str, dict[str, object]] = {}
    yield from switch_stream(spec, topology, addresses, inventory)
    subnet_manager = for_transport(spec.fabric.transport) if spec.fabric is not None else None
    if subnet_manager is not None:
        render_fabric: Callable[[ClusterSpec, Topology], dict[str, str]] = (
            dialect_renderer(subnet_manager.name).render_fabric)
        for file, text in render_fabric(spec, topology).items():
            yield f"fabric/{file}", text
    for pool in spec.pools:
        rendered = (render_ib_pool(spec, pool) if infiniband
                    else render_pool(host_pool(spec, topology, addresses, pool)))
        rendered.update(render_socket(socket_pool(spec, topology, addresses, pool)))
        rendered.update(render_storage(storage_ports(spec, pool)))
        for file, text in rendered.items():
            yield f"hosts/{pool.name}/{file}", text
    port_names = leaf_port_names(topology)
    for pool in spec.pools:
        networks = list(host_networks(spec, topology, addresses, pool, port_names))
        for network in networks:
            yield f"hosts/{pool.name}/netplan/{network.host}.yaml", render_netplan(network)
        names = net_names(spec, topology, pool, networks)
        if names is not None:
            yield f"hosts/{pool.name}/netnames.sh", render_netnames(names)
    plan = dhcp_plan(spec, topology, addresses, port_names)
    if plan is not None:
        yield "dhcp/kea-dhcp4.conf", render_kea(plan)
    oob_plan = oob_dhcp_plan(spec)
    if oob_plan is not None:
        yield "dhcp/kea-dhcp4-oob.conf", render_kea_oob(oob_plan)
    yield "inventory.json", json.dumps({"stack": spec.name, "switches": inventory}, indent=2, sort_keys=True) + "\n"
