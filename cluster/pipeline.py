"""The pipeline, each stage one call, each importing only the stages below it (tests/test_layers.py):

1. load (cluster.loader): the stack file read safely, its structure and settings checked;
2. resolve (cluster.resolve): the spec, every default and catalog lookup filled in;
3. limits (cluster.limits): a design too large for this machine refused before it is built;
4. build (cluster.topology): the frozen Topology, the one networkx graph of the physical cluster,
   with what derives from the graph alone (loads, port numbers, the fabric tree) as cached properties;
5. derive (cluster.addressing, cluster.intent): default pools widened where the design needs it,
   the pool fit check, and the QoS intent (both sides of the plan as every config writes it);
6. rules (cluster.rules): read the spec, the graph and what was derived; never change them;
7. policy: suppressions and the fail_on threshold.

It stops between stages when one produced SCHEMA errors, like a compiler's phases: the result is
then `Invalid` (findings only); past the build it is `Valid` (spec, topology, findings). Rendering,
exports and the Pulumi components come after, from a Valid result (commands, __main__.py).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace

from cluster import credentials, parts
from cluster.addressing import fit_default_pools
from cluster.findings import Finding
from cluster.inputs import Unreadable, read_text_bounded
from cluster.intent.management import telemetry_findings, trap_findings
from cluster.intent.qos import fabric_qos_intent
from cluster.intent.storage_qos import storage_port_intent
from cluster.limits import limit_findings
from cluster.loader import MAX_BYTES, MAX_NODES, Loaded, from_mapping, load_stack
from cluster.resolve import resolve
from cluster.rules import ALL_RULES, RULE_IDS, Derived, Rule, apply_policy, run_rules
from cluster.spec import ClusterSpec
from cluster.topology import Topology, build
from cluster.words import counted

# Told each stage as it starts, in words with its count (a verb's progress line on a terminal).
Stage = Callable[[str], None]


def _quiet(text: str) -> None:
    return None


@dataclass
class Invalid:
    """A stack stopped before its design was built: input that cannot be read, SCHEMA findings,
    or a design refused as too large for this machine. There is no spec or topology to use."""

    loaded: Loaded
    findings: list[Finding]

    @property
    def stack(self) -> str:
        return self.loaded.stack

    schema_failed = True
    ok = False
    exit_code = 2


@dataclass
class Valid:
    """A stack whose design was built and checked: the spec, its topology and every finding
    (which may still fail the policy: see `ok`)."""

    loaded: Loaded
    spec: ClusterSpec
    topology: Topology
    findings: list[Finding]

    @property
    def stack(self) -> str:
        return self.loaded.stack

    @property
    def schema_failed(self) -> bool:
        return any(f.rule == "SCHEMA" and not f.suppressed for f in self.findings)

    @property
    def ok(self) -> bool:
        """No finding at or above policy.fail_on, and no SCHEMA error."""
        if self.schema_failed:
            return False
        return not any(finding.severity >= self.spec.policy.fail_on for finding in self.findings)

    @property
    def exit_code(self) -> int:
        if self.schema_failed:
            return 2
        return 0 if self.ok else 1


Result = Valid | Invalid  # what every stage after the pipeline reads; isinstance(result, Valid) to use the design


def _invalid(loaded: Loaded, findings: list[Finding]) -> Invalid:
    return Invalid(loaded=loaded, findings=sorted(findings, key=Finding.sort_key))


def check(loaded: Loaded, rules: list[Rule] | None = None, stage: Stage = _quiet) -> Result:
    """Validate an already-loaded stack: spec, graph, rules, policy; no finding shows a credential.
    `stage` is told each stage as it starts."""
    result = _check(loaded, rules, stage)
    values = _credential_values(loaded)
    if values:
        result.findings = sorted((_redacted(finding, values) for finding in result.findings), key=Finding.sort_key)
    return result


def _credential_values(loaded: Loaded) -> set[str]:
    """The credentials this run knows: from the environment, and those the stack file holds in
    plain text (read again only then: the loader reports it, and keeps no value)."""
    values = credentials.environment_values()
    if loaded.source is not None and any(finding.path in credentials.CREDENTIAL_PATHS for finding in loaded.findings):
        try:
            text = read_text_bounded(loaded.source, MAX_BYTES, "stack file")
        except Unreadable:
            return values
        values |= credentials.plaintext_values(text, MAX_NODES)
    return values


def _redacted(finding: Finding, values: set[str]) -> Finding:
    return replace(finding, path=credentials.redact(finding.path, values),
                   message=credentials.redact(finding.message, values), hint=credentials.redact(finding.hint, values))


def _check(loaded: Loaded, rules: list[Rule] | None, stage: Stage) -> Result:
    if loaded.data is None or loaded.findings:
        return _invalid(loaded, list(loaded.findings))
    stage("resolving the spec")
    spec, findings = resolve(loaded.data, RULE_IDS, provider_config=loaded.provider_config)
    if spec is None:
        return _invalid(loaded, findings)
    stage(f"sizing and building the graph ({counted(spec.gpus, 'GPU')} on {counted(spec.nodes, 'node')})")
    too_large, plan = limit_findings(spec)  # the fabric sized once, for the limits and the build
    if too_large:  # refused before building: any stack file is answered in bounded time and memory
        return _invalid(loaded, [*findings, *too_large])
    topology = build(spec, plan)
    spec, address_check = fit_default_pools(spec, topology)
    intent = fabric_qos_intent(spec)
    storage = storage_port_intent(spec)  # what storage ports follow: the storage network's plan, or the fabric's
    derived = Derived(address_check=lambda: address_check, qos_intent=lambda: intent, storage_intent=lambda: storage)
    chosen = ALL_RULES if rules is None else rules
    stage(f"checking {counted(len(chosen), 'rule')} on {counted(len(topology.switch_nodes), 'switch')}")
    findings.extend(run_rules(chosen, spec, topology, derived))
    findings.extend(telemetry_findings(spec, topology))  # what the built switches push
    findings.extend(trap_findings(spec, topology))  # and which send SNMP traps
    findings.extend(parts.design_findings(loaded.settings, spec, topology))  # as plan and pulumi up refuse them
    return Valid(loaded=loaded, spec=spec, topology=topology, findings=apply_policy(findings, spec.policy.suppress))


def validate(stack: str, stage: Stage = _quiet) -> Result:
    """Validate STACK (a name under stacks/ or a path); `stage` is told each stage as it starts."""
    stage("reading the stack file")
    return check(load_stack(stack), stage=stage)


def validate_mapping(stack: str, cluster: object) -> Result:
    """Validate an already-parsed `gpu-cluster:cluster` value (the Pulumi program's config)."""
    return check(from_mapping(stack, cluster))
