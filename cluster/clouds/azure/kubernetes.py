"""What the Kueue export writes for AKS node pools beyond the common objects: nothing
(cluster.exports.kubernetes asks it)."""

from __future__ import annotations

from cluster.catalog import Instance

HOST_PATHS: dict[str, str] = {}  # the NCCL settings' host paths are where the image puts them
KUEUE_HEADER = ""


def pod_annotations(instance: Instance) -> dict[str, str]:
    return {}  # InfiniBand comes through NVIDIA's Network Operator
