"""`import --lldp DIR [--ib FILE [--ib-map FILE]] [--name N] [--out FILE]`: a built fabric as a stack file.

Reads what the devices report (the inputs `verify` reads), writes a stack file that reproduces the
fabric (cluster.importer), and compares that design with the same data as `verify` would: what is
cabled but fits no regular design is a CABLE-* finding at the device, never a different design.

Exit codes: 0 the fabric is a regular design cabled as it says; 1 CABLE-* findings at error (the
stack file is written all the same, with them in its header), or an imported design that does not
build; 2 input that cannot be read (CABLE-INPUT, every file at once), data with no fabric in it,
and usage errors. Without --out the stack file goes to stdout and the report to stderr.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import stat
import sys
from pathlib import Path
from typing import TextIO

from cluster.atomic import write_atomic
from cluster.catalog import load_catalog
from cluster.cli import VERBS
from cluster.commands.verify import text as verify_text
from cluster.findings import printable
from cluster.importer.infer import NothingToImport, Options
from cluster.importer.observe import Observed, observe
from cluster.importer.run import MARK, Imported, import_design
from cluster.inputs import kind_of
from cluster.pipeline import Valid
from cluster.stackfile import StackFile

FORMATS = ("text", "json")


def add_parser(verbs: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    parser = verbs.add_parser("import", help=VERBS["import"])
    parser.add_argument("--lldp", type=Path, metavar="DIR",
                        help="directory of per-device LLDP files named <device>.json (as `verify --lldp` reads them)")
    parser.add_argument("--ib", type=Path, metavar="FILE", help="ibnetdiscover output (plain or -p) of the GPU fabric")
    parser.add_argument("--ib-map", type=Path, metavar="FILE", help="node-name map: 0xGUID \"design name\" per line")
    parser.add_argument("--name", default="imported", help="the stack's name (a DNS label; default: imported)")
    parser.add_argument("--out", type=Path, metavar="FILE",
                        help="write the stack file here (default: stdout); it replaces only a stack file an import wrote")
    parser.add_argument("--gpu", action="append", default=[], metavar="POOL=GPU",
                        help="the GPU of a pool whose host names do not name it (repeatable)")
    parser.add_argument("--model", action="append", default=[], metavar="PATTERN=MODEL",
                        help="the catalog model of the switches whose names match a shell pattern, where LLDP "
                             "does not report it (repeatable; the first match wins)")
    parser.add_argument("--ignore-speeds", action="store_true",
                        help="take speeds from the switch models and servers, not from the links (a lab's "
                             "virtual links report 10 Gb/s)")
    parser.add_argument("--format", choices=FORMATS, default="text")


def _usage(message: str) -> int:
    print(f"import: error: {message}", file=sys.stderr)
    return 2


def _pairs(values: list[str], what: str, known: list[str]) -> list[tuple[str, str]] | str:
    """`KEY=VALUE` options, VALUE one of `known`; or the message for the first bad one."""
    pairs = []
    for value in values:
        key, equals, item = value.partition("=")
        if not equals or not key or not item:
            return f"{what} takes KEY=VALUE, not {printable(value)!r}"
        if item not in known:
            return f"{what} {printable(value)}: unknown {printable(item)!r}; one of {', '.join(known)}"
        pairs.append((key, item))
    return pairs


def options(args: argparse.Namespace) -> Options | str:
    """The import's options, or the message for the first bad one."""
    if args.lldp is None and args.ib is None:
        return "give --lldp DIR and/or --ib FILE"
    refused = _out_refused(args.out) if args.out is not None else None  # before the import's work, not after it
    if refused:
        return refused
    if args.ib_map is not None and args.ib is None:
        return "--ib-map names the nodes of an --ib discovery; give --ib FILE too"
    pattern = StackFile.model_fields["name"].metadata[0].pattern
    if not re.match(pattern, args.name):
        return f"--name {printable(args.name)!r} is not a DNS label (lower-case letters, digits and -)"
    catalog = load_catalog()
    gpus = _pairs(args.gpu, "--gpu", sorted(catalog.gpus))
    models = _pairs(args.model, "--model", sorted(catalog.switches))
    for parsed in (gpus, models):
        if isinstance(parsed, str):
            return parsed
    assert not isinstance(gpus, str) and not isinstance(models, str)
    return Options(name=args.name, gpus=dict(gpus), models=tuple(models), ignore_speeds=args.ignore_speeds)


def _out_refused(out: Path) -> str | None:
    """Why the stack file cannot replace what is at `out` (None: nothing, an empty file, or a stack
    file an import wrote): the write renames over it, which would replace a device (/dev/null), a
    FIFO or a link itself, or a file the user wrote (their own stack file)."""
    try:
        info = os.lstat(out)
    except OSError:  # nothing there, or a path that cannot be: the write says which, with the path
        return None
    shown = printable(str(out))
    if stat.S_ISDIR(info.st_mode):
        return (f"--out {shown} is a directory: give the stack file's path, e.g. --out "
                f"{printable(str(out / 'Pulumi.imported.yaml'))}")
    if not stat.S_ISREG(info.st_mode):
        return f"--out {shown} is {kind_of(info.st_mode)}, not a regular file: nothing written; choose another --out"
    try:
        with open(out, "rb") as existing:
            first = existing.readline(4096)
    except OSError:  # unreadable: the write says why, with the path
        return None
    if info.st_size and MARK.encode() not in first:
        return (f"--out {shown} is a file of {info.st_size:,} bytes that no import wrote: nothing written; "
                "choose another --out, or remove it yourself")
    return None


