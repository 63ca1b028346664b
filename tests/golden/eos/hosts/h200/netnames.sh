#!/usr/bin/env bash
# Pins the netdev names of a host of pool h200 (stack golden-eos) to its NICs by MAC address:
# mgmt0, stor0, rail0, rail1. These are the names cabling.csv's a_name, the switches' port descriptions and
# verify give the host's ports.
# Management and storage ports: in a netplan file that netplan merges with hosts/h200/netplan/<host>.yaml.
# Rails: a systemd .link file each, which renames the netdev when it appears and configures nothing:
# qos.sh, not systemd-networkd, configures a rail (a netplan entry would hand it to networkd).
# Run it once on the installed host (an installer late-command), then reboot (udev names a netdev when it appears).
# Management port i: the netdev holding its planned address, which the DHCP server (provisioning)
# gave it when the host was installed over the network.
# Storage port i: the netdev of RDMA device node_pools[0].storage_nics.devices[i], read from sysfs
# as qos.sh reads the rails'.
# Rail r: the netdev of its RDMA device (RAIL_RDMA[r]), read from sysfs exactly as qos.sh reads it, so
# qos.sh finds the renamed netdev by the same device; NCCL names RDMA devices, which keep their names.
# Usage: netnames.sh [HOSTNAME]   (default: hostname -s; NETPLAN_DIR names another folder than /etc/netplan,
# LINK_DIR another than /etc/systemd/network)
# Exit 2: not a node of this pool. Exit 3: a port's netdev is not on this host (the message names the stack key).
set -euo pipefail
HOST="${1:-$(hostname -s)}"
SYSFS="${NETNAMES_SYSFS:-/sys}"  # the sysfs root; tests point it at a fake tree
OUT="${NETPLAN_DIR:-/etc/netplan}/59-gpu-cluster-names.yaml"
LINK_DIR="${LINK_DIR:-/etc/systemd/network}"
case "$HOST" in
  h200-node-001) MGMT_ADDRESSES=(10.176.0.0) ;;
  h200-node-002) MGMT_ADDRESSES=(10.176.0.2) ;;
  *) echo "netnames.sh: $HOST is not a node of pool h200" >&2; exit 2 ;;
esac
MGMT_NAMES=(mgmt0)
STORAGE_NAMES=(stor0)
STORAGE_RDMA=()
RAIL_NAMES=(rail0 rail1)
RAIL_RDMA=(mlx5_0 mlx5_1)
RAIL_MACS=()
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
for i in "${!RAIL_NAMES[@]}"; do
  rdma="${RAIL_RDMA[$i]}"
  [ -d "$SYSFS/class/infiniband/$rdma" ] || fail "RDMA device $rdma of rail $i (${RAIL_NAMES[$i]}) not found in $SYSFS/class/infiniband; set node_pools[0].fabric_nics.devices to this host's devices in rail order"
  found=()
  for net in "$SYSFS/class/infiniband/$rdma/device/net/"*; do
    if [ -e "$net" ]; then found+=("${net##*/}"); fi
  done
  if [ "$(count "${found[@]}")" -ne 1 ] && [ -r "$SYSFS/class/infiniband/$rdma/ports/1/gid_attrs/ndevs/0" ]; then
    found=("$(cat "$SYSFS/class/infiniband/$rdma/ports/1/gid_attrs/ndevs/0")")
  fi
  [ "$(count "${found[@]}")" -eq 1 ] || fail "RDMA device $rdma of rail $i has $(count "${found[@]}") netdevs (${found[*]:-none}); set node_pools[0].fabric_nics.interfaces"
  RAIL_MACS+=("$(mac_of "${found[0]}")")
  echo "netnames.sh: $HOST: ${found[0]} is ${RAIL_NAMES[$i]}"
done
# systemd.link(5): the first .link file (in name order) whose [Match] fits names the device
for i in "${!RAIL_NAMES[@]}"; do
  link="$LINK_DIR/10-gpu-cluster-${RAIL_NAMES[$i]}.link"
  next=$(mktemp "$link.XXXXXX")
  printf '%s\n' "# netnames.sh: rail $i of pool h200, RDMA device ${RAIL_RDMA[$i]}" "[Match]" \
    "PermanentMACAddress=${RAIL_MACS[$i]}" "" "[Link]" "Name=${RAIL_NAMES[$i]}" > "$next"
  chmod 0644 "$next"
  mv "$next" "$link"
  echo "netnames.sh: $HOST: wrote $link"
done
next=$(mktemp "$OUT.XXXXXX")
printf '%s\n' "${lines[@]}" > "$next"
chmod 0600 "$next"
mv "$next" "$OUT"
echo "netnames.sh: $HOST: wrote $OUT"
