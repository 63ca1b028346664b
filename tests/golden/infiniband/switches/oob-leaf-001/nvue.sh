#!/usr/bin/env bash
# oob-leaf-001: generic-32x1g, oob leaf. Run with bash on the switch: every
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
nv set system gnmi-server listening-address 172.16.240.1
nv set system gnmi-server state enabled
nv set system message pre-login 'Authorized access only. Activity may be monitored.'
nv set interface swp1 description 'dgx-node-001 bmc'
nv set interface swp1 link speed 1G
nv set interface swp1 link mtu 9216
nv set interface swp2 description 'dgx-node-002 bmc'
nv set interface swp2 link speed 1G
nv set interface swp2 link mtu 9216
nv set interface swp19 description 'leaf-001-r0 mgmt'
nv set interface swp19 link speed 1G
nv set interface swp19 link mtu 9216
nv set interface swp20 description 'leaf-001-r1 mgmt'
nv set interface swp20 link speed 1G
nv set interface swp20 link mtu 9216
nv set interface swp21 description 'leaf-001-r2 mgmt'
nv set interface swp21 link speed 1G
nv set interface swp21 link mtu 9216
nv set interface swp22 description 'leaf-001-r3 mgmt'
nv set interface swp22 link speed 1G
nv set interface swp22 link mtu 9216
nv set interface swp23 description 'leaf-001-r4 mgmt'
nv set interface swp23 link speed 1G
nv set interface swp23 link mtu 9216
nv set interface swp24 description 'leaf-001-r5 mgmt'
nv set interface swp24 link speed 1G
nv set interface swp24 link mtu 9216
nv set interface swp25 description 'leaf-001-r6 mgmt'
nv set interface swp25 link speed 1G
nv set interface swp25 link mtu 9216
nv set interface swp26 description 'leaf-001-r7 mgmt'
nv set interface swp26 link speed 1G
nv set interface swp26 link mtu 9216
nv set interface swp27 description 'spine-001 mgmt'
nv set interface swp27 link speed 1G
nv set interface swp27 link mtu 9216
nv set interface swp28 description 'spine-002 mgmt'
nv set interface swp28 link speed 1G
nv set interface swp28 link mtu 9216
nv set interface swp29 description 'stor-leaf-001 mgmt'
nv set interface swp29 link speed 1G
nv set interface swp29 link mtu 9216
nv set interface swp30 description 'mgmt-leaf-001 mgmt'
nv set interface swp30 link speed 1G
nv set interface swp30 link mtu 9216

nv set bridge domain br_default vlan 100
nv set bridge domain br_default stp state up
nv set bridge domain br_default stp priority 32768
nv set interface swp1 bridge domain br_default access 100
nv set interface swp2 bridge domain br_default access 100
nv set interface swp19 bridge domain br_default access 100
nv set interface swp20 bridge domain br_default access 100
nv set interface swp21 bridge domain br_default access 100
nv set interface swp22 bridge domain br_default access 100
nv set interface swp23 bridge domain br_default access 100
nv set interface swp24 bridge domain br_default access 100
nv set interface swp25 bridge domain br_default access 100
nv set interface swp26 bridge domain br_default access 100
nv set interface swp27 bridge domain br_default access 100
nv set interface swp28 bridge domain br_default access 100
nv set interface swp29 bridge domain br_default access 100
nv set interface swp30 bridge domain br_default access 100

nv config apply -y
