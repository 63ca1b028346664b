"""The cloud cluster's shared Lustre file system: its size from the pools, and how nodes mount it.

Throughput scales with capacity on every provider (MB/s per TiB, the tier), so the file system is
the larger of the capacity asked for and the capacity the GPUs' throughput needs, rounded up to a
size the provider accepts:
- AWS FSx for Lustre PERSISTENT_2 (SSD, 125 / 250 / 500 / 1000 MB/s/TiB): 1,200 GiB or a
  multiple of 2,400 GiB (FSx API reference, CreateFileSystem StorageCapacity, as pulumi-aws's
  LustreFileSystem.storage_capacity links it).
- Google Cloud Managed Lustre: per tier a minimum, a step and a maximum (cloud.google.com/managed-lustre/
  docs/performance-tiers: 1000 MB/s/TiB from 9,000 GiB in 9,000 GiB steps up to 1,530,000 GiB,
  then 72,000 GiB steps; 500: 18,000 / 18,000 / 3,060,000 / 144,000; 250: 36,000 / 36,000 /
  6,120,000 / 288,000; 125: 72,000 in 72,000 steps).
- Azure Managed Lustre (AMLFS-Durable-Premium-40 / 125 / 250 / 500): a minimum that is also the
  increment, 48 / 16 / 8 / 4 TiB (Azure/ai-infrastructure-on-azure storage_references/aks/
  shared_storage, the SKU table it quotes from learn.microsoft.com azure-managed-lustre).
"""

from __future__ import annotations

import math
from collections.abc import Iterator

from cluster import stackfile as sf
from cluster.findings import Finding, schema
from cluster.spec import FileSystemPlan, HomePlan

GIB_PER_TIB = 1024
TIERS = {"aws": (125, 250, 500, 1000), "gcp": (125, 250, 500, 1000), "azure": (40, 125, 250, 500)}
SERVICE = {"aws": "FSx for Lustre (PERSISTENT_2)", "gcp": "Google Cloud Managed Lustre",
           "azure": "Azure Managed Lustre"}
# GCP: tier -> (minimum GiB, step GiB, where the step grows, the larger step, maximum GiB)
GCP_STEPS = {1000: (9_000, 9_000, 1_530_000, 72_000, 10_008_000),
             500: (18_000, 18_000, 3_060_000, 144_000, 20_016_000),
             250: (36_000, 36_000, 6_120_000, 288_000, 40_032_000),
             125: (72_000, 72_000, 12_240_000, 72_000, 12_240_000)}
# Azure: tier -> (increment = minimum TiB, maximum TiB)
AZURE_STEPS = {40: (48, 12_800), 125: (16, 4_096), 250: (8, 2_048), 500: (4, 1_024)}
AWS_FIRST_GIB, AWS_STEP_GIB = 1_200, 2_400


def _round_up(value: float, step: int) -> int:
    return max(step, math.ceil(value / step) * step)


def size_gib(target: str, tier: int, needed_gib: float) -> tuple[int, int | None]:
    """(the provider's size for at least `needed_gib`, its largest size or None)."""
    if target == "aws":
        return (AWS_FIRST_GIB if needed_gib <= AWS_FIRST_GIB else _round_up(needed_gib, AWS_STEP_GIB)), None
    if target == "gcp":
        minimum, step, threshold, large_step, largest = GCP_STEPS[tier]
        size = max(minimum, _round_up(needed_gib, step))
        if size > threshold:
            size = threshold + _round_up(needed_gib - threshold, large_step)
        return size, largest
    increment, largest_tib = AZURE_STEPS[tier]
    return _round_up(needed_gib / GIB_PER_TIB, increment) * GIB_PER_TIB, largest_tib * GIB_PER_TIB


def plan(target: str, gpus: int, given: sf.SharedFileSystem) -> tuple[FileSystemPlan | None, list[Finding]]:
    """The file system for `gpus` GPUs as `given` asks, or the findings that say why not."""
    findings = list(_problems(target, given))
    if findings:
        return None, findings
    tier = given.tier or max(TIERS[target])
    needed_mbps = gpus * (given.mbps_per_gpu or 0)
    needed_gib = max((given.capacity_tib or 0) * GIB_PER_TIB, needed_mbps / tier * GIB_PER_TIB)
    size, largest = size_gib(target, tier, needed_gib)
    if largest is not None and size > largest:
        return None, [schema("storage.filesystem", f"{gpus:,} GPUs at {given.mbps_per_gpu} MB/s need {size:,} GiB of "
                             f"{SERVICE[target]} at {tier} MB/s per TiB; it holds at most {largest:,} GiB",
                             "ask less per GPU, a faster tier, or give several file systems yourself")]
    return FileSystemPlan(service=SERVICE[target], capacity_gib=size, tier=tier, mount=given.mount,
                          throughput_mbps=size * tier // GIB_PER_TIB, gpus=gpus,
                          mbps_per_gpu=given.mbps_per_gpu), []


