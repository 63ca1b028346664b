"""The policy pack's decisions as a table: whole stacks (recorded by `plan`'s mock run, edited into
the shape each row describes) through pulumi-policy's own analyzer, every resource policy on every
resource and the stack policies on the stack. Each row passes, or fails with exactly the named
policy."""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import pytest
from test_components_support import cloud_stack, run_program
from test_policy_support import analyze, analyze_stack, recorded

from cluster.loader import load_stack
from components.offline import Registration

Pairs = list[tuple[Any, dict[str, Any]]]


def pairs_of(outcome: Any, edits: dict[str, Callable[[dict[str, Any]], None]] | None = None) -> Pairs:
    """(registration, props) for every resource, props edited per registration name suffix."""
    pairs = []
    for registration in outcome.resources:
        props = copy.deepcopy(dict(registration.inputs))
        for suffix, edit in (edits or {}).items():
            if registration.name.endswith(suffix):
                edit(props)
        pairs.append((registration, props))
    return pairs


def extra(pairs: Pairs, type_: str, name: str, props: dict[str, Any]) -> Pairs:
    """`pairs` with one more resource, registered under the stack."""
    stack = pairs[0][0].urn.split("::")[0]
    registration = Registration(f"{stack}::gpu-cluster::{type_}::{name}", type_, name, "", True, props)
    return [*pairs, (registration, props)]


def attached(pairs: Pairs, type_: str, name: str, props: dict[str, Any], **dependencies: str) -> Pairs:
    """`pairs` with one more resource whose inputs come from resources of `pairs` ({input: name
    suffix}), as the engine records property dependencies."""
    urns = {key: tuple(item.urn for item, _ in pairs if item.name.endswith(suffix))
            for key, suffix in dependencies.items()}
    stack = pairs[0][0].urn.split("::")[0]
    registration = Registration(f"{stack}::gpu-cluster::{type_}::{name}", type_, name, "", True, props,
                                dependencies=urns)
    return [*pairs, (registration, props)]


def efa_rules_as_resources() -> Pairs:
    """The EFA group with no inline rules and its self rules as aws:vpc rule resources."""
    pairs = pairs_of(_aws(), {"efa-sg": lambda props: props.update(ingress=[], egress=[])})
    for kind, direction in (("securityGroupIngressRule", "ingress"), ("securityGroupEgressRule", "egress")):
        pairs = attached(pairs, f"aws:vpc/{kind}:{kind[0].upper()}{kind[1:]}", f"efa-{direction}",
                         {"securityGroupId": "<t-fabric-efa-sg>", "referencedSecurityGroupId": "<t-fabric-efa-sg>",
                          "ipProtocol": "-1"}, securityGroupId="efa-sg", referencedSecurityGroupId="efa-sg")
    return pairs


def two_types_on_one_reservation() -> Pairs:
    data = cloud_stack("aws", "p5.48xlarge")
    data["node_pools"] = [{"name": "h100", "nodes": 2, "instance_type": "p5.48xlarge",
                           "cloud": {"reservation": "cr-0123456789abcdef0"}},
                          {"name": "h200", "nodes": 2, "instance_type": "p5en.48xlarge",
                           "cloud": {"reservation": "cr-0123456789abcdef1"}}]
    return pairs_of(run_program(data), {"h200-template": lambda props: props["capacityReservationSpecification"][
        "capacityReservationTarget"].update(capacityReservationId="cr-0123456789abcdef0")})


def violated(pairs: Pairs) -> set[str]:
    found = {violation.policy for registration, props in pairs for violation in analyze(registration, props)}
    return found | {violation.policy for violation in analyze_stack(pairs)}


def _aws(**cloud: Any) -> Any:
    return run_program(cloud_stack("aws", "p5e.48xlarge", **cloud))


def _gcp(**cloud: Any) -> Any:
    return run_program(cloud_stack("gcp", "a3-ultragpu-8g", **cloud))


def _mega() -> Any:
    return run_program({**cloud_stack("gcp", "a3-megagpu-8g"), "policy": {"suppress": ["FAB-GPU-NIC"]}})


def tcp_only(props: dict[str, Any]) -> None:
    for rule in props["ingress"] + props["egress"]:
        rule.update(protocol="tcp", fromPort=0.0, toPort=65535.0)


def cpu_login(props: dict[str, Any]) -> None:
    props.update(instanceType="m7i.xlarge", networkInterfaces=props["networkInterfaces"][:1])


