"""Kubernetes: node labels from the graph and Kueue topology-aware scheduling objects.

On premises every node gets its pool, NVLink domain, rail group (the logical leaf: the rail
leaves that serve it, named as in topology.conf) and fabric pod. Kueue's `Topology` lists those
labels from the widest level down, `kubernetes.io/hostname` last; a `ResourceFlavor` per pool
names it with spec.topologyName; sample Jobs ask for one node and for one rail group with the
`kueue.x-k8s.io/podset-required-topology` annotation.

On a cloud target the node names are the provider's (ip-10-0-32-7..., MIG or scale set
instances), so nothing is labelled by name: a flavor per instance type selects nodes by the
labels the provider's Kubernetes sets (`node.kubernetes.io/instance-type`, the zone), and the
Topology levels are the provider's own topology labels (`cloud_levels`). The ClusterQueue
covers cpu, memory, the GPUs and, on AWS, `vpc.amazonaws.com/efa`: Kueue admits no workload
that asks for a resource its ClusterQueue does not cover.

Objects are kueue.x-k8s.io/v1beta2, the version the Kueue CRDs store (v1beta1 is deprecated;
the vendored CRDs of Kueue's v0.20 line check them in the tests).
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from typing import Any, Protocol, cast, runtime_checkable

import yaml

from cluster import clouds
from cluster.catalog import Instance, load_catalog
from cluster.clouds import cloud
from cluster.exports.hierarchy import nvlink_domains
from cluster.spec import ClusterSpec, PoolSpec
from cluster.topology import Topology

PREFIX = "gpu-cluster.io"
POOL = f"{PREFIX}/pool"
NVLINK_DOMAIN = f"{PREFIX}/nvlink-domain"
RAIL_GROUP = f"{PREFIX}/rail-group"
POD = f"{PREFIX}/fabric-pod"
HOSTNAME = "kubernetes.io/hostname"
KUEUE = "kueue.x-k8s.io/v1beta2"
PREFERRED = "kueue.x-k8s.io/podset-preferred-topology"
INSTANCE_TYPE = "node.kubernetes.io/instance-type"  # well-known label, set from the provider's API
ZONE = "topology.kubernetes.io/zone"
# The providers' topology labels, widest first (hostname follows), are each cloud's
# `topology_labels` (cluster/clouds/<name>/).
# The GPU taint's toleration: Google's managed Kubernetes taints GPU nodes nvidia.com/gpu:NoSchedule
# itself, and Google's own flavor tolerates it (same file); the stack's managed pools carry the same
# taint (cluster.scheduler).
GPU_TOLERATION = {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}
REQUIRED = "kueue.x-k8s.io/podset-required-topology"
QUEUE_LABEL = "kueue.x-k8s.io/queue-name"
SAMPLE_IMAGE = "registry.k8s.io/e2e-test-images/agnhost:2.53"  # Kueue's own samples use it; replace it


def node_labels(spec: ClusterSpec, topology: Topology) -> dict[str, dict[str, str]]:
    """Host -> its topology labels. Cloud nodes get pool and NVLink domain only (the fabric is the provider's)."""
    domains = nvlink_domains(spec, topology)
    tree = topology.fabric_tree
    group_of = tree.group_of()
    pod_names = {pod.index: pod.name for pod in tree.pods}
    labels: dict[str, dict[str, str]] = {}
    for pool in spec.pools:
        for host in topology.hosts_by_pool[pool.name]:
            own = {POOL: pool.name, NVLINK_DOMAIN: domains[host]}
            group = group_of.get(host)
            if group is not None:
                own[RAIL_GROUP] = group.name
                own[POD] = pod_names[group.pod]
            labels[host] = own
    return labels


def levels(spec: ClusterSpec, topology: Topology, labels: dict[str, dict[str, str]] | None = None) -> list[str]:
    """Kueue levels, widest first: fabric pod (three tiers), rail group, NVLink domain (when it
    spans nodes and nests inside one rail group), then the host."""
    labels = labels if labels is not None else node_labels(spec, topology)
    tree = topology.fabric_tree
    result: list[str] = []
    if tree.tiers == 3:
        result.append(POD)
    if tree.groups:
        result.append(RAIL_GROUP)
    if any(pool.nvlink_domain > pool.gpus_per_node for pool in spec.pools) and _nests(labels, NVLINK_DOMAIN, result):
        result.append(NVLINK_DOMAIN)
    result.append(HOSTNAME)
    return result


def _nests(labels: dict[str, dict[str, str]], inner: str, outer: list[str]) -> bool:
    """Every value of `inner` lies within one value of the next level up (Kueue needs a tree)."""
    if not outer:
        return True
    parent: dict[str, str] = {}
    return all(parent.setdefault(own[inner], own[outer[-1]]) == own[outer[-1]] for own in labels.values())


def gpu_resource(pool: PoolSpec) -> str:
    """The device plugin's resource name for the pool's GPU vendor."""
    vendor = load_catalog().gpus[pool.gpu].vendor
    return "amd.com/gpu" if vendor == "amd" else "nvidia.com/gpu"


def cloud_levels(spec: ClusterSpec, pool: PoolSpec | None = None) -> list[str]:
    """The Topology levels of a cloud target: the provider's topology labels, then the host. Where
    the provider numbers its labels by layer, an instance type whose topology has more layers
    (p6-b200, p6-b300: four) adds the layer nearest the instance (catalog topology_layers)."""
    provider = cloud(spec.target)
    levels = list(provider.topology_labels)
    if provider.topology_layer is not None and pool is not None:
        instance = load_catalog().instance(spec.target, pool.instance_type or "")
        layers = instance.topology_layers if instance is not None else len(levels)
        levels = [f"{provider.topology_layer}{layer}" for layer in range(1, layers + 1)]
    return [*levels, HOSTNAME]


def cloud_topologies(spec: ClusterSpec) -> dict[str, tuple[str, list[str]]]:
    """Pool -> (Topology name, levels). Pools whose nodes carry different levels need Topologies of
    their own (Kueue leaves out of a Topology a node without one of its level labels): the first
    level set is `<cluster>-fabric`, another `<cluster>-fabric-<levels>`."""
    names: dict[tuple[str, ...], str] = {}
    result: dict[str, tuple[str, list[str]]] = {}
    for pool in spec.pools:
        levels = cloud_levels(spec, pool)
        name = names.setdefault(tuple(levels), f"{spec.name}-fabric" if not names
                                else f"{spec.name}-fabric-{len(levels) - 1}")
        result[pool.name] = (name, levels)
    return result


def flavor_name(spec: ClusterSpec, instance_type: str) -> str:
    """A DNS-subdomain ResourceFlavor name for an instance type (Standard_ND96... -> standard-nd96...)."""
    return f"{spec.name}-{instance_type.lower().replace('_', '-')}"


def _cloud_objects(spec: ClusterSpec, topology_name: str) -> list[dict[str, Any]]:
    """Topologies of the provider's labels, flavors, a ClusterQueue over every resource a training
    pod asks for, a LocalQueue, and sample Jobs. With bare nodes (scheduler none) a flavor per
    instance type selects the instance-type label; with node pools of the provider's Kubernetes a
    flavor per pool selects the pool label its node pool sets, and tolerates its GPU taint."""
    catalog = load_catalog()
    topologies = cloud_topologies(spec)
    objects: list[dict[str, Any]] = [
        {"apiVersion": KUEUE, "kind": "Topology", "metadata": {"name": name},
         "spec": {"levels": [{"nodeLabel": label} for label in levels]}}
        for name, levels in dict(topologies.values()).items()]
    gpu_resources = sorted({gpu_resource(pool) for pool in spec.pools})
    fabric = cloud(spec.target).fabric_resource
    covered = ["cpu", "memory", *gpu_resources, *([fabric] if fabric is not None else [])]
    # (flavor name, pools it covers, node labels)
    groups: list[tuple[str, list[PoolSpec], dict[str, str]]] = []
    if spec.kubernetes:
        groups = [(f"{spec.name}-{pool.name}", [pool], {POOL: pool.name, INSTANCE_TYPE: pool.instance_type or ""})
                  for pool in spec.pools]
    else:
        by_type: dict[str, list[PoolSpec]] = {}
        for pool in spec.pools:
            by_type.setdefault(pool.instance_type or "", []).append(pool)
        for instance_type, pools in sorted(by_type.items()):
            selector = {INSTANCE_TYPE: instance_type}
            zones = {pool.capacity.zone for pool in pools if pool.capacity}
            if len(zones) == 1 and None not in zones:  # pools of one type in several zones: the flavor spans them
                selector[ZONE] = str(next(iter(zones)))
            groups.append((flavor_name(spec, instance_type), pools, selector))
    flavors = []
    for name, pools, selector in groups:
        instance = catalog.instance(spec.target, pools[0].instance_type or "")
        assert instance is not None  # the resolver rejects unknown instance types
        count = sum(pool.nodes for pool in pools)
        flavor: dict[str, Any] = {"nodeLabels": selector, "topologyName": topologies[pools[0].name][0]}
        if cloud(spec.target).gpu_taint_tolerated or spec.kubernetes:
            flavor["tolerations"] = [dict(GPU_TOLERATION)]
        objects.append({"apiVersion": KUEUE, "kind": "ResourceFlavor", "metadata": {"name": name}, "spec": flavor})
        vendor = "amd.com/gpu" if catalog.gpus[instance.gpu].vendor == "amd" else "nvidia.com/gpu"
        quota: dict[str, int | str] = {"cpu": count * instance.vcpus, "memory": f"{count * instance.memory_gib}Gi"}
        quota.update({resource: count * instance.gpus if resource == vendor else 0 for resource in gpu_resources})
        if fabric is not None:
            quota[fabric] = count * instance.fabric.count
        flavors.append({"name": name, "resources": [{"name": resource, "nominalQuota": quota[resource]}
                                                    for resource in covered]})
    objects.append({"apiVersion": KUEUE, "kind": "ClusterQueue", "metadata": {"name": spec.name},
                    "spec": {"namespaceSelector": {},
                             "resourceGroups": [{"coveredResources": covered, "flavors": flavors}]}})
    objects.append({"apiVersion": KUEUE, "kind": "LocalQueue",
                    "metadata": {"name": spec.name, "namespace": "default"}, "spec": {"clusterQueue": spec.name}})
    pool = spec.pools[0]
    selector = groups[0][2] if spec.kubernetes else {INSTANCE_TYPE: pool.instance_type or ""}
    objects.append(_job(spec, pool, f"{spec.name}-one-node", 1, HOSTNAME, selector=selector))
    # The narrowest level above the host. Where one pool is one fabric, a hard boundary (required);
    # elsewhere as close as capacity allows (preferred): how many nodes share a network node is the provider's.
    levels = topologies[pool.name][1]
    close = levels[-cloud(spec.target).close_level]
    annotation = REQUIRED if cloud(spec.target).one_fabric_per_pool else PREFERRED
    objects.append(_job(spec, pool, f"{spec.name}-whole-pool", pool.nodes, close, selector=selector,
                        annotation=annotation))
    return objects


def kueue_objects(spec: ClusterSpec, topology: Topology) -> list[dict[str, Any]]:
    """Topology, one ResourceFlavor per pool, a ClusterQueue and LocalQueue, and sample Jobs."""
    if spec.is_cloud:
        return _cloud_objects(spec, f"{spec.name}-fabric")
    labels = node_labels(spec, topology)
    topology_name = f"{spec.name}-fabric"
    objects: list[dict[str, Any]] = [{
        "apiVersion": KUEUE,
        "kind": "Topology",
        "metadata": {"name": topology_name},
        "spec": {"levels": [{"nodeLabel": label} for label in levels(spec, topology, labels)]},
    }]
    groups: dict[str, list[PoolSpec]] = {}
    for pool in spec.pools:
        objects.append({
            "apiVersion": KUEUE,
            "kind": "ResourceFlavor",
            "metadata": {"name": f"{spec.name}-{pool.name}"},
            "spec": {"nodeLabels": {POOL: pool.name}, "topologyName": topology_name},
        })
        groups.setdefault(gpu_resource(pool), []).append(pool)
    objects.append({
        "apiVersion": KUEUE,
        "kind": "ClusterQueue",
        "metadata": {"name": spec.name},
        "spec": {
            "namespaceSelector": {},
            "resourceGroups": [
                {"coveredResources": [resource],
                 "flavors": [{"name": f"{spec.name}-{pool.name}",
                              "resources": [{"name": resource, "nominalQuota": pool.gpus}]} for pool in pools]}
                for resource, pools in groups.items()
            ],
        },
    })
    objects.append({"apiVersion": KUEUE, "kind": "LocalQueue",
                    "metadata": {"name": spec.name, "namespace": "default"}, "spec": {"clusterQueue": spec.name}})
    pool = spec.pools[0]
    objects.append(_job(spec, pool, f"{spec.name}-one-node", 1, HOSTNAME))
    per_group = _smallest_group(labels, pool)
    if per_group:
        objects.append(_job(spec, pool, f"{spec.name}-one-rail-group", per_group, RAIL_GROUP))
    return objects


def _smallest_group(labels: dict[str, dict[str, str]], pool: PoolSpec) -> int:
    """Nodes of `pool` in its smallest rail group: a job that size always fits one group."""
    sizes: dict[str, int] = {}
    for own in labels.values():
        if own[POOL] == pool.name and RAIL_GROUP in own:
            sizes[own[RAIL_GROUP]] = sizes.get(own[RAIL_GROUP], 0) + 1
    return min(sizes.values(), default=0)


def _job(spec: ClusterSpec, pool: PoolSpec, name: str, nodes: int, level: str,
         selector: dict[str, str] | None = None, annotation: str = REQUIRED) -> dict[str, Any]:
    """An Indexed Job of `nodes` pods, one whole node each, all inside one `level` domain."""
    gpus: dict[str, int] = {gpu_resource(pool): pool.gpus_per_node}
    fabric = cloud(spec.target).fabric_resource if spec.is_cloud else None
    if fabric is not None:
        interfaces = load_catalog().instance(spec.target, pool.instance_type or "")
        assert interfaces is not None
        gpus[fabric] = interfaces.fabric.count  # every fabric interface of the node, as a whole-node pod takes them
    container: dict[str, Any] = {"name": "worker", "image": SAMPLE_IMAGE, "args": ["pause"],
                                 "resources": {"requests": dict(gpus), "limits": dict(gpus)}}
    pod: dict[str, Any] = {"nodeSelector": selector if selector is not None else {POOL: pool.name},
                           "restartPolicy": "Never", "containers": [container]}
    instance = load_catalog().instance(spec.target, pool.instance_type or "") if spec.is_cloud else None
    if instance is not None and instance.nccl.mounts:
        # The host paths the provider's NCCL settings name (the plugin, the topology file): the
        # training container sees them only mounted (nccl/<pool>.env says the same).
        volumes = [(f"nccl-host-{index}", path) for index, path in enumerate(instance.nccl.mounts)]
        container["volumeMounts"] = [{"name": volume, "mountPath": path, "readOnly": True} for volume, path in volumes]
        host = cloud_kubernetes(spec.target).HOST_PATHS if spec.kubernetes else {}
        pod["volumes"] = [{"name": volume, "hostPath": {"path": host.get(path, path)}} for volume, path in volumes]
    annotations = {annotation: level}
    if spec.kubernetes and instance is not None:
        annotations.update(cloud_kubernetes(spec.target).pod_annotations(instance))
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": name, "namespace": "default", "labels": {QUEUE_LABEL: spec.name}},
        "spec": {
            "parallelism": nodes,
            "completions": nodes,
            "completionMode": "Indexed",
            "suspend": True,
            "template": {"metadata": {"annotations": annotations}, "spec": pod},
        },
    }


