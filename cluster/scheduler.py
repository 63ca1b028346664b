"""The managed Kubernetes a cloud stack's GPU nodes join (`scheduler`): which kind each target
takes, what the node pools are called, and the labels and taints they carry, which the exported
Kueue ResourceFlavors select and tolerate. Pure data and names; the components build the pools
(components/<target>/node_pool.py), the export writes the Kueue objects (cluster/exports/kubernetes.py).
"""

from __future__ import annotations

import re

from cluster.clouds import Cloud, clouds
from cluster.spec import ClusterSpec, PoolSpec

# Our label on every node of a pool: the Kueue flavor of the pool selects it.
POOL_LABEL = "gpu-cluster.io/pool"
# GPU nodes repel pods that do not ask for GPUs. GKE taints GPU node pools itself with
# nvidia.com/gpu=present:NoSchedule ("About GPUs in GKE"); on EKS and AKS the pool carries the
# same taint, so one toleration in every flavor fits all three.
GPU_TAINT_KEY = "nvidia.com/gpu"
GPU_TAINT_VALUE = "present"
# Name limits: EKS node group 1-63 (CreateNodegroup nodegroupName), GKE node pool 1-40 lower-case
# (gcloud container node-pools create), AKS Linux agent pool 1-12 lower-case letters and digits,
# starting with a letter (AKS "Create node pools": "Linux node pools ... length must be between 1
# and 12 characters").
NAME_LIMIT = {"eks": 63, "gke": 40}
AKS_NAME = re.compile(r"^[a-z][a-z0-9]{0,11}$")
# A GKE cluster's name: 1-40 lower-case letters, digits and hyphens, a letter first, no hyphen last
# (gcloud container clusters create NAME).
GKE_CLUSTER_NAME = re.compile(r"^[a-z](?:[a-z0-9-]{0,38}[a-z0-9])?$")
# scheduler.create: the control plane's version when the stack file gives none: the 1.35 minor on the
# REGULAR channel, as Cluster Toolkit's gke-a3-ultragpu blueprint (examples/gke-a3-ultragpu/gke-a3-ultragpu.yaml
# at 1047080375af: version_prefix "1.35.", release_channel REGULAR).
GKE_DEFAULT_VERSION = "1.35"
GKE_RELEASE_CHANNEL = "REGULAR"


def managed(kind: str) -> Cloud:
    """The cloud whose managed Kubernetes `kind` is (its service and pool words are its facts)."""
    return next(entry for entry in clouds().values() if entry.kubernetes == kind)


def node_pool_name(kind: str, cluster: str, pool: str) -> str:
    """A node pool's name in the managed cluster, from the oldest names of the cluster and pool:
    `<cluster>-<pool>` on EKS and GKE (a shared cluster holds other stacks' pools), the pool's name
    without hyphens on AKS (12 letters and digits at most). Oldest names, since the provider cannot
    rename a node pool in place."""
    return pool.replace("-", "") if kind == "aks" else f"{cluster}-{pool}"


def pool_name(spec: ClusterSpec, pool: PoolSpec) -> str:
    """The node pool name of `pool` under the stack's scheduler."""
    return node_pool_name(spec.scheduler.kind, spec.first_name, pool.first_name)


def node_labels(pool: PoolSpec) -> dict[str, str]:
    """The Kubernetes labels the stack sets on every node of `pool`."""
    return {POOL_LABEL: pool.name}



# scheduler.create on eks: the control plane's version when the stack file gives none: 1.35, in EKS standard
# support (Amazon EKS User Guide, "Understand the Kubernetes version lifecycle on EKS": a minor is in standard
# support for 14 months, and "we recommend that you create your cluster with the latest available Kubernetes
# version"; the Pulumi AWS registry's aws.eks.Cluster example creates version "1.35"). EKS takes a minor only.
EKS_DEFAULT_VERSION = "1.35"
MINOR_VERSION = re.compile(r"^1\.[0-9]{2}$")
# AKS takes a minor or a patch (ManagedCluster kubernetesVersion: "both patch version <major.minor.patch> and
# <major.minor> are supported"); never a GKE build suffix.
AKS_VERSION = re.compile(r"^1\.[0-9]{2}(\.[0-9]{1,3})?$")
# An AKS cluster's name: 1-63 letters, digits, underscores and hyphens, a letter or digit first and last
# (az aks create --name; Azure resource naming rules, Microsoft.ContainerService/managedClusters).
AKS_CLUSTER_NAME = re.compile(r"^[A-Za-z0-9](?:[A-Za-z0-9_-]{0,61}[A-Za-z0-9])?$")
# An EKS control plane needs subnets in at least two Availability Zones (EKS API VpcConfigRequest subnetIds;
# pulumi-aws ClusterVpcConfig subnet_ids: "Must be in at least two different availability zones").
EKS_MIN_ZONES = 2
