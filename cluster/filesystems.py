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
from cluster.spec import FileSystemPlan

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
    """The boot script that mounts the file system at `path` on every node: Lustre's
    `<server>@tcp:/<fs>` source (FSx: `<dns name>@tcp:/<mount name>`; Managed Lustre: its
    mount_point; AMLFS: `<MGS address>@tcp:/lustrefs`), with the options the providers' guides give
    (relatime, flock; _netdev so boot waits for the network). The Lustre client comes with the node
    image; without it the script says so in the boot log and leaves the path unmounted."""
    return f"""#!/bin/bash
# gpu-cluster: mount the cluster's shared Lustre file system (storage.filesystem).
set -u
if ! modprobe -n lustre 2>/dev/null; then
  echo "gpu-cluster: no Lustre client in this image; {path} is not mounted" >&2
  exit 0
fi
mkdir -p {path}
grep -q ' {path} lustre ' /etc/fstab || echo '{source} {path} lustre relatime,flock,_netdev 0 0' >> /etc/fstab
mountpoint -q {path} || mount {path}
"""
