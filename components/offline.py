"""Run the Pulumi program (components/program.py) offline under the SDK's mock runtime.

The program `pulumi up` runs (a project's __main__.py calls its main()) is executed with `runpy`
after `set_mocks`, so the plan is the program's own registrations, not a second description of
them. Every RegisterResource request is recorded with its parent URN; the mock echoes inputs back
as outputs (plus the name, since mocks do no auto-naming) and gives each resource the id `<name>`.
"""

from __future__ import annotations

import asyncio
import json
import logging
import runpy
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeAlias

import pulumi
from pulumi.runtime import mocks, settings
from pulumi.runtime.proto import resource_pb2
from pulumi.runtime.stack import run_pulumi_func
from pulumi.runtime.sync_await import _sync_await

PROJECT = "gpu-cluster"
# The program `pulumi up` runs (a project's __main__.py calls its main()), inside the package: plan
# runs it from any directory, in a checkout or after `pip install .`.
PROGRAM = Path(__file__).resolve().parent / "program.py"


def program() -> Path:
    """The Pulumi program `plan` runs: the package's own."""
    return PROGRAM


STACK_TYPE = "pulumi:pulumi:Stack"
STACK_REFERENCE = "pulumi:pulumi:StackReference"
ORGANIZATION = "organization"  # what a self-managed (DIY) backend calls every stack's organization
SECRET = "[secret]"  # what a secret stack output reads as offline (plan never prints its value)
# Invokes the program makes, answered with placeholders (no credentials offline).
# A property value as the engine carries it: JSON's shapes, every number a float (an exported
# value, resolved in-process, may still be an int).
WireValue: TypeAlias = "bool | int | float | str | list[WireValue] | dict[str, WireValue] | None"
INVOKE_RESULTS: dict[str, dict[str, WireValue]] = {
    "gcp:organizations/getProject:getProject": {"projectId": "<project>", "number": "<project-number>"},
    # scheduler eks: the existing cluster's security group, which the nodes' primary interface carries
    "aws:eks/getCluster:getCluster": {"vpcConfig": {"clusterSecurityGroupId": "<eks cluster security group>"}},
}


@dataclass(frozen=True)
class Registration:
    """One resource the program registered."""

    urn: str
    type: str
    name: str
    parent: str  # parent URN; the stack's URN for top-level resources
    custom: bool  # False for components
    inputs: Mapping[str, WireValue]  # wire shape: camelCase keys, numbers as floats
    read: bool = False  # read, not managed (a StackReference)
    # Input name -> URNs of the resources that input's value comes from (the engine's
    # propertyDependencies, which deploy-time policies see too); only inputs that have any.
    dependencies: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    provider: str = ""  # the explicit provider's reference (`<urn>::<id>`), "" for the default one
    aliases: tuple[str, ...] = ()  # earlier URNs of the resource (a rename: components.renames)
    protect: bool = False  # `pulumi destroy` refuses it (stateful: a file system)


@dataclass
class OfflineRun:
    """What one offline run of the program produced."""

    stack: str
    stack_urn: str = ""
    resources: list[Registration] = field(default_factory=list)
    outputs: dict[str, WireValue] = field(default_factory=dict)
    errors: list[str] = field(default_factory=list)  # pulumi.log.error messages
    warnings: list[str] = field(default_factory=list)
    failure: str | None = None  # the program stopped with pulumi.RunError

    @property
    def ok(self) -> bool:
        return self.failure is None and not self.errors


class _EchoMocks(mocks.Mocks):
    def __init__(self, references: Mapping[str, Mapping[str, WireValue]]) -> None:
        self.references = references

    def new_resource(self, args: mocks.MockResourceArgs) -> tuple[str, dict[str, WireValue]]:
        if args.typ == STACK_REFERENCE:  # a read of another stack: its outputs as `references` give them
            stack = str(args.inputs.get("name") or args.resource_id)
            return stack, {"name": stack, "outputs": dict(self.references.get(stack, {})), "secretOutputNames": []}
        placeholders = {key: _named(value, args.name) for key, value in OUTPUT_PLACEHOLDERS.get(args.typ, {}).items()}
        # Azure Native names a resource by its `resourceName` input (ManagedCluster), others by `name`
        named = args.inputs.get("name", args.inputs.get("resourceName") if args.typ.startswith("azure-native:")
                                else None) or args.name
        return f"<{args.name}>", _as_output(_merged({**args.inputs, "name": named}, placeholders))

    def call(self, args: mocks.MockCallArgs) -> tuple[dict[str, WireValue], list[tuple[str, str]]]:
        return dict(INVOKE_RESULTS.get(args.token, {})), []


def _uncounted(count: int) -> None:
    return None


