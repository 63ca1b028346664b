"""What `init NAME [--from EXAMPLE]` writes: a commented stack file, or an example stack renamed, and
the two files of a Pulumi project whose program is the package's (components/program.py).

The commented starter's commented lines are the defaults themselves: uncommented, they give the
same design (tests/test_init.py holds that), so a user edits a value and knows what it was.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import yaml

from cluster import stackfile as sf
from cluster.loader import EXAMPLES

NAME = re.compile(r"[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?")  # the cluster's name: a DNS label

STARTER = """\
# <name>: a stack file `gpu-cluster init` wrote. Only name, target and node_pools are required.
# Every commented line below is a default as it is (uncommented, it changes nothing): uncomment
# what you choose and edit it. Every key: docs/reference/stack-file.md in the gpu-cluster
# repository; what gpu, server, switch and instance_type can name: `gpu-cluster catalog`.
# Check it with `gpu-cluster validate <name>`; then `render`, `plan`, `pulumi up`.
config:
  gpu-cluster:cluster:
    name: <name>                     # the cluster's name (a DNS label): hosts, switches, build/<name>/
    target: onprem                   # <targets> (cloud: cloud.region, a pool's instance_type)
    node_pools:
      - name: gpu                    # a DNS label: its hosts are gpu-node-001, gpu-node-002, ...
        nodes: 4
        gpu: H200                    # gpu-cluster catalog gpus
        # server: hgx-h200           # gpu-cluster catalog servers (default: the GPU's server)
        # gpus_per_node: 8           # from the GPU's catalog entry
        # fabric_nics: {count: 8, gbps: 400}      # per node, from the server
        # storage_nics: {count: 2, gbps: 200}
        # management_nics: {count: 1, gbps: 25}
    # fabric:                        # the GPU fabric
    #   transport: roce              # roce | infiniband (from the leaf's switch model)
    #   design: rail-optimized       # port r of every node to a rail-r leaf; or rack-tor
    #   planes: 1                    # 2 = dual-plane: port p of every NIC goes to plane p
    #   leaf: {switch: SN5600, port_gbps: 400}    # gpu-cluster catalog switches, or {ports: 64, port_gbps: 400}
    #   spine: {switch: SN5600, port_gbps: 400}   # default: the leaf's model
    #   max_oversubscription: 1.0    # leaves, spines and leaf_uplinks are sized for it when omitted
    #   shared_with: []              # [storage] and/or [management] on the fabric's leaves (re-sizes it)
    # storage: {max_oversubscription: 3.0}        # leaf and spine: the cheapest catalog model that fits
    # addressing: {loopbacks: 10.0.0.0/16, fabric_links: 10.64.0.0/12, hosts: 10.128.0.0/10}
    # asn: {spine: 4200000000, leaf_base: 4200001000}   # RFC 7938: the 4-byte private range
    # qos:                           # RoCE: one lossless plan for hosts and switches (NVIDIA's convention)
    #   mode: lossless               # lossless (PFC + ECN) | lossy (ECN only)
    #   roce: {dscp: 26, priority: 3}
    #   cnp: {dscp: 48, priority: 6}
    #   storage: {dscp: 10, priority: 1}
    #   pfc_priorities: [3]
    #   ecn: {min_bytes: 150000, max_bytes: 1500000}
    #   mtu: 9000
    # policy:
    #   min_gbps_per_gpu: 200        # fabric Gbps per GPU below it: an error (FAB-GPU-NIC)
    #   recommended_gbps_per_gpu: 400               # below it: a warning
    #   fail_on: error               # error | warning: the severity that fails validate (exit 1)
    #   suppress: []                 # rule ids to report as info instead
""".replace("<targets>", " | ".join(sf.TARGETS))

# A project folder needs these beside its stacks/ for `pulumi up`; `init` writes them when absent.
PULUMI_YAML = """\
# A gpu-cluster project (`gpu-cluster init` wrote it): the program is the installed package's
# (__main__.py calls it), the stack files are stacks/Pulumi.<stack>.yaml. Pulumi runs the python3
# on PATH: the environment gpu-cluster is installed in (with its cloud extra for a cloud target).
name: gpu-cluster
runtime: python
description: GPU cluster fabrics validated before they are provisioned
stackConfigDir: stacks
"""

MAIN_PY = '''\
"""The Pulumi program: gpu-cluster's own (components/program.py in the installed package)."""

from components.program import main

main()
'''


@dataclass(frozen=True)
class Example:
    """An example stack the package holds: its name, file and first line of description."""

    name: str
    path: Path
    about: str


def examples() -> dict[str, Example]:
    """The example stacks, by name (cluster/examples/Pulumi.<name>.yaml)."""
    found = {}
    for path in sorted(EXAMPLES.glob("Pulumi.*.yaml")):
        name = path.name[len("Pulumi."):-len(".yaml")]
        found[name] = Example(name, path, _about(name, path.read_text(encoding="utf-8")))
    return found


def _about(name: str, text: str, width: int = 90) -> str:
    """The first sentence of the file's opening comment, cut at `width` on a word."""
    lines = []
    for line in text.splitlines():
        if not line.startswith("#"):
            break
        lines.append(line.lstrip("#").strip())
    words = " ".join(lines).removeprefix(f"{name}: ")
    sentence = re.split(r"(?<=\.) ", words, maxsplit=1)[0]
    return sentence if len(sentence) <= width else sentence[:width - 3].rsplit(" ", 1)[0] + " ..."


def starter(name: str) -> str:
    """The commented stack file of a new cluster `name`."""
    aligned = re.sub(r"<name>( +)#", lambda match: f"{name:<{len(match.group(0)) - 2}} #", STARTER)  # comments stay in line
    return aligned.replace("<name>", name)


def from_example(name: str, example: Example) -> str:
    """The example's stack file with its cluster named `name` (the value of gpu-cluster:cluster's
    `name`, replaced where it stands; comments and layout kept), under a line saying where it came from."""
    text = example.path.read_text(encoding="utf-8")
    root = yaml.compose(text, Loader=yaml.SafeLoader)
    node = _value(_value(root, "config"), "gpu-cluster:cluster")
    old = _value(node, "name")
    if old is not None:
        start, end = old.start_mark.index, old.end_mark.index
        text = text[:start] + name + text[end:]
    return f"# {name}: `gpu-cluster init {name} --from {example.name}` wrote it from the example below.\n{text}"


def _value(node: yaml.Node | None, key: str) -> yaml.Node | None:
    if not isinstance(node, yaml.MappingNode):
        return None
    return next((value for item, value in node.value if isinstance(item, yaml.ScalarNode) and item.value == key), None)
