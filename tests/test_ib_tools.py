"""InfiniBand designs checked by InfiniBand's own tools, on the files `render` writes.

- ibdmchk (Debian's ibutils) reads verify/fabric.topo with the system types in verify/ibnl/, the
  master topology UFM's topology compare takes: every system is defined and gets a LID, every
  CA reaches every other CA, the longest path is up to the top tier and down, and up/down routing
  with the roots it recognises has no credit loop.
- OpenSM runs fabric/opensm.conf and fabric/partitions.conf, as rendered, on ibsim simulating the
  design's cables: it becomes master, its ftree routing engine (the one the file asks for) routes
  every switch, and no line of its log is an error. ibdmchk then checks the routes OpenSM wrote
  (its subnet and forwarding table dumps) for CA-to-CA paths and credit loops.
- Both for the golden InfiniBand stack, the DGX SuperPOD example (1,016 HCAs) and three edge
  designs (three leaf groups of 200G leaves; three tiers; generic boxes given by ports and
  speed); ibdmchk also for DGX SuperPOD B200's first three-tier size (4,096 HCAs).
- Negative controls: a missing uplink pair in the topology file, a host cabled to a spine in the
  simulated fabric, and a partition file OpenSM cannot use are each caught by the same checks.

ibsim and OpenSM run in a network namespace of their own (tests/ibsim.py), so that no other
simulator on the machine answers them.
"""

from __future__ import annotations

import itertools
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from cluster.artifacts import render_tree
from cluster.pipeline import Valid, validate, validate_mapping
from cluster.topology import FABRIC
from cluster.verify.expected import Cable, End, expected_cables
from cluster.verify.ibdm import master_topology
from tests.ibsim import on_simulator
from tests.neighbor_reports import ibsim_net, moved

ROOT = Path(__file__).resolve().parent.parent
FILES = {"golden": ROOT / "tests" / "golden" / "stacks" / "infiniband.yaml",
         "superpod": ROOT / "stacks" / "Pulumi.superpod.yaml"}  # DGX SuperPOD's 127 nodes, 1,016 HCAs
TOOLS = ("ibdmchk", "opensm", "ibsim", "ibsim-run", "unshare")

DESIGNS: dict[str, dict[str, Any]] = {
    "200G leaves of 16 ports, three leaf groups": {
        "node_pools": [{"name": "a100", "nodes": 20, "gpu": "A100"}],
        "fabric": {"transport": "infiniband", "leaf": {"switch": "QM9700", "port_gbps": 200, "ports": 16}}},
    "three tiers": {
        "node_pools": [{"name": "h100", "nodes": 24, "gpu": "H100", "fabric_nics": {"count": 2, "gbps": 400}}],
        "fabric": {"transport": "infiniband", "leaf": {"switch": "QM9700", "port_gbps": 400, "ports": 8},
                   "spine": {"switch": "QM9700", "port_gbps": 400, "ports": 8}}},
    "generic boxes given by ports and speed": {
        "node_pools": [{"name": "h100", "nodes": 12, "gpu": "H100", "fabric_nics": {"count": 4, "gbps": 400}}],
        "fabric": {"transport": "infiniband", "leaf": {"ports": 16, "port_gbps": 400}}},
}
# DGX SuperPOD B200's smallest three-tier configuration (16 SU, 512 nodes, 4,096 HCAs; 128 leaves,
# 128 spines, 64 cores: tests/test_reference_designs.py), for ibdmchk only: 16.8 million CA pairs
# take it about 25 s; ibsim does not simulate a fabric this size in reasonable time.
LARGE = {"DGX SuperPOD B200, 16 SU": {"node_pools": [{"name": "dgx", "nodes": 512, "gpu": "B200"}],
                                      "fabric": {"transport": "infiniband", "leaf": {"switch": "QM9700"}}}}


@pytest.fixture(scope="module")
def tools() -> None:
    for tool in TOOLS:
        if shutil.which(tool) is None:
            pytest.fail(f"{tool} not found: apt-get install ibutils opensm ibsim-utils (in .ci/apt-packages.txt)")


