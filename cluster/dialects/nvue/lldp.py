"""NVUE's own LLDP output: interfaces with their neighbors (`nv show interface lldp-detail -o json`)."""

from __future__ import annotations

from typing import Any

from cluster.inputs import excerpt
from cluster.lldp import (
    LldpFormat,
    Neighbor,
    NeighborFormatError,
    candidate_ports,
    lldpd_age,
    load_json,
    number_of,
    object_of,
    text_of,
)


def parse_nvue_lldp_json(text: str) -> list[Neighbor]:
    """Cumulus NVUE interfaces with their LLDP neighbors (REST `GET /nvue_v1/interface?view=lldp-detail`,
    CLI `nv show interface lldp-detail -o json`):
    {ifname: {"lldp": {"neighbor": {system-name: {"age", "chassis", "port": {"name", "description", "type"}}}}}}.
    """
    return read_nvue_lldp_json(load_json(text, "NVUE interface JSON (nv show interface lldp-detail -o json)"))


def read_nvue_lldp_json(data: Any) -> list[Neighbor]:
    """NVUE interfaces with their LLDP neighbors, loaded."""
    if not isinstance(data, dict):
        raise NeighborFormatError("expected NVUE interface JSON: an object keyed by interface name")
    neighbors: list[Neighbor] = []
    for local, body in sorted(data.items()):
        if not isinstance(body, dict):
            raise NeighborFormatError(f"interface {excerpt(local)}: expected an object")
        lldp = body.get("lldp")
        per_neighbor = lldp.get("neighbor") if isinstance(lldp, dict) else None
        if per_neighbor is None:
            continue
        if not isinstance(per_neighbor, dict):
            raise NeighborFormatError(f'interface {excerpt(local)}: expected "lldp.neighbor" to be an object')
        for name, entry in per_neighbor.items():
            if not isinstance(entry, dict):
                raise NeighborFormatError(f"interface {excerpt(local)} neighbor {excerpt(name)}: expected an object")
            chassis = object_of(entry.get("chassis"))
            port = object_of(entry.get("port"))
            age = entry.get("age")
            neighbors.append(Neighbor(
                local_port=local,
                remote_device=text_of(chassis.get("system-name")) or str(name),
                remote_ports=candidate_ports(port.get("name"), port.get("description")),
                age=number_of(age) if number_of(age) is not None else lldpd_age(age),
            ))
    return neighbors


def _is_interfaces(data: Any) -> bool:
    """An object of interfaces (no key holds `:`, which no NVUE interface name has), some with an
    "lldp" object; or an empty one (a switch with no interface up)."""
    if not isinstance(data, dict) or any(":" in str(key) for key in data):
        return False
    return not data or (all(isinstance(value, dict) for value in data.values())
                        and any(isinstance(value.get("lldp"), dict) for value in data.values()))


LLDP_FORMATS = (
    LldpFormat("nvue", "NVUE `nv show interface lldp-detail -o json`", True, _is_interfaces, parse_nvue_lldp_json,
               read_nvue_lldp_json),
)
