"""The Pulumi program: load -> spec -> graph -> rules -> report -> components.

`pulumi up` runs it through the project's __main__.py (two lines that call main()); `python -m
cluster plan` runs this very file offline under the SDK's mocks (components/offline.py). It sits in
the package, not beside Pulumi.yaml, so that `plan` runs it from any directory, and a project
`gpu-cluster init` starts holds no copy of it. A design that fails validation registers nothing:
every finding is logged, then the program stops.
"""

import json

import pulumi

from cluster import loader, parts, pipeline, report, settings
from components import secrets
from components.cluster import GpuCluster, GpuClusterArgs


def main() -> None:
    """Read the stack's config, check the design, stop on failure, build the components, export."""
    config = pulumi.Config("gpu-cluster")
    stack = pulumi.get_stack()
    # load: the stack's gpu-cluster:cluster, or the design of the stack gpu-cluster:design names
    stack_settings = {key: config.get(key) for key in settings.SETTINGS if config.get(key) is not None}
    # the provider settings beside the design (aws:region, gcp:project, ...): compared with `cloud`
    provider_config = {key: value for key in loader.PROVIDER_KEYS
                       if (value := pulumi.Config(key.split(":")[0]).get(key.split(":")[1])) is not None}
    loaded = loader.from_config(stack, config.get_object("cluster"), stack_settings, provider_config)
    result = pipeline.check(loaded)  # spec -> graph -> rules

    if not isinstance(result, pipeline.Valid) or not result.ok or loaded.data is None:
        for finding in result.findings:
            pulumi.log.error(f"{finding.rule} ({finding.severity}) at {finding.path}: {finding.message}; hint: {finding.hint}")
        raise pulumi.RunError(f"stack {stack} failed validation ({len(result.findings)} findings): nothing was registered")
    for finding in result.findings:
        pulumi.log.warn(f"{finding.rule} ({finding.severity}) at {finding.path}: {finding.message}; hint: {finding.hint}")

    # which part of the design this stack deploys, and the core stack a pod part checks
    part, part_findings = parts.choose(stack_settings.get("part"), result.spec, result.topology)
    core_stack, core_findings = settings.core_stack(part, stack_settings.get("design"), stack_settings.get("core_stack"),
                                                    pulumi.get_organization() or "organization", pulumi.get_project())
    part_problems = part_findings or core_findings
    if part_problems:
        for finding in part_problems:
            pulumi.log.error(f"{finding.rule} at {finding.path}: {finding.message}; hint: {finding.hint}")
        raise pulumi.RunError(f"stack {stack}: {part_problems[0].message}: nothing was registered")

    try:  # switch / BMC logins: secret config or environment only, handed on as a secret output
        credentials = secrets.device_credentials(config)
    except secrets.PlaintextCredential as error:
        pulumi.log.error(str(error))
        raise pulumi.RunError(f"stack {stack}: a credential is set in plain config: nothing was registered") from None

    design = report.summary(result.spec, result.topology)  # report
    # every part of a split design writes into one tree: build/<the stack that holds the design>
    artifacts_dir = config.get("artifacts_dir") or f"build/{loaded.design or stack}"
    # The validated stack file rides on the GpuCluster component: CrossGuard's stack policy sees only
    # resources, so this is how `pulumi preview --policy-pack policy` re-validates the design.
    validated = json.dumps(loaded.data, sort_keys=True, separators=(",", ":"))
    fingerprint = settings.design_sha256(loaded.data)  # what a pod stack checks against its core stack
    cluster = GpuCluster(result.spec.name, GpuClusterArgs(  # components
        result.spec, result.topology, artifacts_dir, validated,
        part=part, core_stack=core_stack, design_sha256=fingerprint))

    pulumi.export("part", part)
    pulumi.export("design_sha256", fingerprint)
    pulumi.export("gpus", design["gpus"])
    pulumi.export("gbps_per_gpu", design["gbps_per_gpu"])
    pulumi.export("oversubscription", design["oversubscription"])
    pulumi.export("switches", design["switches"])
    pulumi.export("node_group_ids", cluster.node_group_ids)
    if result.spec.is_cloud:  # what a user needs next: the networks' ids and the way in
        pulumi.export("network", cluster.network)
        pulumi.export("access", cluster.access)
    if cluster.kubernetes_networks is not None:  # GKE: the Network objects the Jobs' interfaces name
        pulumi.export("kubernetes_networks", cluster.kubernetes_networks)
    pulumi.export("artifacts_dir", artifacts_dir if result.spec.target == "onprem" else None)
    if credentials is not None:
        pulumi.export("device_credentials", credentials)


if __name__ == "__main__":  # run as a file: plan runs it so (runpy), under the SDK's mocks
    main()
