"""What the devices of a design report when it is built as designed, as the tools collect it:
one `lldpctl -f json` file per device (hosts, and switches on their Ethernet ports) and, for an
InfiniBand fabric, one `ibnetdiscover -p` walk of it. Made from the cables `verify` expects
(cluster.verify.expected), which is what `render` writes to verify/neighbors/; faults are
injected by editing the cable list first.

lldpd's conventions: a neighbor is keyed by its system name with its description and the port
id as an interface name; a link's speed is the 802.3 MAU type lldpd prints (`400GbaseCR8`);
a host's lldpd never sees its own BMC port, a BMC calls itself `<host>-bmc`. InfiniBand ports
run no LLDP: the fabric is in the discovery, a switch by its number, an HCA as `<host> <hca>`.
"""

from __future__ import annotations

import json
import zlib
from collections import defaultdict
from collections.abc import Iterable
from typing import Any

from cluster.spec import ClusterSpec
from cluster.topology import Topology
from cluster.verify.expected import BMC_PORT, Cable, End, expected_cables

HOST_DESCRIPTION = "Debian GNU/Linux 12 (bookworm) Linux 6.1.0-28-amd64 #1 SMP PREEMPT_DYNAMIC x86_64"
IB_SPEED = {100: "EDR", 200: "HDR", 400: "NDR", 800: "XDR"}


def switch_description(model: str) -> str:
    """A system description naming the model, as switch OSes put theirs (`... running on SN5600`)."""
    return f"Network OS 1.0 running on {model}"


def mau(gbps: int) -> str:
    return "1000BaseTFD - Four-pair Category 5 UTP, full duplex mode" if gbps < 10 else f"{gbps}GbaseCR4"


def _entry(local: str, remote: str, remote_port: str, description: str, gbps: int) -> dict[str, Any]:
    return {local: {"via": "LLDP", "age": "0 day, 00:05:00",
                    "chassis": {remote: {"id": {"type": "mac", "value": _mac(remote)}, "descr": description}},
                    "port": {"id": {"type": "ifname", "value": remote_port}, "descr": remote_port,
                             "auto-negotiation": {"supported": True, "enabled": True, "current": mau(gbps)}}}}


def _mac(name: str) -> str:
    value = zlib.crc32(name.encode()).to_bytes(4, "big")
    return "02:00:" + ":".join(f"{byte:02x}" for byte in value)


def lldpctl_files(topology: Topology, cables: Iterable[Cable], infiniband: bool) -> dict[str, str]:
    """device -> its `lldpctl -f json` output (every Ethernet cable seen from both ends)."""
    described = {name: switch_description(data["model"]) for name, data in topology.switches()}
    entries: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for cable in cables:
        if infiniband and cable.network == "fabric":
            continue
        for end, peer in ((cable.lower, cable.upper), (cable.upper, cable.lower)):
            if end.port == BMC_PORT:
                continue  # a host's lldpd does not see its BMC port
            if peer.port == BMC_PORT:
                name, port, description = f"{peer.device}-bmc", "eth0", "BMC firmware"
            else:
                name, port = peer.device, peer.port
                description = described.get(peer.device, HOST_DESCRIPTION)
            entries[end.device].append(_entry(end.port, name, port, description, cable.gbps))
    return {device: json.dumps({"lldp": {"interface": items}}, indent=1) for device, items in sorted(entries.items())}


def _guid(name: str) -> str:
    return f"0x{zlib.crc32(name.encode()):08x}{zlib.adler32(name.encode()):08x}"


def ibnetdiscover_ports(topology: Topology, cables: Iterable[Cable]) -> str:
    """`ibnetdiscover -p` of the fabric's cables: one line per cabled port, both ends."""
    lines = []
    for cable in cables:
        if cable.network != "fabric":
            continue
        ends = []
        for end in (cable.lower, cable.upper):
            if topology.nodes[end.device]["kind"] == "host":
                hca, _, port = end.port.partition("/")
                ends.append(("CA", port or "1", _guid(f"{end.device} {hca}"), f"{end.device} {hca}"))
            else:
                ends.append(("SW", end.port, _guid(end.device), end.device))
        (kind_a, port_a, guid_a, name_a), (kind_b, port_b, guid_b, name_b) = ends
        speed = IB_SPEED.get(cable.gbps, "HDR")
        lines.append(f"{kind_a} 1 {port_a} {guid_a} 4x {speed} - {kind_b} 2 {port_b} {guid_b} ( '{name_a}' - '{name_b}' )")
    return "\n".join(lines) + "\n"


def reports(spec: ClusterSpec, topology: Topology, cables: list[Cable] | None = None) -> tuple[dict[str, str], str | None]:
    """(LLDP files by device, the InfiniBand discovery or None) of the design's cables (or `cables`)."""
    cables = expected_cables(spec, topology) if cables is None else cables
    infiniband = spec.fabric is not None and spec.fabric.transport == "infiniband"
    return lldpctl_files(topology, cables, infiniband), ibnetdiscover_ports(topology, cables) if infiniband else None


def moved(cable: Cable, lower: End | None = None, upper: End | None = None) -> Cable:
    """`cable` with one or both ends plugged elsewhere (a fault to inject)."""
    return Cable(lower=lower or cable.lower, upper=upper or cable.upper, network=cable.network, tier=cable.tier,
                 gbps=cable.gbps, rail=cable.rail, path=cable.path)


def ibsim_net(topology: Topology, cables: Iterable[Cable]) -> str:
    """The fabric's cables as an ibsim topology (ibsim-utils' net format, as
    tests/data/verify/ib/designed.net): every link 4x HDR (w=2 s=4 e=4), an HCA's node id
    `<host> <hca>` as rdma-ndd sets a host's node description."""
    ports: dict[str, list[tuple[int, str, int]]] = defaultdict(list)
    sizes: dict[str, int] = {}
    for cable in cables:
        if cable.network != "fabric":
            continue
        nodes = []
        for end in (cable.lower, cable.upper):
            if topology.nodes[end.device]["kind"] == "host":
                hca, _, port = end.port.partition("/")
                nodes.append((f"{end.device} {hca}", int(port or 1)))
                sizes[nodes[-1][0]] = 1
            else:
                nodes.append((end.device, int(end.port)))
                sizes[end.device] = topology.switch(end.device)["ports"]
        (a, a_port), (b, b_port) = nodes
        ports[a].append((a_port, b, b_port))
        ports[b].append((b_port, a, a_port))
    blocks = []
    for node in sorted(ports, key=lambda name: (" " in name, name)):
        kind = "Hca" if " " in node else "Switch"
        lines = [f'{kind}\t{sizes[node]} "{node}"']
        lines += [f'[{port}]\t"{peer}"[{peer_port}] w=2 s=4 e=4' for port, peer, peer_port in sorted(ports[node])]
        blocks.append("\n".join(lines))
    return "\n\n".join(blocks) + "\n"
