"""The cloud cluster's shared Lustre file system: its size from the pools, and how nodes mount it.

Throughput scales with capacity on every provider (MB/s per TiB, the tier), so the file system is
the larger of the capacity asked for and the capacity the GPUs' throughput needs, rounded up to a
size the provider accepts (each cloud's `Lustre` in cluster/clouds/<name>/: its tiers, sizes and sources).
"""

from __future__ import annotations

from collections.abc import Iterator

from cluster import stackfile as sf
from cluster.clouds import cloud, round_up
from cluster.findings import Finding, schema
from cluster.spec import FileSystemPlan, HomePlan

GIB_PER_TIB = 1024


def plan(target: str, gpus: int, given: sf.SharedFileSystem) -> tuple[FileSystemPlan | None, list[Finding]]:
    """The file system for `gpus` GPUs as `given` asks, or the findings that say why not."""
    findings = list(_problems(target, given))
    if findings:
        return None, findings
    lustre = cloud(target).lustre
    tier = given.tier or max(lustre.tiers)
    needed_mbps = gpus * (given.mbps_per_gpu or 0)
    needed_gib = max((given.capacity_tib or 0) * GIB_PER_TIB, needed_mbps / tier * GIB_PER_TIB)
    size, largest = lustre.size(tier, needed_gib)
    if largest is not None and size > largest:
        return None, [schema("storage.filesystem", f"{gpus:,} GPUs at {given.mbps_per_gpu} MB/s need {size:,} GiB of "
                             f"{lustre.service} at {tier} MB/s per TiB; it holds at most {largest:,} GiB",
                             "ask less per GPU, a faster tier, or give several file systems yourself")]
    return FileSystemPlan(service=lustre.service, capacity_gib=size, tier=tier, mount=given.mount,
                          throughput_mbps=size * tier // GIB_PER_TIB, gpus=gpus,
                          mbps_per_gpu=given.mbps_per_gpu), []


def _problems(target: str, given: sf.SharedFileSystem) -> Iterator[Finding]:
    if given.mbps_per_gpu is None and given.capacity_tib is None:
        yield schema("storage.filesystem", "a file system needs a size: mbps_per_gpu, capacity_tib or both",
                     "set mbps_per_gpu (the read and write throughput a GPU's jobs need, e.g. 250)")
    tiers = cloud(target).lustre.tiers
    if given.tier is not None and given.tier not in tiers:
        yield schema("storage.filesystem.tier", f"{target} offers {', '.join(map(str, tiers))} MB/s per TiB, "
                     f"not {given.tier}", f"set tier to one of {', '.join(map(str, tiers))}")


def mount_script(source: str, path: str) -> str:
    """The boot script that mounts the Lustre file system `source` at `path` (boot_script)."""
    return boot_script((source, path), None)


def boot_script(lustre: tuple[str, str] | None, home: tuple[str, str, str] | None) -> str:
    """The boot script that mounts the shared file systems on every node: `lustre` (source, path),
    `home` (source, options, path), each when there is one.

    Lustre: `<server>@tcp:/<fs>` (FSx: `<dns name>@tcp:/<mount name>`; Managed Lustre: its
    mount_point; AMLFS: `<MGS address>@tcp:/lustrefs`) with the options the providers' guides give
    (relatime, flock; _netdev so boot waits for the network). The Lustre client comes with the node
    image; without it the script says so in the boot log and leaves the path unmounted.

    /home: NFS with the provider's options. The NFS client is installed when the image lacks it (as
    Cluster Toolkit's filestore module's install-nfs-client.sh does). Before the share covers the
    image's /home, what the image put there (the login user's authorized_keys) is copied onto the
    share without overwriting anything, so the first node seeds it and the login still works."""
    lines = ["#!/bin/bash", "# gpu-cluster: mount the cluster's shared file systems (storage.filesystem, storage.home).",
             "set -u"]
    if lustre is not None:
        source, path = lustre
        lines += [
            "if ! modprobe -n lustre 2>/dev/null; then",
            f'  echo "gpu-cluster: no Lustre client in this image; {path} is not mounted" >&2',
            "else",
            f"  mkdir -p {path}",
            f"  grep -q ' {path} lustre ' /etc/fstab || echo '{source} {path} lustre relatime,flock,_netdev 0 0' "
            ">> /etc/fstab",
            f"  mountpoint -q {path} || mount {path}",
            "fi",
        ]
    if home is not None:
        source, options, path = home
        stage = "/run/gpu-cluster-home"
        lines += [
            "if ! command -v mount.nfs >/dev/null 2>&1; then",
            "  if command -v apt-get >/dev/null 2>&1; then apt-get -qq update && apt-get -qq install -y nfs-common",
            "  elif command -v dnf >/dev/null 2>&1; then dnf -q install -y nfs-utils; fi",
            "fi",
            "if ! command -v mount.nfs >/dev/null 2>&1; then",
            f'  echo "gpu-cluster: no NFS client in this image; {path} is not mounted" >&2',
            f"elif ! mountpoint -q {path}; then",
            f"  mkdir -p {stage}",
            f"  if mount -t nfs -o {options} {source} {stage}; then",
            f"    cp -an {path}/. {stage}/",
            f"    umount {stage}",
            "  fi",
            f"  grep -q ' {path} nfs ' /etc/fstab || echo '{source} {path} nfs {options} 0 0' >> /etc/fstab",
            f"  mount {path}",
            "fi",
        ]
    return "\n".join(lines) + "\n"


HOME_MOUNT = "/home"


def plan_home(target: str, given: sf.HomeFileSystem) -> tuple[HomePlan | None, list[Finding]]:
    """The /home file system `given` asks for on `target`, or why not."""
    home = cloud(target).home
    service, default, smallest, largest, options = (home.service, home.default_gib, home.smallest_gib,
                                                    home.largest_gib, home.options)
    asked = given.capacity_gib or default
    size = round_up(asked, home.step_gib) if home.step_gib > 1 else asked
    if not smallest <= size <= largest:
        return None, [schema("storage.home.capacity_gib", f"{service} holds {smallest:,} to {largest:,} GiB, not "
                             f"{asked:,}", f"set capacity_gib between {smallest:,} and {largest:,}, or leave it out "
                             f"for {default:,}")]
    return HomePlan(service=service, capacity_gib=size, mount=HOME_MOUNT, options=options), []
