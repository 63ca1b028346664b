"""EOS's own LLDP output: `show lldp neighbors detail | json`."""

from __future__ import annotations

from typing import Any

from cluster.inputs import excerpt
from cluster.lldp import LldpFormat, Neighbor, NeighborFormatError, candidate_ports, load_json, number_of, object_of, text_of


def parse_eos_lldp_json(text: str) -> list[Neighbor]:
    """Arista EOS `show lldp neighbors detail | json`.

    Newer EOS gives `interfaceId_v2` (plain) beside `interfaceId`; older EOS only `interfaceId`,
    quoted ('"Ethernet1"'). Ages come from `lastChangeTime` relative to the newest
    `lastContactTime` in the file (the moment of collection).
    """
    return read_eos_lldp_json(load_json(text, "`show lldp neighbors detail | json` output"))


def read_eos_lldp_json(data: Any) -> list[Neighbor]:
    """EOS `show lldp neighbors detail | json`, loaded."""
    if not isinstance(data, dict) or not isinstance(data.get("lldpNeighbors"), dict):
        raise NeighborFormatError('expected EOS `show lldp neighbors detail | json`: an object with "lldpNeighbors"')
    entries: list[tuple[str, dict[str, Any]]] = []
    for local, body in data["lldpNeighbors"].items():
        if not isinstance(body, dict) or not isinstance(body.get("lldpNeighborInfo", []), list):
            raise NeighborFormatError(f'interface {excerpt(local)}: expected "lldpNeighborInfo" to be a list')
        entries.extend((local, info) for info in body.get("lldpNeighborInfo", []) if isinstance(info, dict))
    now = max((number_of(info.get("lastContactTime")) or 0.0 for _, info in entries), default=0.0)
    neighbors: list[Neighbor] = []
    for local, info in entries:
        interface = object_of(info.get("neighborInterfaceInfo"))
        port_id = text_of(interface.get("interfaceId_v2")) or text_of(interface.get("interfaceId")).strip('"')
        changed = number_of(info.get("lastChangeTime"))
        neighbors.append(Neighbor(
            local_port=local,
            remote_device=text_of(info.get("systemName")),
            remote_ports=candidate_ports(port_id, interface.get("interfaceDescription")),
            age=max(0.0, now - changed) if changed is not None and now else None,
        ))
    return neighbors


def _is_neighbors(data: Any) -> bool:
    return isinstance(data, dict) and "lldpNeighbors" in data


LLDP_FORMATS = (
    LldpFormat("eos", "EOS `show lldp neighbors detail | json`", True, _is_neighbors, parse_eos_lldp_json,
               read_eos_lldp_json),
)
