"""SARIF 2.1.0 for code scanning: rule metadata, and each finding at its stack-file line.

One run, one result per finding. A suppressed finding keeps its result with a `suppressions`
entry that points at `policy.suppress`, so code scanning shows it as dismissed, not gone.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from cluster import __version__
from cluster.findings import Finding, Severity
from cluster.formats.catalog import RuleInfo, rule_infos, unknown_rule
from cluster.formats.location import artifact_uri, line_of
from cluster.pipeline import Result

SCHEMA_URI = "https://json.schemastore.org/sarif-2.1.0.json"
LEVELS = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFO: "note"}
FINGERPRINT = "gpuClusterFinding/v1"


def _descriptor(info: RuleInfo) -> dict[str, Any]:
    return {
        "id": info.id,
        "name": "".join(part.capitalize() for part in info.id.split("-")),
        "shortDescription": {"text": info.title},
        "fullDescription": {"text": info.description},
        "defaultConfiguration": {"level": LEVELS[info.severity]},
    }


def _location(result: Result, path: str, uri: str | None) -> dict[str, Any]:
    """A physical location (file and line) when the stack came from a file, plus the config path."""
    location: dict[str, Any] = {"logicalLocations": [{"fullyQualifiedName": path, "kind": "member"}]}
    if uri is not None:
        physical: dict[str, Any] = {"artifactLocation": {"uri": uri}}
        line = line_of(result, path)
        if line > 0:
            physical["region"] = {"startLine": line}
        location["physicalLocation"] = physical
    return location


def _result(result: Result, finding: Finding, index: int, uri: str | None) -> dict[str, Any]:
    # Stable across runs and line moves: what is wrong where, not the line it is on.
    digest = hashlib.sha256(f"{result.stack}\0{finding.rule}\0{finding.path}".encode()).hexdigest()[:32]
    item: dict[str, Any] = {
        "ruleId": finding.rule,
        "ruleIndex": index,
        "level": LEVELS[finding.severity],
        "message": {"text": f"{finding.path}: {finding.message}. Fix: {finding.hint}"},
        "locations": [_location(result, finding.path, uri)],
        "partialFingerprints": {FINGERPRINT: digest},
        "properties": {"path": finding.path, "hint": finding.hint, "severity": str(finding.severity)},
    }
    if finding.suppressed:
        item["suppressions"] = [
            {
                "kind": "inSource",
                "status": "accepted",
                "justification": f"{finding.rule} is listed in policy.suppress of the stack file",
                "location": _location(result, "policy.suppress", uri),
            }
        ]
    return item


def to_sarif(result: Result) -> str:
    """The validation as a SARIF 2.1.0 log (JSON text)."""
    infos = rule_infos()
    for finding in result.findings:
        if finding.rule not in {info.id for info in infos}:
            infos.append(unknown_rule(finding.rule))
    index = {info.id: position for position, info in enumerate(infos)}
    source = result.loaded.source
    uri = artifact_uri(source) if source is not None else None
    run: dict[str, Any] = {
        "tool": {
            "driver": {
                "name": "gpu-cluster",
                "version": __version__,
                "rules": [_descriptor(info) for info in infos],
            }
        },
        # One code-scanning category per stack: an upload may carry one run per category.
        "automationDetails": {"id": f"gpu-cluster/{result.stack}/"},
        "invocations": [{"executionSuccessful": True, "exitCode": result.exit_code}],
        "results": [_result(result, finding, index[finding.rule], uri) for finding in result.findings],
        "properties": {"stack": result.stack, "ok": result.ok},
    }
    if uri is not None:
        run["artifacts"] = [{"location": {"uri": uri}, "roles": ["analysisTarget"]}]
    return json.dumps({"$schema": SCHEMA_URI, "version": "2.1.0", "runs": [run]}, indent=2)
