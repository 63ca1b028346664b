#!/usr/bin/env bash
# mgmt-leaf-001: generic-8x25g, management leaf. Run with bash on the switch: every
# setting is staged, then all are applied by one `nv config apply` at the end.
# Management port eth0 cabled to oob-leaf-001 swp15.
set -euo pipefail  # stop before `nv config apply` if any setting is rejected
nv set system hostname mgmt-leaf-001
nv set interface eth0 ip address 172.16.232.1/16
nv set interface eth0 ip gateway 172.16.0.1
nv set interface eth0 ip vrf mgmt
nv set system aaa user admin hashed-password "${GPU_CLUSTER_SWITCH_PASSWORD_HASH}"
nv set system aaa user admin role system-admin
nv set service ntp mgmt server 172.16.0.1 iburst on
nv set system ssh-server vrf mgmt
nv set system api state enabled
nv set system api listening-address 172.16.232.1
nv set system telemetry export vrf mgmt
nv set system telemetry export otlp grpc destination 172.16.0.72 port 4317
nv set system telemetry export otlp grpc insecure enabled
nv set system telemetry export otlp state enabled
nv set system telemetry interface-stats export state enabled
nv set system telemetry interface-stats sample-interval 10
nv set system telemetry buffer-stats export state enabled
nv set system telemetry buffer-stats sample-interval 10
nv set system message pre-login 'Authorized access only. Activity may be monitored.'
nv set interface lo ip address 10.0.224.1/32
nv set interface swp1 description 'h200-node-001 mgmt0'
nv set interface swp1 link speed 25G
nv set interface swp1 link mtu 9216
nv set interface swp1 ip address 10.176.0.1/31
nv set interface swp2 description 'h200-node-002 mgmt0'
nv set interface swp2 link speed 25G
nv set interface swp2 link mtu 9216
nv set interface swp2 ip address 10.176.0.3/31

nv set router policy prefix-list PLAN type ipv4
nv set router policy prefix-list PLAN rule 10 match 10.0.224.0/19 min-prefix-len 32
nv set router policy prefix-list PLAN rule 10 match 10.0.224.0/19 max-prefix-len 32
nv set router policy prefix-list PLAN rule 10 action permit
nv set router policy prefix-list PLAN rule 20 match 10.176.0.0/12 min-prefix-len 31
nv set router policy prefix-list PLAN rule 20 match 10.176.0.0/12 max-prefix-len 31
nv set router policy prefix-list PLAN rule 20 action permit
nv set router bgp autonomous-system 4200058345
nv set router bgp router-id 10.0.224.1
nv set router bgp graceful-restart mode full
nv set router bgp graceful-restart restart-time 240
nv set router bgp graceful-restart path-selection-deferral-time 45
nv set vrf default router bgp path-selection multipath aspath-ignore on
nv set vrf default router bgp address-family ipv4-unicast multipaths ebgp 1
nv set vrf default router bgp address-family ipv4-unicast network 10.0.224.1/32
nv set vrf default router bgp address-family ipv4-unicast network 10.176.0.0/31
nv set vrf default router bgp address-family ipv4-unicast network 10.176.0.2/31

nv config apply -y
