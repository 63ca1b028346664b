"""The artifacts stage: every file of a validated design, from the renderers (device configs, host
scripts), the exports (scheduler topology, labels, cabling, bill of materials) and the verify
files (what every device should see). Nothing touches the disk here (see `cluster.publish`), and
validation never comes here: the rules read the intent the renderers write from."""

from __future__ import annotations

from collections.abc import Callable, Iterator

from cluster import parts, settings
from cluster.addressing import Addresses, allocate
from cluster.configs import config_stream, switch_files
from cluster.spec import ClusterSpec
from cluster.topology import FABRIC, Topology, gc_paused
from cluster.words import counted


def _quiet(text: str) -> None:
    return None


def render_tree(spec: ClusterSpec, topology: Topology, addresses: Addresses | None = None,
                stage: Callable[[str], None] = _quiet) -> dict[str, str]:
    """Every on-prem artifact of a design that passed validation: the device configs, and from the
    same graph the scheduler topology, node labels, cabling plan, bill of materials and what every
    device should see (expected LLDP neighbors, a Cumulus PTM topology.dot). `stage` is told each
    stage as it starts, with its count (a verb's progress line)."""
    return dict(sorted(render_stream(spec, topology, addresses, stage)))


def render_stream(spec: ClusterSpec, topology: Topology, addresses: Addresses | None = None,
                  stage: Callable[[str], None] = _quiet) -> Iterator[tuple[str, str]]:
    """The files of `render_tree` as (path, text), as they are rendered (switch configs one switch
    at a time, in no particular order of paths), so that a writer need not hold them all: at
    262,144 GPUs the switch configs alone are 1.3 GB of text."""
    # imported here: validation needs only the renderers above, and every command pays for imports
    from cluster.exports.files import export_files
    from cluster.verify.expected import expected_cables, expected_neighbors, ptm_dot
    from cluster.verify.ibdm import master_topology

    switches = counted(len(topology.switch_nodes), "switch")
    with gc_paused():
        stage(f"switch configs and host scripts ({switches}, {counted(len(spec.pools), 'host pool')})")
        yield from config_stream(spec, topology, addresses)
        stage(f"scheduler topology, labels, cabling and bill of materials ({counted(spec.nodes, 'node')})")
        yield from export_files(spec, topology).items()
        stage(f"what every device should see ({switches})")
        cables = expected_cables(spec, topology)  # once for both files: the longest step at 131,072 GPUs
        for device, text in expected_neighbors(spec, topology, cables=cables).items():
            yield f"verify/neighbors/{device}.txt", text
        yield "verify/topology.dot", ptm_dot(spec, topology, cables)
        if spec.fabric is not None and spec.fabric.transport == "infiniband":  # the master topology of its tools
            for path, text in master_topology(spec, topology, cables).items():
                yield f"verify/{path}", text


def render_part(spec: ClusterSpec, topology: Topology, part: str) -> dict[str, str]:
    """The files of one part of a split design (cluster.parts), as `render_tree` has them. A pod
    renders only its leaves' and spines' configs and expected neighbors (at 131,072 GPUs a few
    seconds instead of the whole tree's 27); the core and `all` get the whole tree."""
    from cluster.verify.expected import expected_neighbors

    if not settings.POD.fullmatch(part):
        return render_tree(spec, topology)
    devices = {name for name, _ in topology.switches(FABRIC) if parts.of_bundle(topology, name) == part}
    with gc_paused():
        files, _ = switch_files(spec, topology, allocate(spec, topology), devices)
        for device, text in expected_neighbors(spec, topology, devices).items():
            files[f"verify/neighbors/{device}.txt"] = text
    return dict(sorted(files.items()))
