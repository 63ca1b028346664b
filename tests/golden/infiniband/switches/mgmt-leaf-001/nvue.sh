#!/usr/bin/env bash
# mgmt-leaf-001: generic-8x400g, management leaf. Run with bash on the switch: every
# setting is staged, then all are applied by one `nv config apply` at the end.
# Management port eth0 cabled to oob-leaf-001 swp14.
set -euo pipefail  # stop before `nv config apply` if any setting is rejected
nv set system hostname mgmt-leaf-001
nv set interface lo ip address 10.0.224.1/32
nv set interface swp1 description 'dgx-node-001 management nic0'
nv set interface swp1 link speed 400G
nv set interface swp1 link mtu 9216
nv set interface swp1 ip address 10.176.0.1/31
nv set interface swp2 description 'dgx-node-001 management nic1'
nv set interface swp2 link speed 400G
nv set interface swp2 link mtu 9216
nv set interface swp2 ip address 10.176.0.3/31
nv set interface swp3 description 'dgx-node-002 management nic0'
nv set interface swp3 link speed 400G
nv set interface swp3 link mtu 9216
nv set interface swp3 ip address 10.176.0.5/31
nv set interface swp4 description 'dgx-node-002 management nic1'
nv set interface swp4 link speed 400G
nv set interface swp4 link mtu 9216
nv set interface swp4 ip address 10.176.0.7/31

nv set router bgp autonomous-system 4200058345
nv set router bgp router-id 10.0.224.1
nv set vrf default router bgp path-selection multipath aspath-ignore on
nv set vrf default router bgp address-family ipv4-unicast multipaths ebgp 1
nv set vrf default router bgp address-family ipv4-unicast network 10.0.224.1/32
nv set vrf default router bgp address-family ipv4-unicast network 10.176.0.0/31
nv set vrf default router bgp address-family ipv4-unicast network 10.176.0.2/31
nv set vrf default router bgp address-family ipv4-unicast network 10.176.0.4/31
nv set vrf default router bgp address-family ipv4-unicast network 10.176.0.6/31

nv config apply -y
