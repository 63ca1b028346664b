"""The LAB-* rule ids: what `lab` reports, with a title, a meaning and a default severity each.

`lab check` reports the running lab against the design, `lab fail` a failure against `whatif`,
and every action that builds a lab (`lab up`, `lab export`) the rendered tree it cannot use.
"""

from __future__ import annotations

from cluster.findings import Finding, Severity

# Rule id -> (title, what it means, default severity): the LAB-* contract, as CABLE_RULES is verify's.
LAB_RULES: dict[str, tuple[str, str, Severity]] = {
    "LAB-BGP": ("designed session down",
                "A BGP session the design has (both ends in the lab) that is not configured or not Established.",
                Severity.ERROR),
    "LAB-BFD": ("BFD not as designed",
                "A BGP session of the design without a BFD session, one that is not up, or one whose timers "
                "(transmit and receive interval, detect multiplier) differ from the design's: a silent peer is then "
                "noticed only by BGP's hold timer.", Severity.ERROR),
    "LAB-ASN": ("BGP on another ASN",
                "A switch, or the peer of one of its sessions, speaks another ASN than the design gives it.",
                Severity.ERROR),
    "LAB-ROUTE": ("route or ECMP width not as designed",
                  "A loopback or host /31 missing from a switch's kernel, installed over another number of next "
                  "hops than the design's ECMP width, or held though nothing in the lab announces it.",
                  Severity.ERROR),
    "LAB-RAIL": ("host rail routing not as designed",
                       "Traffic from a host rail's own address that does not leave on that rail toward its own "
                       "leaf, or a host whose route to the fabric does not spread over every rail's leaf.",
                       Severity.ERROR),
    "LAB-REACH": ("reachability not as designed",
                  "A host rail that does (or does not) reach another host's rail where the design says the "
                  "opposite.", Severity.ERROR),
    "LAB-MTU": ("MTU not carried",
                "A cable or a host-to-host path that does not carry the design's MTU with DF set.", Severity.ERROR),
    "LAB-HOSTNET": ("host storage or management port not as designed",
                    "A host's storage or management port (as its netplan file sets it) that does not reach its "
                    "leaf or the same port of another host, or traffic that leaves on another port than the "
                    "design's: from the port's own address, the default route (first management port), the "
                    "storage network and storage.targets (first storage port).", Severity.ERROR),
    "LAB-NCCL": ("NCCL's socket interface not found",
                 "A host's nccl-socket.sh that, run on the host, does not set NCCL_SOCKET_IFNAME to the netdev "
                 "holding the host's management address: NCCL's bootstrap would find no socket interface.",
                 Severity.ERROR),
    "LAB-DHCP": ("DHCP lease not as designed",
                 "With the design's DHCP server in the lab, a host's first management port that gets no lease "
                 "through its leaf's relay, or another address or gateway than the design's.", Severity.ERROR),
    "LAB-OOB": ("switch management address not reached from the oob network",
                "A switch whose management address (from the oob plan) does not answer a ping from the out-of-band "
                "network, or whose management port is not in the management VRF the design gives it (its "
                "management address then sits in the fabric's routing table), or whose management VRF has "
                "another default gateway than the design's.", Severity.ERROR),
    "LAB-BMC": ("BMC not cabled or leased as designed",
                "A host's BMC that is not cabled to the oob switch port the design gives it, has no carrier or "
                "sits on a port outside the oob switch's bridge (at cabling.csv); where the design sets "
                "management_plane.dhcp_server, a BMC that gets no lease from it, a lease outside the pool (the "
                "second quarter of addressing.oob) or with another prefix or router than management_plane.gateway, "
                "an address leased twice, or a lease holder that does not answer from the root oob switch (at "
                "dhcp/kea-dhcp4-oob.conf).", Severity.ERROR),
    "LAB-LLDP": ("LLDP neighbor not as designed",
                 "An LLDP neighbor other than the one `verify` expects (link speeds are not emulated).",
                 Severity.ERROR),
    "LAB-WHATIF": ("failure disagrees with whatif",
                   "After `lab fail`, the worst oversubscription of the tier below or the switches left without "
                   "uplinks differ from what `whatif --fail` predicts.", Severity.ERROR),
    "LAB-CONVERGE": ("failure outlasts the design's bound",
                     "After `lab fail`, a probe flow went longer without a reply, or the routes took longer to "
                     "settle (or never did), than the design's BFD detect time plus the stated margin.",
                     Severity.ERROR),
    "LAB-INPUT": ("rendered tree the lab cannot use",
                  "A rendered file that is missing, cannot be read or is not what the renderer writes, or a port "
                  "or device name the lab (or containerlab) cannot take: every one at once, nothing is built or "
                  "written, exit 2.", Severity.ERROR),
}


def lab_finding(rule: str, path: str, message: str, hint: str) -> Finding:
    """A LAB-* finding at its rule's default severity."""
    return Finding(rule, LAB_RULES[rule][2], path, message, hint)


def input_finding(path: str, message: str, hint: str) -> Finding:
    """LAB-INPUT at the rendered file (or the device) the lab cannot use."""
    return lab_finding("LAB-INPUT", path, message, hint)
