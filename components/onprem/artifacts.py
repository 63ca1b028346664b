"""The one seam between the renderers and the on-prem components.

`render(spec, topology)` returns {relative path: content} for every file `pulumi up` writes.
The files are cluster.render.render_tree's, byte for byte the ones `render` writes.
`split` hands each file to the component that owns it, by the device or pool its path names.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import PurePosixPath

from cluster.artifacts import render_part
from cluster.settings import ALL
from cluster.spec import ClusterSpec
from cluster.topology import Topology

# Which component owns the switches of each network.
OWNER_OF_NETWORK = {"fabric": "fabric", "storage": "storage", "management": "management", "oob": "management"}
CLUSTER_OWNER = "cluster"


def render(spec: ClusterSpec, topology: Topology, part: str = ALL) -> dict[str, str]:
    """Every on-prem artifact as {relative path: content}: the same tree `python -m cluster render`
    writes; for a pod part (cluster.parts) only that pod's files, rendered alone."""
    return render_part(spec, topology, part)


def owner(path: str, topology: Topology) -> tuple[str, str]:
    """(owning component, bundle) of one file. The first path part, from the file name up, that
    names a switch, a host or a pool decides: a switch's files go to the component of its
    network, bundled per switch; host files to their pool. Else a top directory named after a
    network (`fabric/opensm.conf`) goes to that network's component; anything else belongs to
    the cluster. Both are bundled by their top directory (or file stem)."""
    graph = topology.graph
    pure = PurePosixPath(path)
    for part in [pure.name.split(".")[0], *reversed(pure.parent.parts)]:
        if part in topology.hosts_by_pool:
            return f"pool:{part}", f"{part}-hosts"
        data = graph.nodes.get(part)
        if data is None:
            continue
        if data["kind"] == "switch":
            return OWNER_OF_NETWORK[data["network"]], part
        if data["kind"] == "host":
            return f"pool:{data['pool']}", f"{data['pool']}-hosts"
    top = pure.parts[0].split(".")[0]
    return OWNER_OF_NETWORK.get(top, CLUSTER_OWNER), top


def split(files: Mapping[str, str], topology: Topology) -> dict[str, dict[str, dict[str, str]]]:
    """{owner: {bundle: {path: content}}} (see `owner`)."""
    owned: dict[str, dict[str, dict[str, str]]] = {}
    for path in sorted(files):
        component, bundle = owner(path, topology)
        owned.setdefault(component, {}).setdefault(bundle, {})[path] = files[path]
    return owned