def sources(args: argparse.Namespace) -> str:
    given = [f"LLDP of {args.lldp}" if args.lldp is not None else "", f"{args.ib}" if args.ib is not None else ""]
    return " and ".join(item for item in given if item)


def run(args: argparse.Namespace) -> int:
    chosen = options(args)
    if isinstance(chosen, str):
        return _usage(chosen)
    observed = observe(args.lldp, args.ib, args.ib_map)
    if observed.problems:
        return _unreadable(observed, args.format)
    try:
        imported = import_design(observed, chosen, sources(args))
    except NothingToImport as nothing:
        print(f"import: nothing to import: {nothing}", file=sys.stderr)
        return 2
    if args.out is not None:
        try:
            args.out.parent.mkdir(parents=True, exist_ok=True)
            write_atomic(args.out, imported.text)
        except OSError as error:  # the user's path, not the temporary file beside it
            why = "a folder on its path is a file" if isinstance(error, FileExistsError) else error.strerror or error
            print(f"import: cannot write {printable(str(args.out))}: {why}; nothing written; choose another --out",
                  file=sys.stderr)
            return 2
    report = sys.stdout if args.out is not None else sys.stderr
    if args.format == "json":
        print(to_json(imported, observed, args.out), file=report)
    else:
        text(imported, observed, args.out, report)
    if args.out is None:
        sys.stdout.write(imported.text)
    return imported.exit_code


def _unreadable(observed: Observed, form: str) -> int:
    if form == "json":
        print(json.dumps({"ok": False, "findings": [finding.to_dict() for finding in observed.problems]}, indent=2))
    else:
        print(f"import: could not read its input ({len(observed.problems)} problems); nothing written", file=sys.stderr)
        for finding in observed.problems:
            print(f"  {finding.rule} at {finding.path}: {finding.message}\n      hint: {finding.hint}", file=sys.stderr)
    return 2


def summary(imported: Imported) -> dict[str, object]:
    """The imported design at a glance."""
    mapping = imported.mapping
    fabric = mapping["fabric"]
    tiers = 3 if fabric.get("cores") else 2 if fabric.get("spines") else 1
    return {
        "pools": {pool["name"]: pool["nodes"] for pool in mapping["node_pools"]},
        "design": fabric["design"],
        "transport": fabric.get("transport", "roce"),
        "planes": fabric.get("planes", 1),
        "tiers": tiers,
        "leaves": fabric["leaves"], "spines": fabric["spines"], "cores": fabric.get("cores", 0),
        "pods": fabric.get("pods", 1),
        "networks": [name for name in ("storage", "management", "oob") if name in mapping],
    }


def to_json(imported: Imported, observed: Observed, out: Path | None) -> str:
    return json.dumps({
        "stack": imported.mapping["name"],
        "out": str(out) if out is not None else None,
        "ok": imported.exit_code == 0,
        "design": summary(imported),
        "notes": imported.design.notes,
        "unnamed": imported.design.unnamed,
        "links": len(observed.links),
        "findings": [finding.to_dict() for finding in [*imported.schema, *imported.cable_findings]],
    }, indent=2)


def text(imported: Imported, observed: Observed, out: Path | None, stream: TextIO) -> None:
    glance = summary(imported)
    pools = ", ".join(f"{name} x {nodes}" for name, nodes in glance["pools"].items())  # type: ignore[attr-defined]
    where = f"wrote {out}" if out is not None else "stack file on stdout"
    lines = [f"import: {where} ({imported.mapping['name']}): {len(observed.devices)} devices, {len(observed.links)} "
             f"links reported",
             f"  pools: {pools}",
             f"  fabric: {glance['transport']}, {glance['design']}, {glance['planes']} plane(s), {glance['tiers']} tiers: "
             f"{glance['leaves']} leaves, {glance['spines']} spines"
             + (f", {glance['cores']} cores in {glance['pods']} pods" if glance["cores"] else "")
             + (f"; also {', '.join(glance['networks'])}" if glance["networks"] else "")]  # type: ignore[arg-type]
    if imported.design.notes:
        lines.append(f"  {len(imported.design.notes)} things the data does not say, in the file's header:")
        lines.extend(f"    - {printable(note)}" for note in imported.design.notes)
    if imported.design.unnamed:
        # device names as the data gives them: a newline or an escape must not forge a report line
        lines.append(f"  left out, names give no role: {printable(', '.join(imported.design.unnamed[:10]))}")
    for finding in imported.schema:
        lines.append(f"  the imported design does not build: {finding.path}: {finding.message}")
    print("\n".join(lines), file=stream)
    if imported.verification is not None and isinstance(imported.result, Valid):
        print("", file=stream)
        print(verify_text(imported.mapping["name"], imported.verification), file=stream)