def design(name: str) -> Valid:
    result = validate(str(FILES[name])) if name in FILES else validate_mapping(
        "ib", {"name": "ib", "target": "onprem", **{**DESIGNS, **LARGE}[name]})
    assert isinstance(result, Valid), [finding.message for finding in result.findings]
    return result


def written(result: Valid, folder: Path) -> Path:
    """The rendered files InfiniBand's tools read (verify/ but the neighbor files, fabric/) in `folder`."""
    for path, text in render_tree(result.spec, result.topology).items():
        if path.startswith(("verify/", "fabric/")) and not path.startswith("verify/neighbors/"):
            (folder / path).parent.mkdir(parents=True, exist_ok=True)
            (folder / path).write_text(text)
    return folder


def channel_adapters(result: Valid) -> list[str]:
    """Every HCA of the fabric as the topology file names it, `<host>_<RDMA device>`."""
    return sorted({f"{end.device}_{end.port.partition('/')[0]}" for cable in fabric_cables(result)
                   for end in (cable.lower, cable.upper) if result.topology.nodes[end.device]["kind"] == "host"})


def fabric_cables(result: Valid) -> list[Cable]:
    return [cable for cable in expected_cables(result.spec, result.topology) if cable.network == FABRIC]


def ibdmchk(folder: Path, *arguments: str, last: str) -> str:
    """ibdmchk's report, once it got as far as its `last` stage. Debian's ibdmchk 1.5.7 crashes
    as it exits (SIGSEGV), after its last report, even on ibutils' own sample topologies
    (SingleGazelle.topo), so its exit code says nothing and the report is what is read."""
    run = subprocess.run(["ibdmchk", *arguments], cwd=folder, capture_output=True, text=True, timeout=300,
                         env={"IBDM_IBNL_PATH": str(folder / "verify" / "ibnl"), "PATH": "/usr/bin:/bin"})
    output = run.stdout + run.stderr
    assert run.returncode in (0, -11) and last in output, output[-3000:]
    return output


def histogram(output: str, title: str) -> dict[int, int]:
    """`hops -> CA pairs` of one of ibdmchk's hop histograms."""
    section = output.split(title, 1)[1].split("HOPS NUM-CA-CA-PAIRS", 1)[1].split("----", 1)[0]
    return {int(hops): int(pairs) for hops, pairs in re.findall(r"^\s*(\d+)\s+(\d+)\s*$", section, re.MULTILINE)}


def design_check(folder: Path, anchor: str, last: str = "Scanning all multicast groups for Credit Loops") -> str:
    """ibdmchk's design mode: the topology file, the SM at `anchor`, up/down routing (`last`: the
    report's last stage; without roots it checks every path for credit loops instead)."""
    return ibdmchk(folder, "-t", "verify/fabric.topo", "-n", f"{anchor}/U1", "-p", "1", "-u", last=last)


@pytest.mark.parametrize("name", [*FILES, *DESIGNS, *(pytest.param(name, marks=pytest.mark.slow) for name in LARGE)])
def test_ibdmchk_finds_every_path_and_no_credit_loop_in_the_master_topology(
        name: str, tools: None, tmp_path: Path) -> None:
    result = design(name)
    folder = written(result, tmp_path)
    hcas = channel_adapters(result)
    switches = sum(1 for _ in result.topology.switches(FABRIC))
    output = design_check(folder, hcas[0])
    assert "-E-" not in output, output[-3000:]
    systems = len(hcas) + switches
    assert f"Defined {systems}/{systems} systems/nodes" in output
    assert f"Assigned {systems} LIDs" in output
    pairs = len(hcas) * (len(hcas) - 1)
    routed = histogram(output, "LFT ROUTE HOP HISTOGRAM")
    assert sum(routed.values()) == pairs
    plan = result.topology.fabric_plan
    assert plan is not None and max(routed) == 2 * plan.tiers  # up to the top tier and down
    assert f"No credit loops found in:{pairs} CA to CA paths" in output


