"""Helpers (no tests) for the policy tests: feed mock-recorded resources to the pack through
the analyzer servicer's own Analyze / AnalyzeStack, the path `pulumi preview --policy-pack`
takes (protobuf Struct -> deserialize -> unknown-checking proxy -> validate -> report_violation).
The servicer is built without starting its gRPC server (PolicyPack would start one and block)."""

from __future__ import annotations

import sys
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from typing import Any

from google.protobuf import struct_pb2
from pulumi.runtime import proto
from pulumi_policy import EnforcementLevel
from pulumi_policy.policy import _PolicyAnalyzerServicer
from test_components_support import ROOT, run_program

from cluster.loader import load_stack

sys.path.insert(0, str(ROOT / "policy"))
import gpu_cluster_policies as policies

EXAMPLES = ("aws-p5e", "gcp-a3ultra", "azure-ndh200", "prod")


@dataclass(frozen=True)
class Violation:
    policy: str
    message: str
    urn: str


def servicer(config: Mapping[str, Mapping[str, Any]] | None = None) -> Any:
    """The pack's analyzer, configured as `--policy-pack-config` would ({policy: {key: value}};
    an `enforcementLevel` key sets the policy's level, as in the CLI's file)."""
    analyzer = _PolicyAnalyzerServicer("gpu-cluster", "0.0.1", policies.policies(), EnforcementLevel.MANDATORY)
    if config:
        levels = {"advisory": proto.ADVISORY, "mandatory": proto.MANDATORY, "disabled": proto.DISABLED}
        analyzer.Configure(proto.ConfigureAnalyzerRequest(policyConfig={
            name: proto.PolicyConfig(
                enforcementLevel=levels[str(values.get("enforcementLevel", "mandatory"))],
                properties=struct({key: value for key, value in values.items() if key != "enforcementLevel"}))
            for name, values in config.items()}), None)
    return analyzer


@cache
def recorded(stack: str) -> Any:
    """The example stack's program run offline (cached: one run per stack per session)."""
    loaded = load_stack(stack)
    assert loaded.data is not None
    return run_program(loaded.data, stack=stack)


def struct(props: Mapping[str, Any]) -> struct_pb2.Struct:
    message = struct_pb2.Struct()
    message.update(dict(props))
    return message


def _violations(response: Any) -> list[Violation]:
    return [Violation(item.policyName, item.message, item.urn) for item in response.diagnostics]


def analyze(registration: Any, props: Mapping[str, Any] | None = None) -> list[Violation]:
    """Every resource policy on one resource (its recorded inputs, or `props` instead)."""
    request = proto.AnalyzeRequest(type=registration.type, urn=registration.urn, name=registration.name,
                                   properties=struct(registration.inputs if props is None else props))
    return _violations(servicer().Analyze(request, None))


def analyze_stack(resources: list[tuple[Any, Mapping[str, Any]]],
                  config: Mapping[str, Mapping[str, Any]] | None = None) -> list[Violation]:
    """The stack policy on (registration, props) pairs, the pack configured with `config`."""
    request = proto.AnalyzeStackRequest(resources=[
        proto.AnalyzerResource(type=registration.type, urn=registration.urn, name=registration.name,
                               properties=struct(props), parent=registration.parent,
                               propertyDependencies={key: proto.AnalyzerPropertyDependencies(urns=list(urns))
                                                     for key, urns in registration.dependencies.items()})
        for registration, props in resources])
    return _violations(servicer(config).AnalyzeStack(request, None))
