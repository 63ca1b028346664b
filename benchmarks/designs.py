"""The benchmark designs: rail-optimized RoCE clusters of 8-GPU nodes on 128-port 400G switches.

One stack mapping per size, auto-sized for 1:1 like a user who gives only the pool and the
switch models. At 131,072 GPUs the sizer needs three tiers (k*k/2 = 8,192 ports per plane for
two tiers of 128-port switches is too few), which is the point of the largest size.
"""

from __future__ import annotations

from typing import Any

SIZES = (1_024, 8_192, 32_768, 131_072)
GPUS_PER_NODE = 8


def stack(gpus: int) -> dict[str, Any]:
    """A `gpu-cluster:cluster` mapping with `gpus` H200 GPUs (8 per node, one 400G NIC each)."""
    switch = {"switch": "SN5600", "port_gbps": 400}
    return {
        "name": f"bench-{gpus}",
        "target": "onprem",
        "node_pools": [{
            "name": "h200",
            "nodes": gpus // GPUS_PER_NODE,
            "gpu": "H200",
            "fabric_nics": {"count": 8, "gbps": 400},
            "storage_nics": {"count": 2, "gbps": 200},
            "management_nics": {"count": 1, "gbps": 25},
        }],
        "fabric": {"transport": "roce", "design": "rail-optimized", "leaf": switch, "spine": switch, "core": switch},
        "storage": {"leaf": {"switch": "SN5600", "port_gbps": 200}},
        "addressing": {"loopbacks": "10.0.0.0/14", "fabric_links": "10.64.0.0/10", "hosts": "10.128.0.0/9"},
    }