# Outputs a program reads that no input echoes: the file systems' mount sources, as placeholders
# in the form the provider gives them (`plan` shows them; a real run reads the provider's).
OUTPUT_PLACEHOLDERS: dict[str, dict[str, WireValue]] = {
    "aws:fsx/lustreFileSystem:LustreFileSystem": {"dnsName": "<{name}.fsx>", "mountName": "<mountname>"},
    "aws:iam/role:Role": {"arn": "arn:aws:iam::<account>:role/{name}"},  # an EKS node group takes it
    # the security group EKS makes for a cluster the stack creates (scheduler.create), which its nodes carry
    "aws:eks/cluster:Cluster": {"vpcConfig": {"clusterSecurityGroupId": "<{name} cluster security group>"}},
    "gcp:lustre/instance:Instance": {"mountPoint": "<{name} ip>@tcp:/lustrefs"},
    "azure-native:storagecache:AmlFilesystem": {"clientInfo": {"mgsAddress": "<{name} mgs>"}},
    # the /home file systems (storage.home)
    "aws:fsx/openZfsFileSystem:OpenZfsFileSystem": {"dnsName": "<{name}.fsx>"},
    "gcp:filestore/instance:Instance": {"networks": [{"ipAddresses": ["<{name} ip>"]}]},
    "azure-native:netapp:CapacityPoolVolume": {"mountTargets": [{"ipAddress": "<{name} ip>"}]},
}


def _merged(inputs: dict[str, WireValue], placeholders: dict[str, WireValue]) -> dict[str, WireValue]:
    """`inputs` with the placeholders added, inside a nested input too (EKS's vpcConfig keeps its subnets)."""
    merged = dict(inputs)
    for key, value in placeholders.items():
        given = merged.get(key)
        merged[key] = _merged(given, value) if isinstance(given, dict) and isinstance(value, dict) else value
    return merged


def _named(value: WireValue, name: str) -> WireValue:
    """A placeholder with the resource's name filled in."""
    if isinstance(value, str):
        return value.replace("{name}", name)
    if isinstance(value, dict):
        return {key: _named(item, name) for key, item in value.items()}
    if isinstance(value, list):
        return [_named(item, name) for item in value]
    return value


def _as_output(echoed: dict[str, WireValue]) -> dict[str, WireValue]:
    """Inputs echoed as outputs, where an output has another shape than its input: Azure takes a
    scale set's user-assigned identities as a list of ids and returns a map of id -> details, and
    the SDK refuses to read a list where its output type is a map."""
    identity = echoed.get("identity")
    if isinstance(identity, dict) and isinstance(identity.get("userAssignedIdentities"), list):
        ids = identity["userAssignedIdentities"]
        assert isinstance(ids, list)
        echoed = {**echoed, "identity": {**identity, "userAssignedIdentities": {str(key): {} for key in ids}}}
    return echoed


class _RecordingMonitor(mocks.MockMonitor):
    def __init__(self, echo: mocks.Mocks) -> None:
        super().__init__(echo)
        self.lock = threading.Lock()
        self.recorded: list[Registration] = []
        self.registered: Callable[[int], None] = _uncounted  # told the count after each registration
        self.stack_urn = ""
        self.loops: set[asyncio.AbstractEventLoop] = set()

    def make_urn(self, parent: str, type_: str, name: str) -> str:
        """The URN the engine gives: its type is the chain of every ancestor's type but the stack's
        (`GpuCluster$GpuFabric$...RenderedFiles`). The SDK's mock monitor prefixes the direct
        parent's type only, the stack's included, so `plan` printed URNs `pulumi up` never has
        (found by tests/test_engine.py)."""
        if parent and parent != self.stack_urn:
            type_ = f"{parent.split('::')[2]}${type_}"
        return "urn:pulumi:" + "::".join([settings.get_stack(), settings.get_project(), type_, name])

    def _worker_loop(self) -> None:
        """The SDK gives each RPC worker thread an event loop and never closes it, which can
        print an 'Invalid file descriptor' traceback at interpreter exit. Track them to close."""
        if threading.current_thread() is threading.main_thread():
            return
        try:
            loop = asyncio.get_event_loop()
        except RuntimeError:
            loop = None
        if loop is None or loop.is_closed():
            loop = asyncio.new_event_loop()
            asyncio.set_event_loop(loop)
        with self.lock:
            self.loops.add(loop)

    def close_loops(self) -> None:
        """Close the worker threads' loops (idle once the run is over)."""
        with self.lock:
            for loop in self.loops:
                if not loop.is_running() and not loop.is_closed():
                    loop.close()
            self.loops.clear()

    # The SDK's MockMonitor leaves these gRPC methods unannotated: they are called through the
    # class, which pyproject.toml's mypy untyped_calls_exclude names (it does not see super()).
    # Their messages are typed by the SDK's protobuf stubs.
    def Invoke(self, request: resource_pb2.ResourceInvokeRequest) -> resource_pb2.ResourceInvokeResponse:
        self._worker_loop()
        response: resource_pb2.ResourceInvokeResponse = mocks.MockMonitor.Invoke(self, request)
        return response

    def ReadResource(self, request: resource_pb2.ReadResourceRequest) -> resource_pb2.ReadResourceResponse:
        self._worker_loop()
        response: resource_pb2.ReadResourceResponse = mocks.MockMonitor.ReadResource(self, request)
        inputs = pulumi.runtime.rpc.deserialize_properties(request.properties)
        with self.lock:
            self.recorded.append(Registration(response.urn, request.type, request.name, request.parent, True,
                                              inputs, read=True))
            self.registered(len(self.recorded))
        return response

    def RegisterResource(self, request: resource_pb2.RegisterResourceRequest) -> resource_pb2.RegisterResourceResponse:
        self._worker_loop()
        response: resource_pb2.RegisterResourceResponse = mocks.MockMonitor.RegisterResource(self, request)
        if request.type == STACK_TYPE:
            self.stack_urn = response.urn
            return response
        inputs = pulumi.runtime.rpc.deserialize_properties(request.object)
        with self.lock:
            dependencies = {key: tuple(value.urns) for key, value in sorted(request.propertyDependencies.items())
                            if value.urns}
            self.recorded.append(Registration(response.urn, request.type, request.name, request.parent,
                                              bool(request.custom), inputs, dependencies=dependencies,
                                              provider=request.provider,
                                              aliases=tuple(alias.urn for alias in request.aliases if alias.urn),
                                              protect=bool(request.protect)))
            self.registered(len(self.recorded))
        return response