@runtime_checkable
class CloudKubernetes(Protocol):
    """A cloud's `kubernetes` module (cluster/clouds/<cloud>/kubernetes.py): what the export adds for
    the pools of its managed Kubernetes (scheduler.kind)."""

    HOST_PATHS: Mapping[str, str]  # an NCCL host path -> where its nodes have it
    KUEUE_HEADER: str  # what to apply before the Jobs

    def pod_annotations(self, instance: Instance) -> dict[str, str]: ...


def cloud_kubernetes(target: str) -> CloudKubernetes:
    """The `kubernetes` module of the cloud target `target` (tests/test_clouds.py holds each to the protocol)."""
    return cast("CloudKubernetes", importlib.import_module(f"cluster.clouds.{clouds.cloud(target).name}.kubernetes"))


def _dump(documents: list[Any]) -> str:
    return yaml.safe_dump_all(documents, sort_keys=False, default_flow_style=False, width=120)


def kueue_yaml(spec: ClusterSpec, topology: Topology) -> str:
    """The Kueue objects and sample Jobs as one multi-document YAML file."""
    if spec.is_cloud:
        levels = sorted({label for _, labels in cloud_topologies(spec).values() for label in labels[:-1]})
        selected = f"{POOL}, set by the stack's node pools" if spec.kubernetes else INSTANCE_TYPE
        header = (f"# Kueue topology-aware scheduling for stack {spec.name}, generated by gpu-cluster ({KUEUE},\n"
                  f"# Kueue v0.16+). Nodes are selected by labels they carry ({selected}) and placed by the\n"
                  f"# topology labels {spec.target}'s Kubernetes sets ({', '.join(levels)}); nothing to label by hand.\n")
        if spec.kubernetes:
            header += cloud_kubernetes(spec.target).KUEUE_HEADER
    else:
        header = (f"# Kueue topology-aware scheduling for stack {spec.name}, generated by gpu-cluster from the\n"
                  f"# validated topology graph ({KUEUE}, Kueue v0.16+). Label the nodes first (node-labels.yaml).\n")
    return header + _dump(kueue_objects(spec, topology))


def node_labels_yaml(spec: ClusterSpec, topology: Topology) -> str:
    """Node name -> labels, as YAML (apply with the generated label-nodes.sh or your own tooling).

    Written line by line (a YAML dumper takes seconds at 16k nodes); every name and value is
    label-safe ([A-Za-z0-9._-]) by construction, and quoted so `001` stays a string.
    """
    lines = [f"# Topology labels per node for stack {spec.name}, generated by gpu-cluster."]
    for host, own in node_labels(spec, topology).items():
        lines.append(f'"{host}":')
        lines.extend(f'  {key}: "{value}"' for key, value in own.items())
    return "\n".join(lines) + "\n"


def label_script(spec: ClusterSpec, topology: Topology) -> str:
    """`kubectl label node` commands, one per node (names and values are label-safe by construction)."""
    lines = ["#!/bin/sh", f"# Apply the topology labels of stack {spec.name} (generated by gpu-cluster).", "set -eu"]
    for host, own in node_labels(spec, topology).items():
        pairs = " ".join(f"{key}={value}" for key, value in own.items())
        lines.append(f"kubectl label node {host} --overwrite {pairs}")
    return "\n".join(lines) + "\n"
