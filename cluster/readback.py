"""Read the QoS plan back out of what the renderers actually write: does a rendered file carry
exactly its intent? Each dialect's renderer reads its own file back (`read_qos` beside
`render_switch` in cluster/dialects/<os>/render.py, from the device's own defaults: what it does
when a line is missing), and so does the host's (both paths of qos.sh). The read-back tests
(tests/test_qos_readback.py) hold every dialect and both host paths to the intent over generated
QoS plans, so a template change that drops a DSCP mapping or a PFC priority fails CI; validation
itself renders nothing.
"""

from __future__ import annotations

from collections.abc import Callable

from cluster.configs import dialect_renderer
from cluster.dialects import platform, platforms
from cluster.dialects.host.render import read_host, render_pool
from cluster.intent.host import host_pool
from cluster.intent.qos import SWITCH_MTU, QosSide, qos_intent, storage_shares_fabric
from cluster.intent.switch import Port, Switch
from cluster.naming import switch_port
from cluster.spec import ClusterSpec
from cluster.topology import FABRIC, Topology

_PROBE_PORT = 0
_PROBE_MODEL = ("SN5600", 400)  # a model every dialect has port names for


def _probe_switch(spec: ClusterSpec, os: str) -> Switch:
    """A one-port fabric leaf in dialect `os`: the QoS part of the template is all that matters."""
    assert spec.qos is not None
    model, gbps = _PROBE_MODEL
    port = Port(name=switch_port(os, _PROBE_PORT, model, gbps), number=_PROBE_PORT, role="host", network=FABRIC,
                speed_gbps=gbps, mtu=SWITCH_MTU,
                description="probe-node-001 nic0", peer="probe-node-001", address=None, peer_address=None,
                peer_asn=None, qos=True, cable_m=5)
    return Switch(name="qos-probe", cluster=spec.name, network=FABRIC, tier="leaf", os=os, model=model,
                  port_gbps=gbps, main_ports=1, loopback=None, asn=None, ports=(port,), management="",
                  management_port=platform(os).management_port(model), networks=(),
                  qos=qos_intent(spec.qos, storage_shares_fabric(spec)).switch)


def qos_dialects() -> tuple[str, ...]:
    """The switch dialects that render a RoCE QoS plan (and read it back)."""
    return tuple(name for name, entry in platforms().items() if entry.transport == "ethernet")


def read_back(spec: ClusterSpec, topology: Topology) -> dict[str, QosSide]:
    """{what was rendered: the QoS it states, all 64 DSCPs} for the host script of the first pool
    (its mlnx_qos and its dcb path) and a probe fabric leaf of every switch dialect."""
    assert spec.qos is not None
    every = list(range(64))
    script = render_pool(host_pool(spec, topology, None, spec.pools[0]))["qos.sh"]
    host_mlnx, host_dcb = read_host(script, every)
    sides = {"host script (mlnx_qos)": host_mlnx, "host script (dcb)": host_dcb}
    for os in qos_dialects():
        renderer = dialect_renderer(os)
        reader: Callable[[str, list[int]], QosSide] = renderer.read_qos
        sides[f"{os} switch config"] = reader(renderer.render_switch(_probe_switch(spec, os))[renderer.QOS_FILE], every)
    return sides
