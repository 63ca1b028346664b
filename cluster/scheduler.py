"""The managed Kubernetes a cloud stack's GPU nodes join (`scheduler`): which kind each target
takes, what the node pools are called, and the labels and taints they carry, which the exported
Kueue ResourceFlavors select and tolerate. Pure data and names; the components build the pools
(components/<target>/node_pool.py), the export writes the Kueue objects (cluster/exports/kubernetes.py).
"""

from __future__ import annotations

from cluster.clouds import Cloud, clouds
from cluster.spec import ClusterSpec, PoolSpec

# Our label on every node of a pool: the Kueue flavor of the pool selects it.
POOL_LABEL = "gpu-cluster.io/pool"
# GPU nodes repel pods that do not ask for GPUs. GKE taints GPU node pools itself with
# nvidia.com/gpu=present:NoSchedule ("About GPUs in GKE"); on EKS and AKS the pool carries the
# same taint, so one toleration in every flavor fits all three.
GPU_TAINT_KEY = "nvidia.com/gpu"
GPU_TAINT_VALUE = "present"


def managed(kind: str) -> Cloud:
    """The cloud whose managed Kubernetes `kind` is (its service and pool words are its facts)."""
    return next(entry for entry in clouds().values() if entry.kubernetes == kind)


def node_pool_name(kind: str, cluster: str, pool: str) -> str:
    """A node pool's name in the managed cluster, from the oldest names of the cluster and pool, as
    that Kubernetes names it (Managed.pool_name)."""
    return managed(kind).managed.pool_name(cluster, pool)


def pool_name(spec: ClusterSpec, pool: PoolSpec) -> str:
    """The node pool name of `pool` under the stack's scheduler."""
    return node_pool_name(spec.scheduler.kind, spec.first_name, pool.first_name)


def node_labels(pool: PoolSpec) -> dict[str, str]:
    """The Kubernetes labels the stack sets on every node of `pool`."""
    return {POOL_LABEL: pool.name}
