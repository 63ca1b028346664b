#!/usr/bin/env bash
# oob-leaf-001: generic-16x1g, oob leaf. Run with bash on the switch: every
# setting is staged, then all are applied by one `nv config apply` at the end.
# Management port eth0 cabled to no oob leaf.
set -euo pipefail  # stop before `nv config apply` if any setting is rejected
nv set system hostname oob-leaf-001
nv set interface vlan100 ip address 172.16.240.1/16
nv set vrf default router static 0.0.0.0/0 via 172.16.0.1
nv set system aaa user admin hashed-password "${GPU_CLUSTER_SWITCH_PASSWORD_HASH}"
nv set system aaa user admin role system-admin
nv set service ntp default server 172.16.0.1 iburst on
nv set system ssh-server vrf default
nv set system api state enabled
nv set system api listening-address 172.16.240.1
nv set system telemetry export vrf default
nv set system telemetry export otlp grpc destination 172.16.0.72 port 4317
nv set system telemetry export otlp grpc insecure enabled
nv set system telemetry export otlp state enabled
nv set system telemetry interface-stats export state enabled
nv set system telemetry interface-stats sample-interval 10
nv set system telemetry buffer-stats export state enabled
nv set system telemetry buffer-stats sample-interval 10
nv set system message pre-login 'Authorized access only. Activity may be monitored.'
nv set interface swp1 description 'h200-node-001 bmc'
nv set interface swp1 link speed 1G
nv set interface swp1 link mtu 9216
nv set interface swp2 description 'h200-node-002 bmc'
nv set interface swp2 link speed 1G
nv set interface swp2 link mtu 9216
nv set interface swp10 description 'leaf-001-r0 mgmt'
nv set interface swp10 link speed 1G
nv set interface swp10 link mtu 9216
nv set interface swp11 description 'leaf-001-r1 mgmt'
nv set interface swp11 link speed 1G
nv set interface swp11 link mtu 9216
nv set interface swp12 description 'spine-001 mgmt'
nv set interface swp12 link speed 1G
nv set interface swp12 link mtu 9216
nv set interface swp13 description 'spine-002 mgmt'
nv set interface swp13 link speed 1G
nv set interface swp13 link mtu 9216
nv set interface swp14 description 'stor-leaf-001 mgmt'
nv set interface swp14 link speed 1G
nv set interface swp14 link mtu 9216
nv set interface swp15 description 'mgmt-leaf-001 mgmt'
nv set interface swp15 link speed 1G
nv set interface swp15 link mtu 9216

nv set bridge domain br_default vlan 100
nv set bridge domain br_default stp state up
nv set bridge domain br_default stp priority 32768
nv set interface swp1 bridge domain br_default access 100
nv set interface swp2 bridge domain br_default access 100
nv set interface swp10 bridge domain br_default access 100
nv set interface swp11 bridge domain br_default access 100
nv set interface swp12 bridge domain br_default access 100
nv set interface swp13 bridge domain br_default access 100
nv set interface swp14 bridge domain br_default access 100
nv set interface swp15 bridge domain br_default access 100

nv config apply -y