def test_a_generic_box_on_an_infiniband_fabric_is_set_up_by_the_subnet_manager(tmp_path: Path) -> None:
    """Given by ports and speed alone, a fabric switch is still an InfiniBand switch: no Ethernet
    switch config of its own, ports numbered as the subnet manager numbers them."""
    result = design("generic boxes given by ports and speed")
    tree = render_tree(result.spec, result.topology)
    fabric = [name for name, _ in result.topology.switches(FABRIC)]
    assert {result.topology.switch(name)["os"] for name in fabric} == {"opensm"}
    assert not [path for path in tree if path.split("/")[:2] in (["switches", name] for name in fabric)]
    assert all(cable.upper.port.isdigit() for cable in fabric_cables(result))


def test_ibdmchk_reports_a_leaf_whose_uplinks_are_missing(tools: None, tmp_path: Path) -> None:
    result = design("golden")
    folder = written(result, tmp_path)
    cables = fabric_cables(result)
    leaf = "leaf-001-r1"
    kept = [cable for cable in cables if not (cable.tier == "leaf-spine" and cable.lower.device == leaf)]
    assert len(cables) - len(kept) == 2
    (folder / "verify" / "fabric.topo").write_text(
        master_topology(result.spec, result.topology, kept)["fabric.topo"])
    output = design_check(folder, channel_adapters(result)[0], last="Analyzing Fabric for Credit Loops")
    hcas = len(channel_adapters(result))
    assert "-E- Fail to recognize any root nodes" in output
    assert f"Assigned {hcas + 10} LIDs" not in output  # the leaf and its two HCAs are out of reach
    assert f"Scanned:{hcas * (hcas - 1)} CA to CA paths" not in output


def opensm(net: str, folder: Path, hca: str, partitions: Path | None = None) -> str:
    """OpenSM once (-o) over ibsim simulating `net`, with the rendered opensm.conf, on `hca` (as
    fabric.topo names it, `<host>_<RDMA device>`); its log."""
    anchor = hca.replace("_", " ", 1)  # ibsim's node id: "<host> <RDMA device>"
    (folder / "net").write_text(net)
    dumps = folder / "opensm"
    dumps.mkdir()
    # The rendered file names where a host installs it (/etc/opensm, /var/log); the command line
    # points OpenSM at this folder's copies instead, which it takes over the file's own keys.
    # -D 0x43 makes it dump the subnet and forwarding tables, which ibdmchk reads (ibdmchk -h);
    # OSM_CACHE_DIR keeps the neighbors and LIDs it remembers between runs to this one.
    run = on_simulator(folder / "net", [
        "opensm", "-o", "-F", str(folder / "fabric" / "opensm.conf"),
        "-P", str(partitions or folder / "fabric" / "partitions.conf"), "-f", str(dumps / "opensm.log"),
        "--dump_files_dir", str(dumps), "-D", "0x43"], anchor, environment={"OSM_CACHE_DIR": str(dumps)})
    assert run.returncode == 0 and "Entering MASTER state" in run.stdout, run.stdout + run.stderr
    return (dumps / "opensm.log").read_text()


@pytest.mark.parametrize("name", [*FILES, *DESIGNS])
def test_opensm_routes_the_simulated_fabric_with_the_rendered_configuration(
        name: str, tools: None, tmp_path: Path) -> None:
    result = design(name)
    folder = written(result, tmp_path)
    hcas = channel_adapters(result)
    log = opensm(ibsim_net(result.topology, fabric_cables(result)), folder, hcas[0])
    assert "ftree tables configured on all switches" in log, log[-3000:]
    assert not [line for line in log.splitlines() if " ERR " in line], log[-3000:]
    pairs = len(hcas) * (len(hcas) - 1)
    output = ibdmchk(folder, "-s", "opensm/opensm-subnet.lst", "-f", "opensm/opensm.fdbs",
                     "-m", "opensm/opensm.mcfdbs", last="Analyzing Fabric for Credit Loops")
    assert "-E-" not in output, output[-3000:]
    assert f"Scanned:{pairs} CA to CA paths" in output
    assert "no credit loops found" in output


def test_opensm_refuses_ftree_for_a_host_cabled_to_a_spine(tools: None, tmp_path: Path) -> None:
    result = design("golden")
    folder = written(result, tmp_path)
    cables = fabric_cables(result)
    host = next(cable for cable in cables if cable.tier == "host-leaf")
    spine = next(cable for cable in cables if cable.tier == "leaf-spine").upper.device
    used = {int(cable.upper.port) for cable in cables if cable.upper.device == spine}
    free = next(port for port in range(1, 65) if port not in used)
    miscabled = [moved(cable, upper=End(spine, str(free))) if cable == host else cable for cable in cables]
    log = opensm(ibsim_net(result.topology, miscabled), folder, channel_adapters(result)[0])
    assert "ftree: cannot build lid matrices" in log
    assert "ftree tables configured" not in log


