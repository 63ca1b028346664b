"""InfiniBand, configured by its subnet manager (opensm): switches number their ports from 1 and
have no IP underlay; the fabric gets opensm.conf and partitions.conf instead of switch configs."""

from __future__ import annotations

from cluster.dialects import Platform

PLATFORM = Platform(
    name="opensm",
    title="InfiniBand (opensm)",
    port_name=lambda index, model, gbps: str(index + 1),
    management_port=lambda model: "mgmt0",
    config_file=None,
    routing_file=None,
    transport="infiniband",
    stack_os=False,  # follows from an InfiniBand fabric
    snmp_traps=False,  # no per-switch configuration is rendered (the subnet manager configures the fabric)
)
