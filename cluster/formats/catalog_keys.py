"""The catalog as `catalog [gpus|servers|switches|instances]` lists it: what each stack-file key can
name, one line per entry, with the facts a choice turns on. docs/reference/stack-file.md#catalog has every
field and every source note whole; `--format json` gives the entries whole.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from cluster.catalog import Catalog, Gpu, Instance, NicLayout, Server, Switch

STATUS_WORD = re.compile(r"\b(?:UNVERIFIED|VERIFIED|PARTIAL)\b")


@dataclass(frozen=True)
class Kind:
    """One catalog: the stack-file key its entries are values of, and its columns."""

    name: str
    title: str
    key: str  # the stack-file key that names an entry
    anchor: str  # its section of docs/reference/stack-file.md
    columns: tuple[str, ...]
    entries: Callable[[Catalog], dict[str, Any]]
    row: Callable[[Catalog, str, Any], tuple[str, ...]]


def status(source: str) -> str:
    """The VERIFIED / PARTIAL / UNVERIFIED words an entry's source note uses, in order."""
    return ", ".join(dict.fromkeys(STATUS_WORD.findall(source))) or "not stated"


def nics(layout: NicLayout) -> str:
    """`8 x 400G`, `8 x 2 x 400G` for dual-port NICs."""
    ports = f"{layout.ports_per_nic} x " if layout.ports_per_nic > 1 else ""
    return f"{layout.count} x {ports}{layout.gbps}G"


def _gpu(catalog: Catalog, key: str, gpu: Gpu) -> tuple[str, ...]:
    return (key, gpu.vendor, f"{gpu.memory_gb} GB", str(gpu.gpus_per_node), str(gpu.nvlink_domain),
            catalog.default_server(key), status(gpu.source))


def _server(catalog: Catalog, key: str, server: Server) -> tuple[str, ...]:
    return (key, server.gpu or "any", str(server.gpus), nics(server.fabric_nics), nics(server.storage_nics),
            nics(server.management_nics), status(server.source))


def _switch(catalog: Catalog, key: str, switch: Switch) -> tuple[str, ...]:
    modes = ", ".join(f"{count} x {gbps}G" for gbps, count in switch.port_modes.items())
    uplinks = f" + {switch.uplink_ports.count} x {switch.uplink_ports.gbps}G" if switch.uplink_ports else ""
    return (key, switch.transport, modes + uplinks, switch.os, ", ".join(switch.runs), status(switch.source))


def _instance(catalog: Catalog, key: str, instance: Instance) -> tuple[str, ...]:
    provider = next(target for target, by_type in catalog.instances.items() if key in by_type)
    fabric = instance.fabric
    return (key, provider, instance.gpu, str(instance.gpus), f"{fabric.count} x {fabric.gbps}G {fabric.kind}",
            f"{instance.total_gbps:,}", status(instance.source))


def _instances(catalog: Catalog) -> dict[str, Any]:
    return {key: entry for by_type in catalog.instances.values() for key, entry in by_type.items()}


KINDS = {kind.name: kind for kind in (
    Kind("gpus", "GPUs", "node_pools[].gpu", "catalog-gpus",
         ("key", "vendor", "memory", "gpus per node", "nvlink domain", "default server", "status"),
         lambda catalog: dict(catalog.gpus), _gpu),
    Kind("servers", "servers", "node_pools[].server (on premises)", "catalog-servers",
         ("key", "gpu", "gpus", "fabric nics", "storage nics", "management nics", "status"),
         lambda catalog: dict(catalog.servers), _server),
    Kind("switches", "switches", "a leaf's, spine's or core's switch", "catalog-switches",
         ("key", "transport", "ports", "os", "runs", "status"),
         lambda catalog: dict(catalog.switches), _switch),
    Kind("instances", "instance types", "node_pools[].instance_type (cloud targets)", "catalog-instance-types",
         ("key", "provider", "gpu", "gpus", "fabric per node", "total gbps", "status"),
         _instances, _instance),
)}


def table(rows: list[tuple[str, ...]]) -> list[str]:
    """Rows as aligned columns, two spaces apart."""
    widths = [max(len(row[index]) for row in rows) for index in range(len(rows[0]))]
    return ["  " + "  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)).rstrip() for row in rows]


def as_text(catalog: Catalog, names: list[str]) -> str:
    """The catalogs `names` as tables, each under the key its entries are values of."""
    blocks = []
    for name in names:
        kind = KINDS[name]
        entries = kind.entries(catalog)
        rows = [kind.columns, *(kind.row(catalog, key, entry) for key, entry in entries.items())]
        blocks.append("\n".join([f"{kind.title}: values of {kind.key} ({len(entries)})", *table(rows),
                                 f"  every field and source: docs/reference/stack-file.md#{kind.anchor}"]))
    return "\n\n".join(blocks)


def as_json(catalog: Catalog, names: list[str]) -> dict[str, Any]:
    """The catalogs `names` whole, every field and source note: {catalog: {key: entry}}; an instance
    type also names its provider (the target it runs on)."""
    provider = {key: target for target, by_type in catalog.instances.items() for key in by_type}
    return {name: {key: entry.model_dump(mode="json") | ({"provider": provider[key]} if name == "instances" else {})
                   for key, entry in KINDS[name].entries(catalog).items()}
            for name in names}
