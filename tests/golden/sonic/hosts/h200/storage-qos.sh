#!/usr/bin/env bash
# Storage NIC QoS for pool h200 of stack golden-sonic: the host side of the storage network's QoS plan,
# whose switch side the storage switches were rendered from:
#   management DSCP  0 -> priority 0
#   storage    DSCP 10 -> priority 1 (ECN)
#   cnp        DSCP 48 -> priority 6 (strict)
# Storage RDMA (GPUDirect Storage, NVMe-oF over RoCE) is sent with the ToS below through RDMA-CM and
# every QP of the storage RDMA devices; the NICs trust DSCP and queue each class as the switches do.
# Usage: storage-qos.sh [HOSTNAME]   (default: hostname -s), after the storage ports are up
# (hosts/h200/netplan/). Safe to run again; settings do not survive a reboot.
# Exit 3: a storage port's netdev or RDMA device is not on this host (the message names the stack key).
# Exit 4: a NIC QoS setting failed: storage RDMA does not get its class.
set -euo pipefail
HOST="${1:-$(hostname -s)}"
SYSFS="${QOS_SYSFS:-/sys}"  # the sysfs root; tests point it at a fake tree

# --- Storage ports: netplan's netdev names (node_pools[0].storage_nics.interfaces, or pinned by netnames.sh),
# --- and each one's RDMA device, read from $SYSFS/class/infiniband/<dev>/device/net/ (the layout qos.sh and netnames.sh read too).
STORAGE=(stor0)
STORAGE_RDMA=()
count() { echo "$#"; }
fail_port() {
  echo "storage-qos.sh: storage port $1: $2" >&2
  exit 3
}
for port in "${!STORAGE[@]}"; do
  dev="${STORAGE[$port]}"
  [ -e "$SYSFS/class/net/$dev" ] || fail_port "$port" "netdev $dev not found in $SYSFS/class/net: run hosts/h200/netnames.sh, or set node_pools[0].storage_nics.interfaces"
  found=()
  for net in "$SYSFS"/class/infiniband/*/device/net/"$dev"; do
    if [ -e "$net" ]; then ib="${net%/device/net/*}"; found+=("${ib##*/}"); fi
  done
  [ "$(count "${found[@]}")" -eq 1 ] || fail_port "$port" "netdev $dev has $(count "${found[@]}") RDMA devices (${found[*]:-none}); set node_pools[0].storage_nics.devices"
  STORAGE_RDMA+=("${found[0]}")
done
echo "storage-qos.sh: storage ports ${STORAGE[*]} on RDMA devices ${STORAGE_RDMA[*]}"

