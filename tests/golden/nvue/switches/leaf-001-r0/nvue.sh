#!/usr/bin/env bash
# leaf-001-r0: generic-8x400g, fabric leaf. Run with bash on the switch: every
# setting is staged, then all are applied by one `nv config apply` at the end.
# Management port eth0 cabled to oob-leaf-001 swp10.
set -euo pipefail  # stop before `nv config apply` if any setting is rejected
nv set system hostname leaf-001-r0
nv set interface eth0 ip address 172.16.128.1/16
nv set interface eth0 ip gateway 172.16.0.1
nv set interface eth0 ip vrf mgmt
nv set system aaa user admin hashed-password "${GPU_CLUSTER_SWITCH_PASSWORD_HASH}"
nv set system aaa user admin role system-admin
nv set service ntp mgmt server 172.16.0.1 iburst on
nv set system ssh-server vrf mgmt
nv set system api state enabled
nv set system api listening-address 172.16.128.1
nv set system telemetry export vrf mgmt
nv set system telemetry export otlp grpc destination 172.16.0.72 port 4317
nv set system telemetry export otlp grpc insecure enabled
nv set system telemetry export otlp state enabled
nv set system telemetry interface-stats export state enabled
nv set system telemetry interface-stats sample-interval 10
nv set system telemetry interface-stats switch-priority 3
nv set system telemetry interface-stats egress-buffer traffic-class 3
nv set system telemetry buffer-stats export state enabled
nv set system telemetry buffer-stats sample-interval 10
nv set system message pre-login 'Authorized access only. Activity may be monitored.'
nv set interface lo ip address 10.0.0.1/32
nv set interface swp1 description 'h200-node-001 rail0'
nv set interface swp1 link speed 400G
nv set interface swp1 link mtu 9216
nv set interface swp1 ip address 10.128.0.1/31
nv set interface swp2 description 'h200-node-002 rail0'
nv set interface swp2 link speed 400G
nv set interface swp2 link mtu 9216
nv set interface swp2 ip address 10.128.0.5/31
nv set interface swp7 description 'spine-001 swp1'
nv set interface swp7 link speed 400G
nv set interface swp7 link mtu 9216
nv set interface swp7 ip address 10.64.0.0/31
nv set interface swp8 description 'spine-002 swp1'
nv set interface swp8 link speed 400G
nv set interface swp8 link mtu 9216
nv set interface swp8 ip address 10.64.0.2/31

nv set router policy prefix-list PLAN type ipv4
nv set router policy prefix-list PLAN rule 10 match 10.0.0.0/17 min-prefix-len 32
nv set router policy prefix-list PLAN rule 10 match 10.0.0.0/17 max-prefix-len 32
nv set router policy prefix-list PLAN rule 10 action permit
nv set router policy prefix-list PLAN rule 20 match 10.0.128.0/18 min-prefix-len 32
nv set router policy prefix-list PLAN rule 20 match 10.0.128.0/18 max-prefix-len 32
nv set router policy prefix-list PLAN rule 20 action permit
nv set router policy prefix-list PLAN rule 30 match 10.128.0.0/11 min-prefix-len 31
nv set router policy prefix-list PLAN rule 30 match 10.128.0.0/11 max-prefix-len 31
nv set router policy prefix-list PLAN rule 30 action permit
nv set router bgp autonomous-system 4200001001
nv set router bgp router-id 10.0.0.1
nv set router bgp graceful-restart mode full
nv set router bgp graceful-restart restart-time 240
nv set router bgp graceful-restart path-selection-deferral-time 45
nv set vrf default router bgp path-selection multipath aspath-ignore on
nv set vrf default router bgp address-family ipv4-unicast multipaths ebgp 2
nv set vrf default router bgp address-family ipv4-unicast network 10.0.0.1/32
nv set vrf default router bgp address-family ipv4-unicast network 10.128.0.0/31
nv set vrf default router bgp address-family ipv4-unicast network 10.128.0.4/31
nv set vrf default router bgp neighbor 10.64.0.1 remote-as external
nv set vrf default router bgp neighbor 10.64.0.1 description 'spine-001 swp1'
nv set vrf default router bgp neighbor 10.64.0.1 bfd enable on
nv set vrf default router bgp neighbor 10.64.0.1 bfd detect-multiplier 3
nv set vrf default router bgp neighbor 10.64.0.1 bfd min-rx-interval 200
nv set vrf default router bgp neighbor 10.64.0.1 bfd min-tx-interval 200
nv set vrf default router bgp neighbor 10.64.0.1 address-family ipv4-unicast policy inbound prefix-list PLAN
nv set vrf default router bgp neighbor 10.64.0.1 address-family ipv4-unicast policy outbound prefix-list PLAN
nv set vrf default router bgp neighbor 10.64.0.1 address-family ipv4-unicast prefix-limits inbound maximum 1000
nv set vrf default router bgp neighbor 10.64.0.3 remote-as external
nv set vrf default router bgp neighbor 10.64.0.3 description 'spine-002 swp1'
nv set vrf default router bgp neighbor 10.64.0.3 bfd enable on
nv set vrf default router bgp neighbor 10.64.0.3 bfd detect-multiplier 3
nv set vrf default router bgp neighbor 10.64.0.3 bfd min-rx-interval 200
nv set vrf default router bgp neighbor 10.64.0.3 bfd min-tx-interval 200
nv set vrf default router bgp neighbor 10.64.0.3 address-family ipv4-unicast policy inbound prefix-list PLAN
nv set vrf default router bgp neighbor 10.64.0.3 address-family ipv4-unicast policy outbound prefix-list PLAN
nv set vrf default router bgp neighbor 10.64.0.3 address-family ipv4-unicast prefix-limits inbound maximum 1000

