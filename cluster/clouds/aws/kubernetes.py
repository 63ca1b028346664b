"""What the Kueue export writes for EKS node groups beyond the common objects: nothing
(cluster.exports.kubernetes asks it)."""

from __future__ import annotations

from cluster.catalog import Instance

HOST_PATHS: dict[str, str] = {}  # the NCCL settings' host paths are where the image puts them
KUEUE_HEADER = ""


def pod_annotations(instance: Instance) -> dict[str, str]:
    return {}  # the EFA interfaces come as device plugin resources
