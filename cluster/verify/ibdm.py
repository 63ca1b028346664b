"""An InfiniBand fabric as an IBDM topology file: the master topology InfiniBand's own validators take.

The format is ibutils' (man ibdm-topo-file): one section per system, its type and name, then one
line per cabled port, `P<port> -> <peer type> <peer name> P<peer port>`, and a blank line. Every
system type is defined by an IBNL file (man ibdm-ibnl-file); ibutils ships none for today's
switches or for GPU servers, so the types the file uses are written beside it, in `ibnl/`:
`<model>-<ports>` for a switch (one switch chip, ports 1..N as the subnet manager numbers them),
`HCA-<n>P` for one host channel adapter with n ports.

A host's HCAs are systems of their own, as a subnet manager discovers them (each adapter its own
system image GUID), named `<host>_<RDMA device>`: a host name is a DNS label, so the `_` cannot
be part of it. UFM's topology compare takes an IBDM file as its master topology (UFM Enterprise
User Manual, Topology Compare Tab: a custom .topo uploaded as master), as NVIDIA's Cable
Validation Tool reads UFM's (CVT UFM Topology Support: the IBDM periodic topo file
master.topo); ibdmchk checks a design from it before the fabric is built (tests/test_ib_tools.py
runs it on rendered designs).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from typing import NamedTuple

from cluster.spec import ClusterSpec
from cluster.topology import FABRIC, Topology
from cluster.verify.expected import Cable, End

FOLDER = "ibnl"  # the system definitions, beside the topology file (IBDM_IBNL_PATH points there)


class System(NamedTuple):
    """The IBDM system one cable end is on."""

    kind: str  # its type, the name of its IBNL file
    name: str
    port: int
    node: tuple[str, int, str]  # its one node: (SW | CA, ports, device)


def _system(topology: Topology, nic_ports: dict[str, int], end: End) -> System:
    node = topology.nodes[end.device]
    if node["kind"] == "host":
        device, _, port = end.port.partition("/")
        ports = nic_ports[node["pool"]]
        return System(f"HCA-{ports}P", f"{end.device}_{device}", int(port or 1), ("CA", ports, "ConnectX"))
    switch = topology.switch(end.device)
    ports = switch["ports"]
    return System(f"{switch['model']}-{ports}", end.device, int(end.port), ("SW", ports, switch["model"]))


def _ibnl(kind: str, node: tuple[str, int, str]) -> str:
    """A system of one node whose ports 1..N are its panel ports P1..PN."""
    node_type, ports, device = node
    lines = [f"TOPSYSTEM {kind}", "", f"NODE {node_type} {ports} {device} U1"]
    lines += [f"   {port} -> P{port}" for port in range(1, ports + 1)]
    return "\n".join(lines) + "\n"


def master_topology(spec: ClusterSpec, topology: Topology, cables: Iterable[Cable]) -> dict[str, str]:
    """`fabric.topo` (every fabric cable, listed from each switch end) and the IBNL file of every
    system type it names, by path under verify/."""
    sections: dict[tuple[str, str], list[tuple[int, str]]] = defaultdict(list)
    types: dict[str, tuple[str, int, str]] = {}
    nic_ports = {pool.name: pool.fabric_nics.ports_per_nic for pool in spec.pools}
    for cable in cables:
        if cable.network != FABRIC:
            continue
        lower, upper = (_system(topology, nic_ports, end) for end in (cable.lower, cable.upper))
        for end, peer in ((lower, upper), (upper, lower)):
            types[end.kind] = end.node
            if end.node[0] == "SW":  # an adapter's cable is listed once, from its switch
                sections[(end.name, end.kind)].append(
                    (end.port, f"P{end.port} -> {peer.kind} {peer.name} P{peer.port}"))
    lines = [f"# IBDM topology of the {spec.name} InfiniBand fabric (man ibdm-topo-file): every fabric cable,",
             "# from each switch end. The system types are defined in ibnl/ beside this file:",
             f"#   IBDM_IBNL_PATH={FOLDER} ibdmchk -t fabric.topo -n <host>_<RDMA device>/U1 -p 1", ""]
    for (name, kind), ports in sorted(sections.items()):
        lines.append(f"{kind} {name}")
        lines += [f"   {line}" for _, line in sorted(ports)]
        lines.append("")
    files = {"fabric.topo": "\n".join(lines)}
    for kind, node in sorted(types.items()):
        files[f"{FOLDER}/{kind}.ibnl"] = _ibnl(kind, node)
    return files
