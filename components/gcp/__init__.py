"""GCP target (pulumi-gcp): imported only when a stack's target is gcp."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:  # mypy holds the two modules to components/targets.py's protocols
    from components.gcp import network, node_pool
    from components.targets import Networks, NodePools

    _networks: Networks = network
    _node_pools: NodePools = node_pool
