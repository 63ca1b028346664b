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
    resolver admits only zone names that end in a letter a-k."""
    return subnet_cidr(FIRST_GPU_SUBNET + ord(zone[-1]) - ord("a"))


# The /20 after the zones' fabric subnets (a-k) holds the EKS control plane's subnets: a /28 per zone
# letter. EKS needs six free addresses in each and recommends a /28 (Amazon EKS User Guide, "View Amazon
# EKS networking requirements for VPC and subnets": "at least six IP addresses ... we recommend at least 16").
CONTROL_PLANE_SUBNET = FIRST_GPU_SUBNET + 11
CONTROL_PLANE_PREFIX = 28


def control_plane_cidr(zone: str) -> str:
    """AWS: the EKS control-plane subnet of `zone`, by the zone's letter (a -> the block's first /28)."""
    return subnet_cidr(ord(zone[-1]) - ord("a"), block=subnet_cidr(CONTROL_PLANE_SUBNET), prefix=CONTROL_PLANE_PREFIX)


def gpu_nic_cidr(nic: int) -> str:
    """The subnet of GPU NIC `nic` (GCP: RDMA VPC subnets, or one GPU VPC per NIC)."""
    return subnet_cidr(FIRST_GPU_SUBNET + nic)
