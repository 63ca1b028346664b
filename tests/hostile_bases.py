"""Valid stack mappings that name every contract key, for the hostile-input and identity tests."""

from __future__ import annotations

import copy
from typing import Any

ONPREM: dict[str, Any] = {
    "name": "hostile",
    "target": "onprem",
    "node_pools": [
        {
            "name": "h200",
            "nodes": 8,
            "gpu": "H200",
            "gpus_per_node": 8,
            "server": "hgx-h200",
            "fabric_nics": {
                "count": 8,
                "gbps": 400,
                "ports_per_nic": 1,
                "devices": [f"mlx5_{port}" for port in range(8)],
                "interfaces": [f"ens{port}np0" for port in range(8)],
            },
            "storage_nics": {"count": 2, "gbps": 200, "ports_per_nic": 1},
            "management_nics": {"count": 1, "gbps": 25, "ports_per_nic": 1},
        },
        {"name": "b200", "nodes": 4, "gpu": "B200"},
    ],
    "fabric": {
        "transport": "roce",
        "design": "rail-optimized",
        "planes": 1,
        "leaf": {"switch": "SN5600", "port_gbps": 400, "os": "sonic"},
        "spine": {"ports": 64, "port_gbps": 400, "uplink_ports": 0, "uplink_gbps": 400},
        "core": {"ports": 64, "port_gbps": 400},
        "leaves": 8,
        "spines": 4,
        "cores": 0,
        "pods": 0,
        "leaf_uplinks": 12,
        "spine_uplinks": 0,
        "max_oversubscription": {"leaf": 1.0, "spine": 1.0, "core": 1.0},
        "shared_with": [],
    },
    "storage": {
        "leaf": {"ports": 64, "port_gbps": 200},
        "spine": {"ports": 64, "port_gbps": 200},
        "leaves": 1,
        "spines": 0,
        "leaf_uplinks": 0,
        "max_oversubscription": 3.0,
    },
    "management": {"leaf": {"switch": "MGMT-48x25"}},
    "oob": {"leaf": {"switch": "OOB-48x1"}},
    "addressing": {"loopbacks": "10.0.0.0/16", "fabric_links": "10.64.0.0/12", "hosts": "10.128.0.0/10"},
    "asn": {"spine": 4200000000, "leaf_base": 4200001000},
    "qos": {
        "mode": "lossless",
        "roce": {"dscp": 26, "priority": 3},
        "cnp": {"dscp": 48, "priority": 6},
        "storage": {"dscp": 10, "priority": 1},
        "management": {"dscp": 0, "priority": 0},
        "pfc_priorities": [3],
        "ecn": {"min_bytes": 150000, "max_bytes": 1500000},
        "mtu": 9000,
    },
    "policy": {
        "min_gbps_per_gpu": 200,
        "recommended_gbps_per_gpu": 400,
        "max_switch_hops": 3,
        "fail_on": "error",
        "suppress": ["FAB-LINK-SPEED"],
    },
}

CLOUD: dict[str, Any] = {
    "name": "hostile-cloud",
    "target": "aws",
    "cloud": {
        "region": "us-east-1",
        "zone": "us-east-1a",
        "reservation": "cr-0123456789abcdef0",
        "market": "capacity-block",
        "ssh_cidrs": ["203.0.113.0/24"],
        "image": "resolve:ssm:/aws/service/deeplearning/ami/x86_64/base-oss-nvidia-driver-gpu-ubuntu-22.04/latest/ami-id",
        "ssh_public_key": "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOMqqnkVzrm0SdG6UOoqKLsabgH5C9okWi0dh2l9GKJl ops@example",
        "vpc_id": "vpc-0123456789abcdef0",
        "subnet_ids": {"management": "subnet-0123456789abcdef0", "storage": "subnet-0123456789abcdef1",
                       "fabric": "subnet-0123456789abcdef2"},
    },
    "node_pools": [{"name": "p5e", "nodes": 4, "instance_type": "p5e.48xlarge", "gpu": "H200", "gpus_per_node": 8}],
}

BASES = {"onprem": ONPREM, "cloud": CLOUD}


def paths(value: Any, prefix: tuple[str | int, ...] = ()) -> list[tuple[str | int, ...]]:
    """Every key and list item position in `value`, parents before children."""
    found: list[tuple[str | int, ...]] = []
    items: list[tuple[str | int, Any]] = []
    if isinstance(value, dict):
        items = list(value.items())
    elif isinstance(value, list):
        items = list(enumerate(value))
    for key, child in items:
        found.append((*prefix, key))
        found.extend(paths(child, (*prefix, key)))
    return found


def replaced(base: dict[str, Any], path: tuple[str | int, ...], value: Any) -> dict[str, Any]:
    """A deep copy of `base` with the value at `path` replaced."""
    data = copy.deepcopy(base)
    target: Any = data
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = value
    return data


def dotted(path: tuple[str | int, ...]) -> str:
    text = ""
    for key in path:
        text += f"[{key}]" if isinstance(key, int) else (f".{key}" if text else str(key))
    return text