def second_primary(props: dict[str, Any]) -> None:
    props["networkInterfaces"].append(copy.deepcopy(props["networkInterfaces"][0]))


def one_gpu_vpc(props: dict[str, Any]) -> None:
    props["network"] = "<t-fabric-gpu0-vpc>"


def halves(key: str) -> Callable[[dict[str, Any]], None]:
    def edit(props: dict[str, Any]) -> None:
        if key == "ingress":
            props["ingress"][0]["cidrBlocks"] = ["0.0.0.0/1", "128.0.0.0/1"]
        elif key == "sourceRanges":
            props["sourceRanges"] = ["0.0.0.0/1", "128.0.0.0/1"]
        else:
            props["securityRules"][0]["sourceAddressPrefixes"] = ["0.0.0.0/1", "128.0.0.0/1"]
    return edit


def _gke_created() -> dict[str, Any]:
    return {**load_stack("gcp-a3ultra-gke").data, "scheduler": {"kind": "gke", "create": True}}


def _eks_created() -> dict[str, Any]:
    data = copy.deepcopy(load_stack("aws-p6-eks").data)
    data["cloud"].pop("vpc_id")
    return {**data, "scheduler": {"kind": "eks", "create": True, "zones": ["us-east-1a", "us-east-1b"]}}


def _aks_created() -> dict[str, Any]:
    return {**load_stack("azure-ndh200-aks").data, "scheduler": {"kind": "aks", "create": True, "version": "1.33"}}


def public_endpoint(*cidrs: str) -> Callable[[dict[str, Any]], None]:
    """An EKS cluster's endpoint made public, admitting `cidrs` (none: EKS's default, everyone)."""
    def edit(props: dict[str, Any]) -> None:
        props["vpcConfig"].update(endpointPublicAccess=True, **({"publicAccessCidrs": list(cidrs)} if cidrs else {}))
    return edit


def _home(target: str) -> dict[str, Any]:
    instance_type = {"aws": "p5e.48xlarge", "gcp": "a3-ultragpu-8g", "azure": "Standard_ND96isr_H200_v5"}[target]
    return {**cloud_stack(target, instance_type), "storage": {"home": {}}}


def new_group_beside_the_block() -> Pairs:
    template = next(item for item in _aws(market="capacity-block", reservation="cr-0123456789abcdef0").resources
                    if item.name.endswith("gpu-template"))
    return pairs_of(_aws(), {"gpu-template": lambda props: props.update(copy.deepcopy(dict(template.inputs)))})