def _resolve(value: pulumi.Input[WireValue]) -> WireValue:
    """An exported value, or SECRET when it is a secret."""
    output = pulumi.Output.from_input(value)
    if _sync_await(output.is_secret()):
        return SECRET
    return _sync_await(output.future())


class _Messages(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.errors: list[str] = []
        self.warnings: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        if record.levelno >= logging.ERROR:
            self.errors.append(record.getMessage())
        elif record.levelno >= logging.WARNING:
            self.warnings.append(record.getMessage())


class _ReportedFailures(logging.Filter):
    """Drops asyncio's "Future exception was never retrieved" for a pulumi.RunError: when an
    output the program depends on fails (a pod part's core check), every resource that took it
    fails with the same error, which the run already reports once as its failure."""

    def filter(self, record: logging.LogRecord) -> bool:
        error = record.exc_info[1] if record.exc_info else None
        return not isinstance(error, pulumi.RunError)


logging.getLogger("asyncio").addFilter(_ReportedFailures())


def run(stack: str, cluster: Mapping[str, object] | None, artifacts_dir: str | None = None,
        program: Path = PROGRAM, secrets: Mapping[str, str] | None = None,
        part_settings: Mapping[str, str] | None = None,
        references: Mapping[str, Mapping[str, WireValue]] | None = None,
        provider_config: Mapping[str, str] | None = None,
        registered: Callable[[int], None] = _uncounted) -> OfflineRun:
    """Run `program` for STACK with `gpu-cluster:cluster` = `cluster`; return what it registered.

    `secrets` are further `gpu-cluster:` keys set as secret config (`pulumi config set --secret`);
    `part_settings` plain ones (part, design, core_stack: cluster.parts); `provider_config` the
    stack's provider settings as the stack file sets them (`aws:region`: ...). `references` answer
    StackReference reads: {fully qualified stack: its outputs}; a stack not named has none.
    `registered` is told the count of resources registered after each one (a progress line).
    Secret stack outputs come back as SECRET, never their value.
    Process-global: it replaces the Pulumi runtime settings (mocks, config, root stack).
    """
    config = {} if cluster is None else {f"{PROJECT}:cluster": json.dumps(cluster)}
    config.update({f"{PROJECT}:{key}": value for key, value in (part_settings or {}).items()})
    if artifacts_dir is not None:
        config[f"{PROJECT}:artifacts_dir"] = artifacts_dir
    config.update(provider_config or {})
    secret_keys = [f"{PROJECT}:{key}" for key in sorted(secrets or {})]
    config.update({f"{PROJECT}:{key}": value for key, value in (secrets or {}).items()})
    monitor = _RecordingMonitor(_EchoMocks(references or {}))
    monitor.registered = registered
    messages = _Messages()
    logger = logging.getLogger(f"{__name__}.{stack}")
    logger.handlers = [messages]
    logger.propagate = False
    logger.setLevel(logging.DEBUG)
    settings.reset_options(project=PROJECT, stack=stack, preview=False)  # forget the previous run's root stack
    mocks.set_mocks(monitor.mocks, project=PROJECT, stack=stack, preview=False, monitor=monitor, logger=logger,
                    organization=ORGANIZATION)
    pulumi.runtime.set_all_config(config, secret_keys)
    settings.SETTINGS.rpc_manager.clear()
    settings.SETTINGS.outputs.clear()
    outcome = OfflineRun(stack=stack)
    def program_run() -> None:
        runpy.run_path(str(program), run_name="__main__")

    try:
        _sync_await(run_pulumi_func(program_run))
    except pulumi.RunError as error:
        outcome.failure = str(error)
    finally:
        monitor.close_loops()
    root = settings.get_root_resource()
    exported = getattr(root, "outputs", {}) if outcome.failure is None else {}
    outcome.outputs = {key: _resolve(value) for key, value in exported.items()}
    outcome.stack_urn = monitor.stack_urn
    outcome.resources = sorted(monitor.recorded, key=lambda registration: registration.urn)
    outcome.errors, outcome.warnings = messages.errors, messages.warnings
    return outcome
