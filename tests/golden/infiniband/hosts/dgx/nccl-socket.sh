#!/usr/bin/env bash
# NCCL's socket interface for pool dgx of stack golden-ib. NCCL bootstraps every job and
# sends its out-of-band traffic over TCP on the management network, so NCCL_SOCKET_IFNAME must name
# this host's management netdev exactly (`==`): a name that does not exist leaves NCCL with no socket.
# The netdev is the one that holds this host's management address from the addressing plan (the
# host end of its management leaf port's /31), so no renaming is needed on the host.
# The result goes to /etc/nccl.conf, which NCCL reads in every process (a job's own environment wins).
# Usage: nccl-socket.sh [HOSTNAME]   (default: hostname -s; NCCL_CONF_PATH names another file).
# Exit 2: not a node of this pool. Exit 3: the management netdev is not on this host.
set -euo pipefail
HOST="${1:-$(hostname -s)}"
CONF="${NCCL_CONF_PATH:-/etc/nccl.conf}"
case "$HOST" in
  dgx-node-001) ADDRESS=10.176.0.0 ;;
  dgx-node-002) ADDRESS=10.176.0.4 ;;
  *) echo "nccl-socket.sh: $HOST is not a node of pool dgx" >&2; exit 2 ;;
esac
NETDEV=$(ip -o -4 addr show to "$ADDRESS/32" | awk '{ print $2; exit }')
if [ -z "$NETDEV" ]; then
  echo "nccl-socket.sh: no netdev of $HOST holds its management address $ADDRESS; give the management port that address, or set node_pools[0].management_nics.interfaces to its netdev" >&2
  exit 3
fi
kept=$(grep -v '^NCCL_SOCKET_IFNAME=' "$CONF" 2>/dev/null || true)
next=$(mktemp "$CONF.XXXXXX")
{ if [ -n "$kept" ]; then printf '%s\n' "$kept"; fi; echo "NCCL_SOCKET_IFNAME==$NETDEV"; } > "$next"
chmod 0644 "$next"
mv "$next" "$CONF"
echo "nccl-socket.sh: $HOST: NCCL_SOCKET_IFNAME==$NETDEV in $CONF"