ROWS: list[tuple[str, Callable[[], Pairs], str | None]] = [
    # --- right: passes
    ("aws-p5e as planned (Capacity Block, no new placement group)", lambda: pairs_of(recorded("aws-p5e")), None),
    ("gcp-a3ultra as planned (MIG bound to its reservation, no external policy)",
     lambda: pairs_of(recorded("gcp-a3ultra")), None),
    ("A3 Ultra without a reservation (MIG with a HIGH_THROUGHPUT workload policy)", lambda: pairs_of(_gcp()), None),
    ("azure-ndh200 as planned", lambda: pairs_of(recorded("azure-ndh200")), None),
    ("targeted ODCR without a new placement group", lambda: pairs_of(_aws(reservation="cr-0123456789abcdef0")), None),
    ("on demand in a cluster placement group", lambda: pairs_of(_aws()), None),
    ("a CPU login group and its template, no placement group", lambda: pairs_of(
        _aws(), {"gpu-template": cpu_login, "gpu-group": lambda props: props.pop("placementGroup")}), None),
    ("a bastion instance of a CPU type", lambda: extra(pairs_of(_aws()), "aws:ec2/instance:Instance", "bastion",
                                                       {"instanceType": "t3.micro", "subnetId": "subnet-1"}), None),
    ("a GKE node pool with a workload policy", lambda: extra(
        pairs_of(recorded("gcp-a3ultra")), "gcp:container/nodePool:NodePool", "gpu-pool",
        {"nodeConfig": {"machineType": "a3-ultragpu-8g"}, "placementPolicy": {"policyName": "wp-high-throughput"},
         "networkConfig": {"enablePrivateNodes": True}}), None),
    ("aws-p6-eks as planned (EKS node group on the launch template)", lambda: pairs_of(recorded("aws-p6-eks")), None),
    ("gcp-a3ultra-gke as planned (GKE node pool, private nodes)", lambda: pairs_of(recorded("gcp-a3ultra-gke")),
     None),
    ("azure-ndh200-aks as planned (AKS node pool)", lambda: pairs_of(recorded("azure-ndh200-aks")), None),
    ("A3 Mega with one VPC per GPU NIC", lambda: pairs_of(_mega()), None),
    ("gcp-a3ultra-gke creating its GKE cluster (multi-networking, Dataplane V2)", lambda: pairs_of(
        run_program(_gke_created())), None),
    ("aws-p6-eks creating its EKS cluster (private endpoint)", lambda: pairs_of(run_program(_eks_created())), None),
    ("an EKS public endpoint admitting one office range", lambda: pairs_of(run_program(_eks_created()), {
        "management-eks": public_endpoint("203.0.113.0/24")}), None),
    ("azure-ndh200-aks creating its AKS cluster (private cluster)", lambda: pairs_of(run_program(_aks_created())),
     None),
    ("storage.home on each cloud (OpenZFS, Filestore, NetApp Files)", lambda: [
        pair for target in ("aws", "gcp", "azure") for pair in pairs_of(run_program(_home(target)))], None),
    ("a CPU bastion with a public IP", lambda: extra(pairs_of(_aws()), "aws:ec2/instance:Instance", "bastion", {
        "instanceType": "t3.micro", "subnetId": "subnet-1", "associatePublicIpAddress": True,
        "metadataOptions": {"httpTokens": "required"}}), None),
    ("a GCP login VM with an external IP", lambda: extra(pairs_of(recorded("gcp-a3ultra")),
                                                         "gcp:compute/instance:Instance", "login", {
        "machineType": "n2-standard-8", "networkInterfaces": [{"subnetwork": "s", "accessConfigs": [{}]}]}), None),
    ("the EFA group's self rules as separate rule resources", efa_rules_as_resources, None),
    ("each pool on a reservation of its own type", lambda: pairs_of(run_program({
        **cloud_stack("aws", "p5.48xlarge"), "node_pools": [
            {"name": "h100", "nodes": 2, "instance_type": "p5.48xlarge", "cloud": {"reservation": "cr-0123456789abcdef0"}},
            {"name": "h200", "nodes": 2, "instance_type": "p5en.48xlarge",
             "cloud": {"reservation": "cr-0123456789abcdef1"}}]})), None),
    ("a stack with no GpuCluster (advisory only)", lambda: [
        (item, props) for item, props in pairs_of(_aws()) if not item.type.endswith("GpuCluster")],
     "gpu-cluster-present"),
    # --- wrong: fails with the policy named
    ("EFA security group with TCP-only self rules", lambda: pairs_of(_aws(), {"efa-sg": tcp_only}),
     "gpu-fabric-security-group-not-shared"),
    ("EFA security group without egress", lambda: pairs_of(_aws(), {"efa-sg": lambda props: props.update(egress=[])}),
     "gpu-fabric-security-group-not-shared"),
    ("A3 Mega with every GPU NIC in one VPC", lambda: pairs_of(_mega(), {
        f"t-fabric-gpu{nic}-subnet": one_gpu_vpc for nic in range(1, 8)}), "gcp-gpu-vpc-per-nic"),
    ("two interfaces at card 0 device 0", lambda: pairs_of(_aws(), {"gpu-template": second_primary}),
     "gpu-efa-per-network-card"),
    ("a p5 aws:ec2/Instance without EFA", lambda: extra(pairs_of(_aws()), "aws:ec2/instance:Instance", "gpu-node",
                                                        {"instanceType": "p5.48xlarge", "subnetId": "subnet-1",
                                                         "metadataOptions": {"httpTokens": "required",
                                                                             "httpPutResponseHopLimit": 2}}),
     "gpu-efa-per-network-card"),
    ("MRDMA NICs on a VPC without the RoCE profile", lambda: pairs_of(recorded("gcp-a3ultra"), {
        "fabric-rdma-vpc": lambda props: props.pop("networkProfile")}), "gcp-rdma-network-profile"),
    ("MRDMA NICs on the RoCE VPC of another zone", lambda: pairs_of(recorded("gcp-a3ultra"), {
        "fabric-rdma-vpc": lambda props: props.update(networkProfile=props["networkProfile"].replace(
            "us-central1-b", "us-central1-c"))}), "gcp-rdma-network-profile"),
    ("IMDSv1 on a GPU launch template", lambda: pairs_of(_aws(), {
        "gpu-template": lambda props: props["metadataOptions"].update(httpTokens="optional")}), "gpu-imdsv2"),
    ("IMDSv2 with a hop limit containers cannot use", lambda: pairs_of(_aws(), {
        "gpu-template": lambda props: props["metadataOptions"].pop("httpPutResponseHopLimit")}), "gpu-imdsv2"),
    ("a 150-VM ND scale set", lambda: pairs_of(recorded("azure-ndh200"), {
        "h200-vmss": lambda props: props["sku"].update(capacity=150.0)}), "gpu-placement-group"),
    ("one reservation across two instance types", two_types_on_one_reservation, "gpu-reservation"),
    ("Spot on an ODCR", lambda: pairs_of(_aws(reservation="cr-0123456789abcdef0"), {
        "gpu-template": lambda props: props.update(instanceMarketOptions={"marketType": "spot"})}), "gpu-reservation"),
    ("Spot VMs on a GCP reservation", lambda: pairs_of(recorded("gcp-a3ultra"), {
        "h200-template": lambda props: props["scheduling"].update(provisioningModel="SPOT")}), "gpu-reservation"),
    ("a GPU type missing from the catalog", lambda: pairs_of(_aws(), {"gpu-template": lambda props: props.update(
        instanceType="p3dn.24xlarge")}), "gpu-type-in-catalog"),
    ("an ND size missing from the catalog", lambda: pairs_of(recorded("azure-ndh200"), {
        "h200-vmss": lambda props: props["sku"].update(name="Standard_ND40rs_v2")}), "gpu-type-in-catalog"),
    ("a catalog type gpu-cluster does not deploy (p6e-gb200)", lambda: pairs_of(_aws(), {
        "gpu-template": lambda props: props.update(instanceType="p6e-gb200.36xlarge")}), "gpu-type-in-catalog"),
    ("SSH through two /1 CIDRs (AWS)", lambda: pairs_of(_aws(ssh_cidrs=["203.0.113.0/24"]), {
        "management-sg": halves("ingress")}), "ssh-not-open-to-world"),
    ("SSH through two /1 CIDRs (GCP)", lambda: pairs_of(recorded("gcp-a3ultra"), {
        "management-ssh": halves("sourceRanges")}), "ssh-not-open-to-world"),
    ("SSH through two /1 CIDRs (Azure)", lambda: pairs_of(recorded("azure-ndh200"), {
        "management-nsg": halves("securityRules")}), "ssh-not-open-to-world"),
    ("a new placement group beside a Capacity Block", new_group_beside_the_block, "gpu-placement-group"),
    ("a MIG without a workload policy or a reservation", lambda: pairs_of(_gcp(), {
        "gpu-group": lambda props: props.pop("resourcePolicies")}), "gpu-placement-group"),
    ("a workload policy on a MIG bound to a reservation", lambda: pairs_of(recorded("gcp-a3ultra"), {
        "h200-group": lambda props: props.update(resourcePolicies={"workloadPolicy": "wp"})}),
     "gpu-placement-group"),
    ("an EKS node group's template with an instance profile", lambda: pairs_of(recorded("aws-p6-eks"), {
        "b200-template": lambda props: props.update(iamInstanceProfile={"name": "profile"})}),
     "gpu-eks-launch-template"),
    ("an EKS node group's template naming a subnet", lambda: pairs_of(recorded("aws-p6-eks"), {
        "b200-template": lambda props: props["networkInterfaces"][3].update(subnetId="subnet-1")}),
     "gpu-eks-launch-template"),
    ("an EKS node group's template on demand with no placement group", lambda: pairs_of(recorded("aws-p6-eks"), {
        "b200-template": lambda props: [props.pop(key) for key in ("instanceMarketOptions",
                                                                   "capacityReservationSpecification")]}),
     "gpu-eks-launch-template"),
    ("a created GKE cluster without multi-networking", lambda: pairs_of(run_program(_gke_created()), {
        "management-gke": lambda props: props.pop("enableMultiNetworking")}), "gke-multi-networking"),
    ("a created GKE cluster on the legacy datapath", lambda: pairs_of(run_program(_gke_created()), {
        "management-gke": lambda props: props.update(datapathProvider="LEGACY_DATAPATH")}), "gke-multi-networking"),
    ("an EKS endpoint public to everyone (no publicAccessCidrs)", lambda: pairs_of(run_program(_eks_created()), {
        "management-eks": public_endpoint()}), "kubernetes-api-not-public"),
    ("an EKS endpoint public through two /1 CIDRs", lambda: pairs_of(run_program(_eks_created()), {
        "management-eks": public_endpoint("0.0.0.0/1", "128.0.0.0/1")}), "kubernetes-api-not-public"),
    ("an EKS endpoint left at EKS's default (public)", lambda: pairs_of(run_program(_eks_created()), {
        "management-eks": lambda props: props["vpcConfig"].pop("endpointPublicAccess")}),
     "kubernetes-api-not-public"),
    ("an AKS cluster that is not private and names no authorized ranges", lambda: pairs_of(
        run_program(_aks_created()), {"management-aks": lambda props: props.pop("apiServerAccessProfile")}),
     "kubernetes-api-not-public"),
    ("a created GKE cluster with a public endpoint and no authorized networks", lambda: pairs_of(
        run_program(_gke_created()), {"management-gke": lambda props: props["privateClusterConfig"].update(
            enablePrivateEndpoint=False)}), "kubernetes-api-not-public"),
    ("a GKE GPU node pool without private nodes", lambda: pairs_of(recorded("gcp-a3ultra-gke"), {
        "h200-nodepool": lambda props: props["networkConfig"].pop("enablePrivateNodes")}), "gpu-no-public-ip"),
    ("an AKS GPU node pool with node public IPs", lambda: pairs_of(recorded("azure-ndh200-aks"), {
        "h200-agentpool": lambda props: props.update(enableNodePublicIp=True)}), "gpu-no-public-ip"),
    ("a public IP on a GPU node", lambda: pairs_of(recorded("aws-p5e"), {
        "h200-template": lambda props: props["networkInterfaces"][0].update(associatePublicIpAddress=True)}),
     "gpu-no-public-ip"),
]