# --- QoS runs in a subshell of its own: its first failure ends the subshell, not the script.
set +e
(
set -e
# --- NIC QoS: trust DSCP, DSCP -> priority, PFC, ETS. mlnx_qos (MLNX_OFED / DOCA) when present,
# --- else the same settings with iproute2 dcb. mlnx_qos rejects --trust together with --dscp2prio.
apply_mlnx_qos() {
  local dev="$1"
  mlnx_qos -i "$dev" --trust dscp
  mlnx_qos -i "$dev" --dscp2prio set,0,0
  mlnx_qos -i "$dev" --dscp2prio set,1,0
  mlnx_qos -i "$dev" --dscp2prio set,2,0
  mlnx_qos -i "$dev" --dscp2prio set,3,0
  mlnx_qos -i "$dev" --dscp2prio set,4,0
  mlnx_qos -i "$dev" --dscp2prio set,5,0
  mlnx_qos -i "$dev" --dscp2prio set,6,0
  mlnx_qos -i "$dev" --dscp2prio set,7,0
  mlnx_qos -i "$dev" --dscp2prio set,8,0
  mlnx_qos -i "$dev" --dscp2prio set,9,0
  mlnx_qos -i "$dev" --dscp2prio set,10,1
  mlnx_qos -i "$dev" --dscp2prio set,11,0
  mlnx_qos -i "$dev" --dscp2prio set,12,0
  mlnx_qos -i "$dev" --dscp2prio set,13,0
  mlnx_qos -i "$dev" --dscp2prio set,14,0
  mlnx_qos -i "$dev" --dscp2prio set,15,0
  mlnx_qos -i "$dev" --dscp2prio set,16,0
  mlnx_qos -i "$dev" --dscp2prio set,17,0
  mlnx_qos -i "$dev" --dscp2prio set,18,0
  mlnx_qos -i "$dev" --dscp2prio set,19,0
  mlnx_qos -i "$dev" --dscp2prio set,20,0
  mlnx_qos -i "$dev" --dscp2prio set,21,0
  mlnx_qos -i "$dev" --dscp2prio set,22,0
  mlnx_qos -i "$dev" --dscp2prio set,23,0
  mlnx_qos -i "$dev" --dscp2prio set,24,0
  mlnx_qos -i "$dev" --dscp2prio set,25,0
  mlnx_qos -i "$dev" --dscp2prio set,26,0
  mlnx_qos -i "$dev" --dscp2prio set,27,0
  mlnx_qos -i "$dev" --dscp2prio set,28,0
  mlnx_qos -i "$dev" --dscp2prio set,29,0
  mlnx_qos -i "$dev" --dscp2prio set,30,0
  mlnx_qos -i "$dev" --dscp2prio set,31,0
  mlnx_qos -i "$dev" --dscp2prio set,32,0
  mlnx_qos -i "$dev" --dscp2prio set,33,0
  mlnx_qos -i "$dev" --dscp2prio set,34,0
  mlnx_qos -i "$dev" --dscp2prio set,35,0
  mlnx_qos -i "$dev" --dscp2prio set,36,0
  mlnx_qos -i "$dev" --dscp2prio set,37,0
  mlnx_qos -i "$dev" --dscp2prio set,38,0
  mlnx_qos -i "$dev" --dscp2prio set,39,0
  mlnx_qos -i "$dev" --dscp2prio set,40,0
  mlnx_qos -i "$dev" --dscp2prio set,41,0
  mlnx_qos -i "$dev" --dscp2prio set,42,0
  mlnx_qos -i "$dev" --dscp2prio set,43,0
  mlnx_qos -i "$dev" --dscp2prio set,44,0
  mlnx_qos -i "$dev" --dscp2prio set,45,0
  mlnx_qos -i "$dev" --dscp2prio set,46,0
  mlnx_qos -i "$dev" --dscp2prio set,47,0
  mlnx_qos -i "$dev" --dscp2prio set,48,6
  mlnx_qos -i "$dev" --dscp2prio set,49,0
  mlnx_qos -i "$dev" --dscp2prio set,50,0
  mlnx_qos -i "$dev" --dscp2prio set,51,0
  mlnx_qos -i "$dev" --dscp2prio set,52,0
  mlnx_qos -i "$dev" --dscp2prio set,53,0
  mlnx_qos -i "$dev" --dscp2prio set,54,0
  mlnx_qos -i "$dev" --dscp2prio set,55,0
  mlnx_qos -i "$dev" --dscp2prio set,56,0
  mlnx_qos -i "$dev" --dscp2prio set,57,0
  mlnx_qos -i "$dev" --dscp2prio set,58,0
  mlnx_qos -i "$dev" --dscp2prio set,59,0
  mlnx_qos -i "$dev" --dscp2prio set,60,0
  mlnx_qos -i "$dev" --dscp2prio set,61,0
  mlnx_qos -i "$dev" --dscp2prio set,62,0
  mlnx_qos -i "$dev" --dscp2prio set,63,0
  mlnx_qos -i "$dev" --pfc 0,0,0,0,0,0,0,0
  mlnx_qos -i "$dev" --prio_tc 0,1,2,3,4,5,6,7 --tsa ets,ets,ets,ets,ets,ets,strict,ets --tcbw 50,50,0,0,0,0,0,0
}

apply_dcb() {
  local dev="$1"
  # dscp-prio APP entries switch mlx5 to DSCP trust; 'replace' keeps one priority per DSCP; all 64
  # DSCPs are written, so none is left to the default (DSCP >> 3 puts 24-31 on priority 3)
  dcb app replace dev "$dev" dscp-prio 0:0 1:0 2:0 3:0 4:0 5:0 6:0 7:0 8:0 9:0 10:1 11:0 12:0 13:0 14:0 15:0 16:0 17:0 18:0 19:0 20:0 21:0 22:0 23:0 24:0 25:0 26:0 27:0 28:0 29:0 30:0 31:0 32:0 33:0 34:0 35:0 36:0 37:0 38:0 39:0 40:0 41:0 42:0 43:0 44:0 45:0 46:0 47:0 48:6 49:0 50:0 51:0 52:0 53:0 54:0 55:0 56:0 57:0 58:0 59:0 60:0 61:0 62:0 63:0
  dcb pfc set dev "$dev" prio-pfc all:off
  dcb ets set dev "$dev" prio-tc 0:0 1:1 2:2 3:3 4:4 5:5 6:6 7:7 tc-tsa all:ets 6:strict tc-bw all:0 0:50 1:50
}

for dev in "${STORAGE[@]}"; do
  if command -v mlnx_qos >/dev/null 2>&1; then
    apply_mlnx_qos "$dev"
  else
    apply_dcb "$dev"
  fi
done

# --- RoCE: ToS 42 = DSCP 10 << 2 | ECT(0) for RDMA-CM and all QPs, the storage traffic class;
# --- DCQCN on priority 1; CNPs sent with DSCP 48 on priority 6. The sysfs knobs are MLNX_OFED's; skipped where absent.
sysctl -qw net.ipv4.tcp_ecn=1
cma_roce_tos -d "${STORAGE_RDMA[0]}" -t 42 || echo "storage-qos.sh: cma_roce_tos failed on ${STORAGE_RDMA[0]}" >&2
set_knob() {
  if [ -e "$1" ]; then echo "$2" > "$1"; else echo "storage-qos.sh: no $1 (not MLNX_OFED?), skipped" >&2; fi
}
set_knob "$SYSFS/class/infiniband/${STORAGE_RDMA[0]}/tc/1/traffic_class" 42
set_knob "$SYSFS/class/net/${STORAGE[0]}/ecn/roce_np/enable/1" 1
set_knob "$SYSFS/class/net/${STORAGE[0]}/ecn/roce_rp/enable/1" 1
set_knob "$SYSFS/class/net/${STORAGE[0]}/ecn/roce_np/cnp_dscp" 48
set_knob "$SYSFS/class/net/${STORAGE[0]}/ecn/roce_np/cnp_802p_prio" 6

# --- tc for kernel traffic (TCP/UDP sockets; RoCE QPs bypass the qdisc). clsact egress sets the skb
# --- priority from the DSCP (u32 matches the ToS byte, so DSCP d is `dsfield <d<<2> 0xfc`); mqprio
# --- maps skb priority p to traffic class p, each class on its own tx queues, so the root stays
# --- multi-queue. Bandwidth shares and strict priority are the NIC's ETS, set above. `hw 1` without
# --- `queues` lets the driver lay out its queues (tc-mqprio(8)); a device without mqprio offload gets
# --- an even split of its tx queues (`hw 0`), and one with fewer than 8 keeps its root.
mqprio_queues() {
  local queues=("$SYSFS/class/net/$1/queues/"tx-*) per class
  MQPRIO_QUEUES=()
  [ -e "${queues[0]}" ] || return 0
  per=$(( $(count "${queues[@]}") / 8 ))
  [ "$per" -ge 1 ] || return 0
  for class in 0 1 2 3 4 5 6 7; do MQPRIO_QUEUES+=("${per}@$(( class * per ))"); done
}
for dev in "${STORAGE[@]}"; do
  if ! tc qdisc replace dev "$dev" root handle 1: mqprio num_tc 8 map 0 1 2 3 4 5 6 7 0 0 0 0 0 0 0 0 hw 1 2>/dev/null; then
    mqprio_queues "$dev"
    if [ "$(count "${MQPRIO_QUEUES[@]}")" -eq 8 ]; then
      tc qdisc replace dev "$dev" root handle 1: mqprio num_tc 8 map 0 1 2 3 4 5 6 7 0 0 0 0 0 0 0 0 queues "${MQPRIO_QUEUES[@]}" hw 0
    else
      echo "storage-qos.sh: $dev has fewer than 8 tx queues; its root qdisc is left as it is" >&2
    fi
  fi
  tc qdisc del dev "$dev" clsact 2>/dev/null || true
  tc qdisc add dev "$dev" clsact
  tc filter add dev "$dev" egress protocol ip prio 11 u32 match ip dsfield 0x28 0xfc action skbedit priority 1
  tc filter add dev "$dev" egress protocol ip prio 16 u32 match ip dsfield 0xc0 0xfc action skbedit priority 6
done

# --- End of QoS
)
qos_status=$?
set -e
if [ "$qos_status" -ne 0 ]; then
  echo "storage-qos.sh: ${HOST}: storage QoS FAILED (exit $qos_status, see above): storage RDMA is not on its class" >&2
  exit 4
fi
echo "storage-qos.sh: ${HOST}: storage QoS applied on 1 ports"
