"""The reader's links as the comparison's, where every name reads the same in the imported design.

The comparison of an import reads the neighbor data as `verify` does (cluster.verify.observe):
each reported name is looked up among the design's devices and each port among the names the
design knows it by. A fabric imported from its own data mostly names its devices and ports as
they were reported; when it does, those claims in design names are the reader's claims, and
resolving them gives the reader's links: at 131,072 GPUs, a million claims not made a second time.

That is proven here, not assumed. Each step of `verify`'s reading is checked against the reader's
on the names the data gives, and one that differs sends the comparison back to the data:
- the devices that reported: each file's device is the design's device of that name;
- every system name reported, read once each: the same device, or the same host for a BMC;
- the port names: the design knows each port of a link by its own name or not at all, a
  MAC-shaped candidate the reader passed over names no port of its device, no candidate follows
  the one the reader took (the design could know the port by it), and no port name was trimmed;
- the claims: no two give one port different peers (resolving them then reads off every claim,
  in any order; in the contested case the design's own cables rank the claims).
An InfiniBand discovery is read again (its claims are few: one per link).
"""

from __future__ import annotations

from cluster.importer.observe import Observed
from cluster.verify.expected import End
from cluster.verify.match import Link
from cluster.verify.observe import Names


def reader_links(observed: Observed, names: Names) -> list[Link] | None:
    """`observed.links` when they are what `verify` makes of the same data in the design's
    `names`; None when some name reads otherwise (then the comparison reads the data again)."""
    reported = observed.reported
    if observed.discovered or not observed.resolved_as_read or not reported.as_given:
        return None
    if any(names.device(device) != device for device in observed.lldp):
        return None
    for name, (host, device) in reported.devices.items():
        design_host, design_device = names.remote(name)
        if design_host != host or (host is None and design_device != device):
            return None
    if any(end.port.lower() in names.ports.get(end.device, {}) for end in reported.passed_over):
        return None
    same = _SamePort(names)
    return observed.links if all(same(link.a) and same(link.b) for link in observed.links) else None


class _SamePort:
    """Whether the design knows a port by its own name or not at all (`verify` then keeps the
    name as reported); an unnamed port `verify` calls `?`. (A million ends at 131,072 GPUs: each
    name is lower-cased once.)"""

    def __init__(self, names: Names) -> None:
        self.ports = names.ports
        self.lowered: dict[str, str] = {}

    def __call__(self, end: End) -> bool:
        device, port = end
        if not port:
            return False
        known = self.ports.get(device)
        if known is None:
            return True
        lowered = self.lowered.get(port)
        if lowered is None:
            lowered = self.lowered[port] = port.lower()
        found = known.get(lowered)
        return found is None or found == port