def _problems(target: str, given: sf.SharedFileSystem) -> Iterator[Finding]:
    if given.mbps_per_gpu is None and given.capacity_tib is None:
        yield schema("storage.filesystem", "a file system needs a size: mbps_per_gpu, capacity_tib or both",
                     "set mbps_per_gpu (the read and write throughput a GPU's jobs need, e.g. 250)")
    if given.tier is not None and given.tier not in TIERS[target]:
        yield schema("storage.filesystem.tier", f"{target} offers {', '.join(map(str, TIERS[target]))} MB/s per TiB, "
                     f"not {given.tier}", f"set tier to one of {', '.join(map(str, TIERS[target]))}")


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
# Per provider: the service, its default size, its smallest and largest sizes (GiB), the NFS mount options.
# - AWS FSx for OpenZFS, SINGLE_AZ_HA_2 at 320 MB/s, 512 GiB by default, as awsome-distributed-training's
#   ParallelCluster prerequisites give /home (1.architectures/2.aws-parallelcluster/templates/
#   parallelcluster-prerequisites.yaml at 0e68c545: OpenZFSFileSystem, HomeCapacity 512, HomeThroughput 320);
#   64 to 524,288 GiB (FSx API CreateFileSystem StorageCapacity for OPENZFS); NFS 4.1 (FSx for OpenZFS
#   User Guide, "Mounting file systems": `mount -t nfs -o nfsvers=4.1`).
# - GCP Filestore Basic SSD, 2,560 GiB, as Cluster Toolkit's a3-ultragpu-8g a3ultra-vm.yaml homefs
#   (filestore_tier BASIC_SSD, size_gb 2560, local_mount /home, at 1047080375af); Basic SSD holds 2.5 to
#   63.9 TiB (cloud.google.com/filestore/docs/service-tiers); the filestore module's mount options
#   `defaults,_netdev`.
# - Azure NetApp Files (Premium), as CycleCloud Workspace for Slurm's shared file system (Azure/
#   cyclecloud-slurm-workspace bicep/anf.bicep: one capacity pool and one NFSv3 volume in a delegated
#   subnet, mount options rw,hard,rsize=262144,wsize=262144,vers=3,tcp,_netdev,nconnect=8); a capacity
#   pool is 1 TiB at least, in 1 TiB steps, a regular volume 100 TiB at most (learn.microsoft.com
#   azure-netapp-files-resource-limits).
HOME = {
    "aws": ("FSx for OpenZFS (SINGLE_AZ_HA_2, 320 MB/s)", 512, 64, 524_288, "nfsvers=4.1,_netdev"),
    "gcp": ("Filestore (Basic SSD)", 2_560, 2_560, 65_433, "defaults,_netdev"),
    "azure": ("Azure NetApp Files (Premium)", 1_024, 1_024, 102_400,
              "rw,hard,rsize=262144,wsize=262144,vers=3,tcp,_netdev,nconnect=8"),
}
AWS_HOME_THROUGHPUT = 320  # MB/s (awsome-distributed-training's HomeThroughput)
ANF_STEP_GIB = 1_024  # Azure NetApp Files capacity pools grow in 1 TiB steps


def plan_home(target: str, given: sf.HomeFileSystem) -> tuple[HomePlan | None, list[Finding]]:
    """The /home file system `given` asks for on `target`, or why not."""
    service, default, smallest, largest, options = HOME[target]
    asked = given.capacity_gib or default
    size = _round_up(asked, ANF_STEP_GIB) if target == "azure" else asked
    if not smallest <= size <= largest:
        return None, [schema("storage.home.capacity_gib", f"{service} holds {smallest:,} to {largest:,} GiB, not "
                             f"{asked:,}", f"set capacity_gib between {smallest:,} and {largest:,}, or leave it out "
                             f"for {default:,}")]
    return HomePlan(service=service, capacity_gib=size, mount=HOME_MOUNT, options=options), []
