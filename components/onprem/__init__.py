"""On-premises target: rendered switch configs and host scripts as files, tracked by Pulumi.

Kept import-light on purpose: the dynamic provider host imports `components.onprem.files`
(the provider is pickled by reference), and with it this package.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:  # mypy holds the two modules to components/targets.py's protocols
    from components.onprem import network, node_pool
    from components.targets import Networks, NodePools

    _networks: Networks = network
    _node_pools: NodePools = node_pool
