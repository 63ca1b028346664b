"""The pipeline, each stage one call, each importing only the stages below it (tests/test_layers.py):

1. load (cluster.loader): the stack file read safely, its structure and settings checked;
2. resolve (cluster.resolve): the spec, every default and catalog lookup filled in;
3. limits (cluster.limits): a design too large for this machine refused before it is built;
4. build (cluster.topology): the frozen Topology, the one networkx graph of the physical cluster,
   with what derives from the graph alone (loads, port numbers, the fabric tree) as cached properties;
5. derive (cluster.addressing): default pools widened where the design needs it, the pool fit
   check; the QoS the renderers really write (cluster.artifacts) is derived on first use, once;
6. rules (cluster.rules): read the spec, the graph and what was derived; never change them;
7. policy: suppressions and the fail_on threshold.

It stops between stages when one produced SCHEMA errors, like a compiler's phases. Rendering,
exports and the Pulumi components come after, from the Result (commands, __main__.py).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cache, partial

from cluster.addressing import fit_default_pools
from cluster.artifacts import rendered_qos
from cluster.findings import Finding, Severity
from cluster.limits import limit_findings
from cluster.loader import Loaded, from_mapping, load_stack
from cluster.resolve import resolve
from cluster.rules import ALL_RULES, RULE_IDS, Derived, Rule, apply_policy, run_rules
from cluster.spec import ClusterSpec
from cluster.topology import Topology, build


@dataclass
class Result:
    """Everything one validation produced."""

    loaded: Loaded
    spec: ClusterSpec | None = None
    topology: Topology | None = None
    findings: list[Finding] = field(default_factory=list)

    @property
    def stack(self) -> str:
        return self.loaded.stack

    @property
    def schema_failed(self) -> bool:
        return self.spec is None or any(f.rule == "SCHEMA" and not f.suppressed for f in self.findings)

    @property
    def ok(self) -> bool:
        """No finding at or above policy.fail_on (error when the spec could not be read)."""
        if self.schema_failed:
            return False
        threshold = self.spec.policy.fail_on if self.spec else Severity.ERROR
        return not any(finding.severity >= threshold for finding in self.findings)

    @property
    def exit_code(self) -> int:
        if self.schema_failed:
            return 2
        return 0 if self.ok else 1


def check(loaded: Loaded, rules: list[Rule] | None = None) -> Result:
    """Validate an already-loaded stack: spec, graph, rules, policy."""
    result = Result(loaded=loaded, findings=list(loaded.findings))
    if loaded.data is None or result.findings:
        result.findings.sort(key=Finding.sort_key)
        return result
    spec, findings = resolve(loaded.data, RULE_IDS)
    result.findings.extend(findings)
    if spec is None:
        result.findings.sort(key=Finding.sort_key)
        return result
    too_large = limit_findings(spec)
    if too_large:  # refused before building: any stack file is answered in bounded time and memory
        result.findings.extend(too_large)
        result.findings.sort(key=Finding.sort_key)
        return result
    result.topology = build(spec)
    spec, address_check = fit_default_pools(spec, result.topology)
    result.spec = spec
    derived = Derived(address_check=lambda: address_check,
                      rendered_qos=cache(partial(rendered_qos, spec, result.topology)))  # read back once, if asked
    result.findings.extend(run_rules(ALL_RULES if rules is None else rules, spec, result.topology, derived))
    result.findings = apply_policy(result.findings, spec.policy.suppress)
    return result


def validate(stack: str) -> Result:
    """Validate STACK (a name under stacks/ or a path)."""
    return check(load_stack(stack))


def validate_mapping(stack: str, cluster: object) -> Result:
    """Validate an already-parsed `gpu-cluster:cluster` value (the Pulumi program's config)."""
    return check(from_mapping(stack, cluster))
