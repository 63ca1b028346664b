"""One import: the inferred design refined against the catalog's defaults, written as a stack
file, built (not judged: `validate` of the written file runs the rules), and compared with the
same neighbor data as `verify` compares it.

Refinement settles what only the resolved design can say: which leaf fill (`even`, `packed`)
puts the most hosts in the leaf group they are cabled to, and which NIC names the stack file
must give (those that differ from the names the server catalog or the convention gives).
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import Any

from cluster import naming
from cluster import stackfile as sf
from cluster.findings import Finding, Severity, printable
from cluster.importer.infer import Design, Options, infer
from cluster.importer.observe import Observed
from cluster.importer.same_names import reader_links
from cluster.importer.write import stack_text
from cluster.loader import from_mapping
from cluster.pipeline import Result, Valid, check
from cluster.resolve import resolve
from cluster.rules import RULE_IDS
from cluster.rules.fabric import Radix
from cluster.sizing import size_fabric
from cluster.spec import ClusterSpec, PoolSpec
from cluster.topology import FABRIC, gc_paused, host_name
from cluster.verify.check import Verification, claims_of, design_names, verify
from cluster.verify.expected import expected_cables

#: In the first line of every stack file an import writes: `import --out` replaces only a file that has it.
MARK = "imported by `gpu-cluster import`"
NIC_KEYS = {FABRIC: "fabric_nics", "storage": "storage_nics", "management": "management_nics"}
DEVICE = r"^[A-Za-z][A-Za-z0-9_.-]{0,14}$"
HEADER_FINDINGS = 20  # CABLE-* findings listed in the stack file's header


@dataclass
class Imported:
    """The stack file's text and mapping, the built design (None when it does not build), the
    CABLE-* findings of the comparison, and what the import could not say."""

    text: str
    mapping: dict[str, Any]
    design: Design
    result: Result
    verification: Verification | None
    schema: list[Finding] = field(default_factory=list)

    @property
    def cable_findings(self) -> list[Finding]:
        return self.verification.findings if self.verification is not None else []

    @property
    def exit_code(self) -> int:
        """0 the fabric is a regular design, cabled as it says; 1 cabling that fits none (CABLE-*
        findings at error) or an imported design that does not build; never 2 (that is unreadable input)."""
        if self.verification is None:
            return 1
        return 0 if not any(f.severity >= Severity.ERROR for f in self.cable_findings) else 1


def buildable(design: Design) -> dict[str, Any]:
    """The mapping with a stand-in GPU on each pool whose GPU is unknown (cabling does not depend
    on it): what is built to compare, never what is written."""
    mapping = copy.deepcopy(design.mapping)
    for pool in mapping["node_pools"]:
        if "gpu" not in pool:
            pool["gpu"] = design.stand_in_gpus[pool["name"]]
    return mapping


def _valid_names(names: list[str]) -> bool:
    import re

    return len(set(names)) == len(names) and all(re.match(DEVICE, name) and name != "lo" for name in names)


def refine(design: Design) -> list[Finding]:
    """Fill and NIC names against the resolved design; SCHEMA findings if it does not resolve."""
    spec, findings = resolve(buildable(design), RULE_IDS)
    if spec is None:
        return [finding for finding in findings if finding.severity >= Severity.ERROR]
    _choose_fill(design, spec)
    for pool in spec.pools:
        entry = next(item for item in design.mapping["node_pools"] if item["name"] == pool.name)
        for network, names in design.positions.get(pool.name, {}).items():
            _name_ports(design, entry, pool, spec, network, names)
    return []


def _choose_fill(design: Design, spec: ClusterSpec) -> None:
    """The fill whose leaf groups hold the most hosts where they are cabled (the default on a tie)."""
    assert spec.fabric is not None
    default = sf.Fabric().fill
    scores: dict[str, int] = {}
    for fill in ("even", "packed"):
        plan = size_fabric(spec.model_copy(update={"fabric": spec.fabric.model_copy(update={"fill": fill})}))
        position, score = 0, 0
        for pool in spec.pools:
            for index in range(pool.nodes):
                group = design.host_groups.get(host_name(pool, index))
                score += group == min(position // max(plan.nodes_per_leaf, 1), plan.groups - 1)
                position += 1
        scores[fill] = score
    best = max(scores, key=lambda fill: (scores[fill], fill == default))
    if best != default:
        fabric = design.mapping["fabric"]
        layout = fabric.pop("uplink_layout", None)  # after `fill`, in the contract's order
        fabric["fill"] = best
        if layout is not None:
            fabric["uplink_layout"] = layout


def _name_ports(design: Design, entry: dict[str, Any], pool: PoolSpec, spec: ClusterSpec, network: str,
                names: list[str]) -> None:
    """Give the pool's port names where the defaults would name them otherwise."""
    assert spec.fabric is not None
    key = NIC_KEYS[network]
    infiniband = network == FABRIC and spec.fabric.transport == "infiniband"
    if infiniband:
        wanted = [name.removesuffix("/1") for name in names]
        if any(not name.endswith("/1") for name in names):
            design.notes.append(f"pool {pool.name}: HCA ports other than port 1 ({', '.join(names[:3])}...) "
                                "cannot be written; the design names port 1 of each HCA")
        default, field_name = naming.fabric_devices(pool), "devices"
    else:
        wanted = names
        defaults = {FABRIC: naming.fabric_interfaces, "storage": naming.storage_interfaces,
                    "management": naming.management_interfaces}
        default, field_name = defaults[network](pool), "interfaces"
    if wanted == default or not wanted:
        return
    if not _valid_names(wanted):
        design.notes.append(f"pool {pool.name}: {network} port names {', '.join(wanted[:4])} are not one name per "
                            f"port; left to the convention ({', '.join(default[:2])}, ...)")
        return
    entry[key][field_name] = wanted