# QoS plan differs from NVIDIA's `qos roce` profile; explicit settings follow either way.
nv set qos roce mode lossless
nv set qos mapping default-global trust l3
nv set qos mapping default-global dscp 0,1,2,3,4,5,6,7,8,9,11,12,13,14,15,16,17,18,19,20,21,22,23,24,25,26,27,28,29,30,31,32,33,34,35,36,37,38,39,40,41,42,43,44,45,47,49,50,51,52,53,54,55,56,57,58,59,60,61,62,63 switch-priority 0
nv set qos mapping default-global dscp 10 switch-priority 1
nv set qos mapping default-global dscp 46 switch-priority 3
nv set qos mapping default-global dscp 48 switch-priority 6
nv set qos pfc default-global switch-priority 3
nv set qos pfc default-global tx enable
nv set qos pfc default-global rx enable
nv set qos traffic-pool default-lossy switch-priority 0,1,2,4,5,6,7
nv set qos traffic-pool roce-lossless switch-priority 3
nv set qos egress-queue-mapping default-global switch-priority 0 traffic-class 0
nv set qos egress-queue-mapping default-global switch-priority 1 traffic-class 1
nv set qos egress-queue-mapping default-global switch-priority 2 traffic-class 0
nv set qos egress-queue-mapping default-global switch-priority 3 traffic-class 3
nv set qos egress-queue-mapping default-global switch-priority 4 traffic-class 0
nv set qos egress-queue-mapping default-global switch-priority 5 traffic-class 0
nv set qos egress-queue-mapping default-global switch-priority 6 traffic-class 6
nv set qos egress-queue-mapping default-global switch-priority 7 traffic-class 0
nv set qos congestion-control default-global traffic-class 3 ecn enable
nv set qos congestion-control default-global traffic-class 3 min-threshold 150000
nv set qos congestion-control default-global traffic-class 3 max-threshold 1500000
nv set qos congestion-control default-global traffic-class 3 probability 100
nv set qos congestion-control default-global traffic-class 0 ecn disable
nv set qos egress-scheduler default-global traffic-class 6 mode strict
nv set qos egress-scheduler default-global traffic-class 0 mode dwrr
nv set qos egress-scheduler default-global traffic-class 0 bw-percent 25
nv set qos egress-scheduler default-global traffic-class 1 mode dwrr
nv set qos egress-scheduler default-global traffic-class 1 bw-percent 25
nv set qos egress-scheduler default-global traffic-class 3 mode dwrr
nv set qos egress-scheduler default-global traffic-class 3 bw-percent 50
nv set interface swp1 qos pfc-watchdog state enable
nv set interface swp2 qos pfc-watchdog state enable
nv set interface swp7 qos pfc-watchdog state enable
nv set interface swp8 qos pfc-watchdog state enable

nv config apply -y