@pytest.mark.parametrize("case, build, policy", ROWS, ids=[row[0] for row in ROWS])
def test_policy_table(case: str, build: Callable[[], Pairs], policy: str | None) -> None:
    assert violated(build()) == (set() if policy is None else {policy})


# --- on premises: the design gate (gpu-cluster-design) and the pack's config -------------------
# Each row: an on-prem stack file (its gpu-cluster:cluster), the pack's config as given to
# `pulumi preview --policy-pack policy --policy-pack-config FILE`, and the policy that fails (or
# None). tests/test_engine.py runs these very rows through the Pulumi engine and its analyzer.


def dev_design() -> dict[str, Any]:
    loaded = load_stack("dev")
    assert loaded.data is not None
    return copy.deepcopy(dict(loaded.data))


def dev_200g() -> dict[str, Any]:
    """dev on 200G fabric NICs: 200 Gbps per GPU, below the recommended 400 (warnings only)."""
    design = dev_design()
    design["node_pools"][0]["fabric_nics"] = {"count": 8, "gbps": 200}
    return design


GATE_ON_WARNINGS = {"gpu-cluster-design": {"fail_on": "warning"}}
ONPREM_STACKS: dict[str, Callable[[], dict[str, Any]]] = {"dev": dev_design, "dev-200g": dev_200g}
ONPREM_ROWS: list[tuple[str, str, dict[str, dict[str, Any]], str | None]] = [
    ("dev as planned", "dev", {}, None),
    ("dev under a gate that fails on warnings", "dev", GATE_ON_WARNINGS, None),
    ("200G per GPU (warnings) under the stack's own fail_on", "dev-200g", {}, None),
    ("200G per GPU under a gate that fails on warnings", "dev-200g", GATE_ON_WARNINGS, "gpu-cluster-design"),
]


@pytest.mark.parametrize("case, stack, config, policy", ONPREM_ROWS, ids=[row[0] for row in ONPREM_ROWS])
def test_onprem_policy_table(case: str, stack: str, config: dict[str, dict[str, Any]], policy: str | None) -> None:
    outcome = run_program(ONPREM_STACKS[stack](), stack=stack)
    assert outcome.ok, outcome.errors
    pairs = pairs_of(outcome)
    found = {violation.policy for registration, props in pairs for violation in analyze(registration, props)}
    found |= {violation.policy for violation in analyze_stack(pairs, config)}
    assert found == (set() if policy is None else {policy})
