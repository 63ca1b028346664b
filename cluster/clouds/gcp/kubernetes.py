"""What the Kueue export writes for GKE node pools (cluster.exports.kubernetes asks it), and the
Network objects they need (components/gcp/network.py outputs them).

GKE multi-networking: the Network objects of a node pool's additional networks (gVNIC storage
VPC, one per RDMA subnet), and a pod's annotations that give it the RDMA interfaces. Names and
shapes as Cluster Toolkit's gke-a3-ultragpu NCCL example uses them (examples/gke-a3-ultragpu/
nccl-jobset-example.yaml: `networking.gke.io/default-interface: 'eth0'`, and
`networking.gke.io/interfaces` listing eth0 on "default", then eth2..eth9 on rdma-0..rdma-7).
"""

from __future__ import annotations

import json
from typing import Any

import yaml

from cluster.catalog import Instance

GKE_NETWORKING = "networking.gke.io/v1"
# Where GKE's gIB installer DaemonSet puts the plugin on the node (COS has no /usr/local), mounted
# at /usr/local/gib in the container (the same NCCL example's `gib` volume).
HOST_PATHS = {"/usr/local/gib": "/home/kubernetes/bin/gib"}
GVNIC_NETWORK = "gvnic-1"
KUEUE_HEADER = ("# The Jobs' networking.gke.io/interfaces name the cluster's Network objects: apply\n"
                "# `pulumi stack output kubernetes_networks` first.\n")


def rdma_network(index: int) -> str:
    """The Network object of the RDMA VPC's subnet `index`."""
    return f"rdma-{index}"


def pod_annotations(instance: Instance) -> dict[str, str]:
    """A pod's annotations that attach every RDMA NIC of the node (the interface after the node's
    gVNICs, eth0 the pod's default network)."""
    gvnics = instance.other_nics.count if instance.other_nics else 1
    interfaces = [{"interfaceName": "eth0", "network": "default"}]
    interfaces += [{"interfaceName": f"eth{gvnics + index}", "network": rdma_network(index)}
                   for index in range(instance.fabric.count)]
    return {"networking.gke.io/default-interface": "eth0",
            "networking.gke.io/interfaces": json.dumps(interfaces, separators=(",", ":"))}


def network_objects(gvnic: tuple[str, str] | None, rdma: list[tuple[str, str]]) -> list[dict[str, Any]]:
    """GKENetworkParamSet and Network per additional node network ((VPC name, subnet name) each):
    the storage gVNIC in NetDevice mode, the RDMA subnets in RDMA mode."""
    named = ([(GVNIC_NETWORK, gvnic, "NetDevice")] if gvnic is not None else [])
    named += [(rdma_network(index), pair, "RDMA") for index, pair in enumerate(rdma)]
    objects: list[dict[str, Any]] = []
    for name, (vpc, subnet), mode in named:
        objects.append({"apiVersion": GKE_NETWORKING, "kind": "GKENetworkParamSet", "metadata": {"name": name},
                        "spec": {"vpc": vpc, "vpcSubnet": subnet, "deviceMode": mode}})
        objects.append({"apiVersion": GKE_NETWORKING, "kind": "Network", "metadata": {"name": name},
                        "spec": {"type": "Device", "parametersRef": {"group": "networking.gke.io",
                                                                      "kind": "GKENetworkParamSet", "name": name}}})
    return objects


def networks_yaml(gvnic: tuple[str, str] | None, rdma: list[tuple[str, str]]) -> str:
    """The GKE Network objects as one YAML file (`kubectl apply -f`), as the Kueue export dumps its own."""
    return yaml.safe_dump_all(network_objects(gvnic, rdma), sort_keys=False, default_flow_style=False, width=120)