def compare(observed: Observed, result: Valid, networks: tuple[str, ...], ignore_speeds: bool) -> Verification:
    """The built design against the same data, as `verify` compares them (only the networks the
    data covers; without the links' speeds when they are ignored)."""
    cables = expected_cables(result.spec, result.topology)
    names = design_names(result.topology, cables)
    links = reader_links(observed, names)
    if links is not None and ignore_speeds:
        links = [link._replace(gbps=None) for link in links]
    gathered = claims_of(result.topology, cables, observed.lldp, observed.ib if observed.discovered else None,
                         observed.guid_names, names, links)
    if ignore_speeds:
        gathered.claims = [claim._replace(gbps=None) for claim in gathered.claims]
    return verify(result.spec, result.topology, cables, gathered, networks)


def header(design: Design, sources: str, verification: Verification | None) -> list[tuple[str, list[str]]]:
    """The stack file's comment sections: what the data could not say, and the cabling that
    fits no regular design."""
    found = [finding for finding in (verification.findings if verification else []) if finding.severity >= Severity.WARNING]
    cabling = [f"{finding.rule} {finding.message}" for finding in found[:HEADER_FINDINGS]]
    if len(found) > HEADER_FINDINGS:
        cabling.append(f"and {len(found) - HEADER_FINDINGS} more: `verify` this file with the same data lists them all")
    unnamed = ([f"devices whose names give no role, left out: {printable(', '.join(design.unnamed[:10]))}"
                + (f" and {len(design.unnamed) - 10} more" if len(design.unnamed) > 10 else "")]
               if design.unnamed else [])
    notes = [printable(note) for note in design.notes]  # they quote names and ports as the devices gave them
    return [("What the neighbor data does not say (check these):", [*notes, *unnamed]),
            ("Cabled differently from this design (as `verify` reports it; fix the cables, not the design):", cabling)]


def import_design(observed: Observed, options: Options, sources: str) -> Imported:
    """Infer, refine, build and compare; the stack file's text with it all."""
    with gc_paused():  # the design's cables and the claims in its names: millions of objects, no cycles
        return _import_design(observed, options, sources)


def _import_design(observed: Observed, options: Options, sources: str) -> Imported:
    design = infer(observed, options)
    schema = refine(design)
    # built to be compared, not judged (`validate` of the written file runs every rule); FAB-RADIX
    # only, for its SCHEMA error when a switch needs ports its OS has no names for (then no cable
    # of the design can be named, and nothing is compared)
    result = check(from_mapping(options.name, buildable(design)), rules=[Radix()])
    verification = None
    if isinstance(result, Valid) and not result.schema_failed:  # a design whose cables can be named
        verification = compare(observed, result, design.observed_networks, options.ignore_speeds)
    else:
        schema = schema or [finding for finding in result.findings if finding.rule == "SCHEMA"]
    summary = [f"{options.name}: {MARK} from {sources}."]
    text = stack_text(design.mapping, design.comments, summary, header(design, sources, verification))
    return Imported(text=text, mapping=design.mapping, design=design, result=result, verification=verification,
                    schema=schema)
