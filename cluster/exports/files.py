"""Every export of a stack as {relative path: text}, built in memory before anything is written."""

from __future__ import annotations

from cluster.exports.bom import bill_of_materials, bom_csv
from cluster.exports.cabling import cables, cabling_csv
from cluster.exports.kubernetes import kueue_yaml, label_script, node_labels_yaml
from cluster.exports.nccl import nccl_env
from cluster.exports.slurm import block_conf, topology_conf
from cluster.spec import ClusterSpec
from cluster.topology import Topology


def export_files(spec: ClusterSpec, topology: Topology) -> dict[str, str]:
    """Scheduler topology, node labels, Kueue objects, NCCL env per pool, cabling plan and bill of materials.

    Slurm files and the cabling plan exist only on premises (a cloud fabric is the provider's).
    """
    files: dict[str, str] = {}
    tree = topology_conf(spec, topology)
    if tree is not None:
        files["slurm/topology.conf"] = tree
    block = block_conf(spec, topology)
    if block is not None:
        files["slurm/topology-block.conf"] = block
    if not spec.is_cloud:  # cloud nodes carry the provider's labels; their names are not ours to know
        files["kubernetes/node-labels.yaml"] = node_labels_yaml(spec, topology)
        files["kubernetes/label-nodes.sh"] = label_script(spec, topology)
    files["kubernetes/kueue.yaml"] = kueue_yaml(spec, topology)
    for pool, text in nccl_env(spec, topology).items():
        files[f"nccl/{pool}.env"] = text
    if not spec.is_cloud:
        plan = list(cables(spec, topology))
        files["cabling.csv"] = cabling_csv(spec, topology, plan)
        files["bom.csv"] = bom_csv(bill_of_materials(spec, topology))
    return dict(sorted(files.items()))
