"""Cloud subnet ranges: carved by network index from one private block, so adding a network
or a GPU NIC never moves an existing subnet."""

from __future__ import annotations

import ipaddress

CLOUD_BLOCK = "10.0.0.0/16"
SUBNET_PREFIX = 20
# Index of each network's /20 inside the block; GPU subnets (one per NIC) follow from 4 on.
NETWORK_INDEX = {"management": 0, "storage": 1, "fabric": 2, "public": 3}  # public: NAT gateway, Azure Bastion
FIRST_GPU_SUBNET = 4


def subnet_cidr(index: int, block: str = CLOUD_BLOCK, prefix: int = SUBNET_PREFIX) -> str:
    """The `index`-th /prefix of `block`."""
    network = ipaddress.ip_network(block)
    subnets = list(network.subnets(new_prefix=prefix))
    if index >= len(subnets):
        raise ValueError(f"{block} holds {len(subnets)} /{prefix} subnets, not {index + 1}")
    return str(subnets[index])


def network_cidr(network: str) -> str:
    return subnet_cidr(NETWORK_INDEX[network])


def zone_cidr(zone: str) -> str:
    """AWS: the fabric subnet of a pool in another zone than the cluster's, by the zone's letter
    (us-east-1c -> the 3rd /20 after the GPU block's start), so adding a zone moves no subnet. The
    resolver admits only zone names that end in a letter a-l."""
    return subnet_cidr(FIRST_GPU_SUBNET + ord(zone[-1]) - ord("a"))


def gpu_nic_cidr(nic: int) -> str:
    """The subnet of GPU NIC `nic` (GCP: RDMA VPC subnets, or one GPU VPC per NIC)."""
    return subnet_cidr(FIRST_GPU_SUBNET + nic)
