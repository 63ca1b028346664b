#!/usr/bin/env bash
# spine-001: local accounts. SONiC keeps users in /etc/passwd, not in CONFIG_DB: run this as root
# on the switch (ZTP's provisioning-script plugin, or over SSH) with the crypt(3) SHA-512 hash of
# gpu-cluster:switch_password in the environment:
#   GPU_CLUSTER_SWITCH_PASSWORD_HASH="$(openssl passwd -6 "$GPU_CLUSTER_SWITCH_PASSWORD")" bash users.sh
set -euo pipefail  # stops before any account changes when the hash is missing
hash="${GPU_CLUSTER_SWITCH_PASSWORD_HASH}"
account() {  # name, supplementary groups (none: read-only)
  id -u "$1" >/dev/null 2>&1 || useradd --create-home --shell /bin/bash "$1"
  usermod --password "$hash" "$1"
  if [ -n "$2" ]; then usermod --append --groups "$2" "$1"; fi
}
account admin "sudo,docker"
