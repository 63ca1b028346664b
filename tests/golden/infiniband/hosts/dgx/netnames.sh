#!/usr/bin/env bash
# Pins the netdev names of a host of pool dgx (stack golden-ib) to its NICs by MAC address:
# mgmt0, mgmt1, stor0, stor1. These are the names cabling.csv's a_name, the switches' port descriptions and
# verify give the host's ports.
# Management and storage ports: in a netplan file that netplan merges with hosts/dgx/netplan/<host>.yaml.
# Run it once on the installed host (an installer late-command), then `netplan apply` or reboot.
# Management port i: the netdev holding its planned address, which the DHCP server (provisioning)
# gave it when the host was installed over the network.
# Storage port i: the netdev of RDMA device node_pools[0].storage_nics.devices[i], read from sysfs
# as qos.sh reads the rails'.
# Usage: netnames.sh [HOSTNAME]   (default: hostname -s; NETPLAN_DIR names another folder than /etc/netplan)
# Exit 2: not a node of this pool. Exit 3: a port's netdev is not on this host (the message names the stack key).
set -euo pipefail
HOST="${1:-$(hostname -s)}"
SYSFS="${NETNAMES_SYSFS:-/sys}"  # the sysfs root; tests point it at a fake tree
OUT="${NETPLAN_DIR:-/etc/netplan}/59-gpu-cluster-names.yaml"
case "$HOST" in
  dgx-node-001) MGMT_ADDRESSES=(10.176.0.0 10.176.0.2) ;;
  dgx-node-002) MGMT_ADDRESSES=(10.176.0.4 10.176.0.6) ;;
  *) echo "netnames.sh: $HOST is not a node of pool dgx" >&2; exit 2 ;;
esac
MGMT_NAMES=(mgmt0 mgmt1)
STORAGE_NAMES=(stor0 stor1)
STORAGE_RDMA=()
count() { echo "$#"; }  # an array's length, written so the template engine reads no comment in it
fail() {
  echo "netnames.sh: $HOST: $1" >&2
  exit 3
}
mac_of() {
  cat "$SYSFS/class/net/$1/address"
}
lines=("network:" "  version: 2" "  ethernets:")
pin() {
  lines+=("    $1:" "      match:" "        macaddress: \"$(mac_of "$2")\"" "      set-name: $1")
  echo "netnames.sh: $HOST: $2 is $1"
}
for i in "${!MGMT_NAMES[@]}"; do
  address="${MGMT_ADDRESSES[$i]}"
  dev=$(ip -o -4 addr show to "$address/32" | awk '{ print $2; exit }')
  [ -n "$dev" ] || fail "no netdev holds management address $address (${MGMT_NAMES[$i]}): install the host over the network (DHCP gives that address), or set node_pools[0].management_nics.interfaces"
  pin "${MGMT_NAMES[$i]}" "$dev"
done
for i in "${!STORAGE_NAMES[@]}"; do
  [ "$i" -lt "$(count "${STORAGE_RDMA[@]}")" ] || fail "storage port $i (${STORAGE_NAMES[$i]}) has no RDMA device to be found by: set node_pools[0].storage_nics.devices (or storage_nics.interfaces)"
  rdma="${STORAGE_RDMA[$i]}"
  found=()
  for net in "$SYSFS/class/infiniband/$rdma/device/net/"*; do
    if [ -e "$net" ]; then found+=("${net##*/}"); fi
  done
  [ "$(count "${found[@]}")" -eq 1 ] || fail "RDMA device $rdma (node_pools[0].storage_nics.devices[$i]) has $(count "${found[@]}") netdevs (${found[*]:-none}); set node_pools[0].storage_nics.interfaces"
  pin "${STORAGE_NAMES[$i]}" "${found[0]}"
done
next=$(mktemp "$OUT.XXXXXX")
printf '%s\n' "${lines[@]}" > "$next"
chmod 0600 "$next"
mv "$next" "$OUT"
echo "netnames.sh: $HOST: wrote $OUT"
