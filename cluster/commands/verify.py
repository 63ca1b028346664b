"""`verify STACK --lldp DIR [--ib FILE] [--partial] [--format text|json|sarif]`: the built fabric against the design.

Exit codes as `validate`: 0 as designed, 1 CABLE-* findings at or above policy.fail_on (a
designed cable no data covers is one, CABLE-UNVERIFIED, unless --partial; with not one designed
cable seen, always), 2 a stack that cannot be read, or neighbor data that cannot be (CABLE-INPUT
findings, every unreadable file at once, in the format asked for).
"""

from __future__ import annotations

import argparse
import dataclasses
import hashlib
import json
import sys
from pathlib import Path

from cluster.cli import VERBS
from cluster.findings import Severity
from cluster.formats.sarif import FINGERPRINT, LEVELS, to_sarif
from cluster.pipeline import Valid, validate
from cluster.report import to_text
from cluster.topology import NETWORKS
from cluster.verify.check import Verification, gather, verify
from cluster.verify.expected import expected_cables
from cluster.verify.match import CABLE_RULES

FORMATS = ("text", "json", "sarif")


def add_parser(verbs: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    parser = verbs.add_parser("verify", help=VERBS["verify"])
    parser.add_argument("stack", help="stack name (dev -> stacks/Pulumi.dev.yaml) or path")
    parser.add_argument("--lldp", type=Path, metavar="DIR",
                        help="directory of per-device LLDP files named <device>.json "
                             "(lldpctl -f json, or a switch OS's own LLDP output)")
    parser.add_argument("--ib", type=Path, metavar="FILE", help="ibnetdiscover output (plain or -p)")
    parser.add_argument("--ib-map", type=Path, metavar="FILE", help="node-name map: 0xGUID \"design name\" per line")
    parser.add_argument("--network", action="append", choices=NETWORKS,
                        help="check only these networks (repeatable); default every network with data")
    parser.add_argument("--partial", action="store_true",
                        help="the collection leaves devices out on purpose: designed cables with no data from either "
                             "end are warnings, not errors (unless not one designed cable was seen)")
    parser.add_argument("--format", choices=FORMATS, default="text")


def run(args: argparse.Namespace) -> int:
    if args.lldp is None and args.ib is None:
        print("python -m cluster verify: error: give --lldp DIR and/or --ib FILE", file=sys.stderr)
        return 2
    result = validate(args.stack)
    if not isinstance(result, Valid) or result.schema_failed:
        print(to_text(result))
        return 2
    if result.spec.fabric is None:  # every network of a cloud stack is the provider's
        print(f"verify: {result.stack} runs on {result.spec.target}: its networks are the provider's, so there are no "
              "cables of ours to check; verify an on-prem stack", file=sys.stderr)
        return 2
    cables = expected_cables(result.spec, result.topology)
    gathered = gather(result.topology, cables, args.lldp, args.ib, args.ib_map)
    networks = args.network
    if networks is None and args.lldp is None:
        networks = ["fabric"]  # an InfiniBand discovery sees only the fabric
    checked = verify(result.spec, result.topology, cables, gathered, networks, partial=args.partial)
    if args.format == "sarif":
        print(sarif(result, checked))
    else:
        print(to_json(result.stack, checked) if args.format == "json" else text(result.stack, checked))
    return checked.exit_code


def sarif(validation: Valid, checked: Verification) -> str:
    """validate's SARIF log over the CABLE-* findings, each at its config path's stack-file line.

    Many cable findings share one config path (`node_pools[0].fabric_nics`), so each result's
    fingerprint also covers its message: code scanning must not merge two different cables.
    """
    shown = dataclasses.replace(validation, findings=checked.findings)
    log = json.loads(to_sarif(shown))
    for rule in log["runs"][0]["tool"]["driver"]["rules"]:
        if rule["id"] in CABLE_RULES:
            title, description, severity = CABLE_RULES[rule["id"]]
            rule["shortDescription"] = {"text": title}
            rule["fullDescription"] = {"text": description}
            rule["defaultConfiguration"] = {"level": LEVELS[severity]}
    for item in log["runs"][0]["results"]:
        key = f"{validation.stack}\0{item['ruleId']}\0{item['message']['text']}"
        item["partialFingerprints"][FINGERPRINT] = hashlib.sha256(key.encode()).hexdigest()[:32]
        if item["ruleId"] == "CABLE-INPUT":  # the neighbor file itself, not a line of the stack file
            path = Path(item["properties"]["path"])
            uri = path.as_uri() if path.is_absolute() else path.as_posix()
            item["locations"] = [{"physicalLocation": {"artifactLocation": {"uri": uri}}}]
    log["runs"][0]["invocations"] = [{"executionSuccessful": not checked.unreadable, "exitCode": checked.exit_code}]
    return json.dumps(log, indent=2)


def cable_rows(checked: Verification) -> list[dict[str, object]]:
    comparison = checked.comparison
    return [
        {"network": network, "tier": tier, "designed": designed,
         "matched": comparison.matched.get((network, tier), 0),
         "unverified": comparison.unverified.get((network, tier), 0)}
        for (network, tier), designed in sorted(comparison.expected.items(),
                                                key=lambda item: (NETWORKS.index(item[0][0]), item[0][1]))
    ]


def to_json(stack: str, checked: Verification) -> str:
    return json.dumps({
        "stack": stack,
        "ok": checked.ok,
        "findings": [finding.to_dict() for finding in checked.findings],
        "cables": cable_rows(checked),
        "observed_links": checked.comparison.observed_links,
    }, indent=2)


def text(stack: str, checked: Verification) -> str:
    counts = {level: sum(1 for f in checked.findings if f.severity == level and not f.suppressed)
              for level in (Severity.ERROR, Severity.WARNING)}
    verdict = "could not read its input" if checked.unreadable else "as designed" if checked.ok else "FAILED"
    lines = [f"{stack}: verify {verdict} ({counts[Severity.ERROR]} errors, {counts[Severity.WARNING]} warnings)"]
    for severity in (Severity.ERROR, Severity.WARNING, Severity.INFO):
        group = [f for f in checked.findings if f.severity == severity]
        if group:
            lines += ["", f"{str(severity).upper()}S" if severity != Severity.INFO else "INFO"]
            for finding in group:
                tag = " (suppressed)" if finding.suppressed else ""
                lines.append(f"  {finding.rule}{tag} at {finding.path}: {finding.message}")
                lines.append(f"      hint: {finding.hint}")
    lines += ["", "CABLES (matched / designed)"]
    for row in cable_rows(checked):
        note = f"  ({row['unverified']} unverified: no data from either end)" if row["unverified"] else ""
        lines.append(f"  {row['network']:<11} {row['tier']:<12} {row['matched']:>6} / {row['designed']}{note}")
    lines.append(f"  links reported: {checked.comparison.observed_links}")
    return "\n".join(lines)