@pytest.mark.parametrize(("edit", "reported"), [
    (("mtu=5", "mtu=4096"), "Requested MGRP parameters are not realizable"),  # bytes, not the MTU code
    (("0x7fff,", "0x7fff"), "PARSE ERROR: line 2: bad partition definition"),  # a comma lost
])
def test_opensm_reports_a_partition_file_it_cannot_use(edit: tuple[str, str], reported: str, tools: None,
                                                       tmp_path: Path) -> None:
    result = design("golden")
    folder = written(result, tmp_path)
    broken = tmp_path / "partitions.conf"
    rendered = (folder / "fabric" / "partitions.conf").read_text()
    assert edit[0] in rendered
    broken.write_text(rendered.replace(*edit))
    log = opensm(ibsim_net(result.topology, fabric_cables(result)), folder,
                 channel_adapters(result)[0], broken)
    assert reported in log


@pytest.mark.parametrize(("leaf", "path", "what"), [
    ({"switch": "Q3400", "port_gbps": 400}, "fabric.leaf.port_gbps", "Q3400 has no 400G ports"),  # not 288 of them
    ({"ports": 300, "port_gbps": 400}, "fabric.leaf.ports", "a generic 300 x 400G box has 300 ports"),
    ({"ports": 254, "port_gbps": 400}, None, ""),
])
def test_an_infiniband_switch_numbers_at_most_254_ports(leaf: dict[str, Any], path: str | None, what: str) -> None:
    """Port numbers are 8 bits, 0 the management port, 255 "no port" in a forwarding table; a
    spine or core that takes the leaf's model is told once, at the leaf."""
    result = validate_mapping("ib", {"name": "ib", "target": "onprem", "node_pools": [
        {"name": "h100", "nodes": 8, "gpu": "H100"}], "fabric": {"transport": "infiniband", "leaf": leaf}})
    errors = [finding for finding in result.findings if finding.rule == "SCHEMA"]
    if path is None:
        assert result.exit_code == 0, [finding.message for finding in result.findings]
        return
    assert result.exit_code == 2 and [finding.path for finding in errors] == [path], errors
    assert what in errors[0].message


SWEEP_LEAVES = ({"switch": "QM9700"}, {"switch": "QM9700", "port_gbps": 200}, {"switch": "QM9790"}, {"switch": "Q3400"},
                {"ports": 36, "port_gbps": 200}, {"ports": 40, "port_gbps": 200})


@pytest.mark.slow
def test_ibdmchk_routes_every_valid_design_of_a_sweep(tools: None, tmp_path: Path) -> None:
    """Leaf models and speeds x GPU servers x both designs x three sizes: every design that
    validates gets a fabric.topo in which ibdmchk routes every CA pair with no credit loop."""
    checked = []
    for number, (leaf, gpu, layout, nodes) in enumerate(itertools.product(
            SWEEP_LEAVES, ("H100", "B200", "B300", "A100", "H200", "GB200"), ("rail-optimized", "rack-tor"), (3, 17, 40))):
        result = validate_mapping("sweep", {"name": "sweep", "target": "onprem", "node_pools": [
            {"name": "p", "nodes": nodes, "gpu": gpu}], "fabric": {"transport": "infiniband", "design": layout, "leaf": leaf}})
        if not isinstance(result, Valid) or result.exit_code:
            continue
        folder = written(result, tmp_path / str(number))
        hcas = channel_adapters(result)
        pairs = len(hcas) * (len(hcas) - 1)
        output = design_check(folder, hcas[0])
        assert "-E-" not in output and f"No credit loops found in:{pairs} CA to CA paths" in output, (leaf, gpu, layout, nodes)
        checked.append((leaf.get("switch", "generic"), gpu, layout))
    assert len(checked) >= 200 and {layout for _, _, layout in checked} == {"rail-optimized", "rack-tor"}
