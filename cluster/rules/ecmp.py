"""ECMP width: every routed switch can install as many equal-cost BGP paths as it has links to spread over."""

from __future__ import annotations

from collections.abc import Iterator

from cluster.dialects import platform
from cluster.ecmp import ecmp_widths
from cluster.findings import Finding
from cluster.rules.base import Rule
from cluster.spec import ClusterSpec
from cluster.topology import FABRIC, Topology


class EcmpWidth(Rule):
    """A routed switch whose equal-cost set (its uplinks, or its parallel links towards one leaf or
    one pod) is wider than its OS installs as BGP multipath: the links beyond the limit carry no
    traffic, so the fabric is oversubscribed although FAB-OVERSUB counts them. The worst switch per
    network and tier is named. When suppressed, configs are rendered with the OS's limit."""

    id = "FAB-ECMP"
    title = "BGP ECMP width within the switch OS's limit"

    def applies(self, spec: ClusterSpec) -> bool:
        return spec.fabric is not None and not spec.is_cloud

    def check(self, spec: ClusterSpec, topology: Topology) -> Iterator[Finding]:
        assert spec.fabric is not None
        routed = {"storage", "management"} | ({FABRIC} if spec.fabric.transport == "roce" else set())
        names = [name for name, data in topology.switches() if data["network"] in routed]
        nodes = topology.switch_nodes
        worst: dict[tuple[str, str], tuple[int, str, int, int]] = {}  # (network, tier) -> (excess, name, uplinks, width)
        for name, (uplinks, width) in ecmp_widths(topology, names).items():
            data = nodes[name]
            limit = platform(data["os"]).max_paths
            if limit is None or width <= limit:
                continue
            key = (data["network"], data["tier"])
            if key not in worst or (width - limit, name) > (worst[key][0], worst[key][1]):
                worst[key] = (width - limit, name, uplinks, width)
        for (network, tier), (excess, name, uplinks, width) in sorted(worst.items()):
            os = platform(nodes[name]["os"])
            limit = width - excess
            section = "fabric" if network == FABRIC else network
            upward = uplinks == width
            # a leaf's uplinks and a spine's links to one leaf come from leaf_uplinks; the rest from spine_uplinks
            uplink_key = "leaf_uplinks" if tier == "leaf" or (tier == "spine" and not upward) else "spine_uplinks"
            path = f"{section}.{uplink_key}"
            towards = "leaf" if tier == "spine" else "pod"
            what = f"{uplinks} uplinks" if upward else f"{width} parallel links towards one {towards}"
            yield self.finding(
                path,
                f"{name} ({os.title}) spreads traffic over {what}, but {os.title} installs at most {limit} "
                f"equal-cost BGP paths: {excess} links would carry nothing, so the {section} is oversubscribed",
                f"cable at most {limit} such links per {tier} (fewer, faster uplinks), or run the {tier} tier on an OS "
                f"that installs {width} paths ({section}.{tier}.os); suppress {self.id} to render with {limit} paths",
            )
