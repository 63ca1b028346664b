"""CrossGuard policies for gpu-cluster stacks: the design rules, re-checked at deploy time.

`cluster validate` checks the design; these policies check what is actually about to be
deployed, on the resources' real inputs (camelCase wire names, as the engine sends them), so a
hand edit, a new component version or a provider default cannot slip past the gate.

Importable on purpose: nothing here builds the PolicyPack (that starts a gRPC server and
blocks), only `policy/__main__.py` does. Tests call these policies' `validate` directly.
"""

from __future__ import annotations

import ipaddress
import json
import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING

from pulumi_policy import (
    EnforcementLevel,
    Policy,
    PolicyConfigSchema,
    PolicyResource,
    ReportViolation,
    ResourceValidationArgs,
    ResourceValidationPolicy,
    StackValidationArgs,
    StackValidationPolicy,
)

from cluster.catalog import load_catalog
from cluster.clouds.azure import PLACEMENT_GROUP_VMS as AZURE_PLACEMENT_GROUP_VMS
from cluster.pipeline import validate_mapping

if TYPE_CHECKING:
    from cluster.catalog import Instance

MANDATORY = EnforcementLevel.MANDATORY
ResourceCheck = Callable[[ResourceValidationArgs, ReportViolation], None]
StackCheck = Callable[[StackValidationArgs, ReportViolation], None]
CLUSTER_TYPE = "gpu-cluster:cluster:GpuCluster"
CARRIER = "validated_cluster"  # GpuCluster input and output: the stack's gpu-cluster:cluster as JSON
EFA_TYPES = ("efa", "efa-only")
AWS_LAUNCH_TEMPLATE = "aws:ec2/launchTemplate:LaunchTemplate"
AWS_INSTANCE = "aws:ec2/instance:Instance"
AWS_GROUP = "aws:autoscaling/group:Group"
AWS_PLACEMENT = "aws:ec2/placementGroup:PlacementGroup"
AWS_SECURITY_GROUP = "aws:ec2/securityGroup:SecurityGroup"
AWS_SG_RULE = "aws:ec2/securityGroupRule:SecurityGroupRule"
AWS_SG_INGRESS = "aws:vpc/securityGroupIngressRule:SecurityGroupIngressRule"
AWS_SG_EGRESS = "aws:vpc/securityGroupEgressRule:SecurityGroupEgressRule"
AWS_SG_RULES = (AWS_SG_RULE, AWS_SG_INGRESS, AWS_SG_EGRESS)
GCP_TEMPLATE = "gcp:compute/instanceTemplate:InstanceTemplate"
GCP_INSTANCE = "gcp:compute/instance:Instance"
GCP_FIREWALL = "gcp:compute/firewall:Firewall"
GCP_REGION_TEMPLATE = "gcp:compute/regionInstanceTemplate:RegionInstanceTemplate"
GCP_GROUP = "gcp:compute/instanceGroupManager:InstanceGroupManager"
GCP_REGION_GROUP = "gcp:compute/regionInstanceGroupManager:RegionInstanceGroupManager"
GCP_RESOURCE_POLICY = "gcp:compute/resourcePolicy:ResourcePolicy"
GCP_SUBNETWORK = "gcp:compute/subnetwork:Subnetwork"
GCP_NETWORK = "gcp:compute/network:Network"
GKE_CLUSTER = "gcp:container/cluster:Cluster"
GKE_NODE_POOL = "gcp:container/nodePool:NodePool"
AZURE_VMSS = "azure-native:compute:VirtualMachineScaleSet"
AWS_NODE_GROUP = "aws:eks/nodeGroup:NodeGroup"
GKE_NODE_POOL = "gcp:container/nodePool:NodePool"
AKS_AGENT_POOL = "azure-native:containerservice:AgentPool"
AZURE_NSG = "azure-native:network:NetworkSecurityGroup"
AZURE_RULE = "azure-native:network:SecurityRule"
WORLD = ("0.0.0.0/0", "::/0")
AZURE_ANY_SOURCE = ("*", "internet", "any", *WORLD)
SSH = 22


def _items(value: object) -> list[object]:
    """A list property as a list ([] when absent; a mapping or string is one item)."""
    if value is None:
        return []
    if isinstance(value, Sequence) and not isinstance(value, str):
        return list(value)
    return [value]


def _map(value: object) -> Mapping[str, object]:
    return value if isinstance(value, Mapping) else {}


def _int(value: object, default: int = 0) -> int:
    """Wire numbers are floats (and some providers take strings)."""
    if not isinstance(value, int | float | str):
        return default
    try:
        return int(value)
    except (OverflowError, ValueError):
        return default


def _true(value: object) -> bool:
    """pulumi-aws takes some booleans as strings ("true")."""
    return value is True or (isinstance(value, str) and value.strip().lower() == "true")


def _instance(target: str, instance_type: object) -> Instance | None:
    """The catalog's entry for a type gpu-cluster deploys (a type it only describes has a layout
    the components do not build, so the layout checks cannot speak for it: see gpu-type-in-catalog)."""
    if not isinstance(instance_type, str):
        return None
    instance = load_catalog().instance(target, instance_type)
    return instance if instance is not None and not instance.not_deployable else None


# --- AWS: EFA interfaces per network card, primary interface, public IPs --------------------


def efa_problems(instance_type: str, interfaces: list[Mapping[str, object]]) -> Iterator[str]:
    """Why a launch template's interfaces do not match its instance type's network cards."""
    instance = _instance("aws", instance_type)
    if instance is None:
        return
    slots = [(_int(nic.get("networkCardIndex")), _int(nic.get("deviceIndex")), str(nic.get("interfaceType") or "interface"))
             for nic in interfaces]
    taken: dict[tuple[int, int], int] = {}
    for slot in slots:
        taken[slot[:2]] = taken.get(slot[:2], 0) + 1
    twice = sorted(slot for slot, count in taken.items() if count > 1)
    if twice:
        yield ("two interfaces at one network card and device index ("
               + ", ".join(f"card {card} device {device}" for card, device in twice)
               + "); EC2 refuses the launch")
    primary = [slot for slot in slots if slot[:2] == (0, 0)]
    if not primary:
        yield "no primary interface on network card 0 device 0"
    elif primary[0][2] == "efa-only":
        yield "the primary interface (card 0 device 0) is efa-only, which takes no IP; make it 'interface' or 'efa'"
    efa_cards: dict[int, int] = {}
    for card, _device, kind in slots:
        if kind in EFA_TYPES:
            efa_cards[card] = efa_cards.get(card, 0) + 1
    cards = instance.network_cards or 1
    wanted = set(range(cards)) if instance.efa_on_card0 or cards == 1 else set(range(1, cards))
    missing = sorted(wanted - set(efa_cards))
    if missing:
        yield (f"{instance_type} has {cards} network cards, {len(wanted)} with EFA; the template has an EFA interface "
               f"on {len(efa_cards)}: missing on card(s) {_short(missing)}")
    extra = sorted(card for card in efa_cards if card not in wanted or efa_cards[card] > 1)
    if extra:
        yield f"EFA interfaces on card(s) {_short(extra)} that {instance_type} does not have or already serves"


def _short(numbers: list[int]) -> str:
    return ", ".join(str(number) for number in numbers[:8]) + (f" (+{len(numbers) - 8} more)" if len(numbers) > 8 else "")


def check_launch_template_efa(args: ResourceValidationArgs, report: ReportViolation) -> None:
    """AWS launch template: one EFA (efa or efa-only) per EFA network card of the instance
    type, per the catalog, and the primary interface on card 0 device 0. An aws:ec2/Instance of
    such a type needs its interfaces given too: launched with the default single ENA it has no
    EFA at all."""
    if args.resource_type == AWS_INSTANCE:
        instance = _instance("aws", args.props.get("instanceType"))
        if instance is None:
            return
        cards = {_int(_map(nic).get("networkCardIndex")) for nic in _items(args.props.get("networkInterfaces"))}
        if len(cards) < instance.network_cards:
            report(f"instance {args.name}: {args.props.get('instanceType')} with interfaces on {len(cards)} of its "
                   f"{instance.network_cards} network cards; without an EFA interface (aws:ec2/NetworkInterface "
                   "interfaceType efa or efa-only) on each card NCCL falls back to TCP: launch GPU nodes from a "
                   "launch template like components/aws/node_pool.py builds", None)
        return
    if args.resource_type != AWS_LAUNCH_TEMPLATE:
        return
    instance_type = args.props.get("instanceType")
    if _instance("aws", instance_type) is None:
        return  # not a GPU instance type this project knows (a bastion, a login node)
    interfaces = [_map(nic) for nic in _items(args.props.get("networkInterfaces"))]
    for problem in efa_problems(str(instance_type), interfaces):
        report(f"launch template {args.name}: {problem}; the interfaces must follow the instance's network cards "
               "(components/aws/node_pool.py network_interfaces)", None)


def gpu_type(resource_type: str, props: Mapping[str, object]) -> str | None:
    """The instance type of a launch template, instance, template or scale set when it is a GPU
    type (a catalog entry or a GPU family: AWS P, Compute Engine A, Azure ND), else None: CPU
    bastions, login and head nodes are not GPU nodes."""
    if resource_type in (AWS_LAUNCH_TEMPLATE, AWS_INSTANCE):
        target, name = "aws", props.get("instanceType")
    elif resource_type in (GCP_TEMPLATE, GCP_REGION_TEMPLATE, GCP_INSTANCE):
        target, name = "gcp", props.get("machineType")
    elif resource_type == GKE_NODE_POOL:
        target, name = "gcp", _map(props.get("nodeConfig")).get("machineType")
    elif resource_type == AZURE_VMSS:
        target, name = "azure", _map(props.get("sku")).get("name")
    elif resource_type == AKS_AGENT_POOL:
        target, name = "azure", props.get("vmSize")
    else:
        return None
    if isinstance(name, str) and (_instance(target, name) is not None or GPU_FAMILIES[target].match(name)):
        return name
    return None


def check_no_public_ip(args: ResourceValidationArgs, report: ReportViolation) -> None:
    """GPU nodes take no public address: AWS associatePublicIpAddress, GCP accessConfigs,
    Azure publicIPAddressConfiguration; a GKE GPU node pool sets networkConfig.enablePrivateNodes
    (else its nodes take the cluster's default, external IPs in a public cluster), an AKS one
    leaves enableNodePublicIp off. A CPU bastion or login VM may have one (its SSH is still held
    to cloud.ssh_cidrs by ssh-not-open-to-world)."""
    props = args.props
    if gpu_type(args.resource_type, props) is None:
        return
    found: list[str] = []
    if args.resource_type in (AWS_LAUNCH_TEMPLATE, AWS_INSTANCE):
        if _true(props.get("associatePublicIpAddress")):
            found.append("associatePublicIpAddress")
        for index, nic in enumerate(_items(props.get("networkInterfaces"))):
            if _true(_map(nic).get("associatePublicIpAddress")):
                found.append(f"networkInterfaces[{index}].associatePublicIpAddress")
    elif args.resource_type in (GCP_TEMPLATE, GCP_INSTANCE):
        for index, nic in enumerate(_items(props.get("networkInterfaces"))):
            for key in ("accessConfigs", "ipv6AccessConfigs"):
                if _items(_map(nic).get(key)):
                    found.append(f"networkInterfaces[{index}].{key}")
    elif args.resource_type == AZURE_VMSS:
        network = _map(_map(_map(props.get("virtualMachineProfile")).get("networkProfile")))
        for index, nic in enumerate(_items(network.get("networkInterfaceConfigurations"))):
            for ip_index, ip in enumerate(_items(_map(nic).get("ipConfigurations"))):
                if _map(ip).get("publicIPAddressConfiguration") is not None:
                    found.append(f"virtualMachineProfile.networkProfile.networkInterfaceConfigurations[{index}]"
                                 f".ipConfigurations[{ip_index}].publicIPAddressConfiguration")
    elif args.resource_type == GKE_NODE_POOL:
        if not _true(_map(props.get("networkConfig")).get("enablePrivateNodes")):
            found.append("networkConfig.enablePrivateNodes not true")
    elif args.resource_type == AKS_AGENT_POOL:
        if _true(props.get("enableNodePublicIp")):
            found.append("enableNodePublicIp")
    else:
        return
    for path in found:
        report(f"{args.name}: GPU nodes must not get a public IP ({path} is set); reach them through a bastion or "
               "the management network", None)


# --- GPU types the catalog does not know -------------------------------------------------------

# Instance families with GPUs and a GPU fabric: AWS P, Compute Engine A2 / A3 / A4 (A4X), Azure ND.
GPU_FAMILIES = {"aws": re.compile(r"^p\d"), "gcp": re.compile(r"^a\d[a-z]*-"), "azure": re.compile(r"^Standard_ND")}


def check_gpu_type_in_catalog(args: ResourceValidationArgs, report: ReportViolation) -> None:
    """A GPU instance type that the catalog does not describe passes every layout check unseen (no
    EFA cards, GPU NICs or placement to compare with): refuse it until it is added."""
    kind, props = args.resource_type, args.props
    if kind in (AWS_LAUNCH_TEMPLATE, AWS_INSTANCE):
        target, name = "aws", props.get("instanceType")
    elif kind in (GCP_TEMPLATE, GCP_REGION_TEMPLATE, GCP_INSTANCE):
        target, name = "gcp", props.get("machineType")
    elif kind == AZURE_VMSS:
        target, name = "azure", _map(props.get("sku")).get("name")
    else:
        return
    if not isinstance(name, str) or not GPU_FAMILIES[target].match(name):
        return
    described = load_catalog().instance(target, name)
    if described is None:
        report(f"{args.name}: {name} is a GPU type the catalog does not describe, so its fabric layout cannot be "
               "checked; add it to cluster/catalog/instances.yaml with its source", None)
    elif described.not_deployable:
        report(f"{args.name}: {name} is in the catalog, but its layout is not one gpu-cluster builds or checks: "
               f"{described.not_deployable}", None)


# --- Placement ----------------------------------------------------------------------------


def reserved_capacity(template: Mapping[str, object]) -> str | None:
    """What a launch template draws its capacity from: 'a Capacity Block', 'a targeted ODCR' or None."""
    if str(_map(template.get("instanceMarketOptions")).get("marketType") or "") == "capacity-block":
        return "a Capacity Block"
    target = _map(_map(template.get("capacityReservationSpecification")).get("capacityReservationTarget"))
    if target.get("capacityReservationId") or target.get("capacityReservationResourceGroupArn"):
        return "a targeted ODCR"
    return None


def _depends_on(resource: PolicyResource, key: str, *types: str) -> list[PolicyResource]:
    """The resources of `types` that the input `key` of `resource` comes from (the engine's
    property dependencies: which template, which placement group)."""
    return [dep for dep in resource.property_dependencies.get(key, []) if dep.resource_type in types]


def _aws_group_placement(group: PolicyResource) -> Iterator[str]:
    templates = [template for template in _depends_on(group, "launchTemplate", AWS_LAUNCH_TEMPLATE)
                 + _depends_on(group, "mixedInstancesPolicy", AWS_LAUNCH_TEMPLATE)
                 if _instance("aws", template.props.get("instanceType")) is not None]
    if not templates:
        return  # CPU, login or bastion nodes: no placement rule
    template = templates[0]
    new_groups = _depends_on(group, "placementGroup", AWS_PLACEMENT)
    capacity = reserved_capacity(template.props)
    if capacity is not None:
        for placement in new_groups:
            yield (f"auto scaling group {group.name}: a new placement group ({placement.name}) with {capacity} "
                   f"(launch template {template.name}); the reservation's capacity is not in that group, so "
                   "launches fail for capacity while the reservation has room: remove the placement group "
                   "(AWS ParallelCluster's PlacementGroupCapacityTypeValidator and "
                   "PlacementGroupCapacityReservationValidator)")
        return
    if not group.props.get("placementGroup"):
        yield (f"auto scaling group {group.name}: no placementGroup for {template.props.get('instanceType')} without "
               "a reservation; GPU nodes must share a cluster placement group for full EFA bandwidth")
    for placement in new_groups:
        if placement.props.get("strategy") != "cluster":
            yield (f"placement group {placement.name}: strategy {placement.props.get('strategy')!r}; GPU nodes "
                   "need strategy 'cluster'")


def _gcp_group_placement(group: PolicyResource) -> Iterator[str]:
    templates = [template for template in _depends_on(group, "versions", GCP_TEMPLATE, GCP_REGION_TEMPLATE)
                 if _instance("gcp", template.props.get("machineType")) is not None]
    if not templates:
        return
    workload = _map(group.props.get("resourcePolicies")).get("workloadPolicy")
    compact = any(_items(template.props.get("resourcePolicies")) for template in templates)
    reserved = [template for template in templates
                if _map(template.props.get("reservationAffinity")).get("type") == "SPECIFIC_RESERVATION"]
    if reserved:
        # The reservation's blocks place its VMs; "vanilla reservations don't support external
        # policies" (Cluster Toolkit's Slurm resume.py, update_reservation_props).
        if workload or compact:
            yield (f"managed instance group {group.name}: a placement or workload policy on VMs bound to a specific "
                   f"reservation (template {reserved[0].name}); the reservation places them and takes no external "
                   "policy: remove the policy")
        return
    if not workload and not compact:
        yield (f"managed instance group {group.name}: no workload policy (resourcePolicies.workloadPolicy) and no "
               "compact placement policy in its template; GPU VMs need a HIGH_THROUGHPUT workload policy")
    for policy in _depends_on(group, "resourcePolicies", GCP_RESOURCE_POLICY):
        kind = _map(policy.props.get("workloadPolicy")).get("type")
        if kind != "HIGH_THROUGHPUT":
            yield (f"workload policy {policy.name}: type {kind!r}; GPU VMs need HIGH_THROUGHPUT (HIGH_AVAILABILITY "
                   "spreads them apart)")


def _azure_scale_set_placement(scale_set: PolicyResource) -> Iterator[str]:
    if scale_set.props.get("singlePlacementGroup") is not True:
        yield (f"scale set {scale_set.name}: singlePlacementGroup is not true; InfiniBand connects VMs only within "
               "one placement group")
    capacity = _int(_map(scale_set.props.get("sku")).get("capacity"))
    if capacity > AZURE_PLACEMENT_GROUP_VMS:
        yield (f"scale set {scale_set.name}: {capacity} VMs in one placement group, which holds at most "
               f"{AZURE_PLACEMENT_GROUP_VMS}: Azure refuses it; split it into scale sets of at most "
               f"{AZURE_PLACEMENT_GROUP_VMS} (CLOUD-PLACEMENT)")


def check_placement(args: StackValidationArgs, report: ReportViolation) -> None:
    """GPU node groups are placed close together, in the way that fits their capacity: AWS a
    cluster placement group, except with a Capacity Block or targeted ODCR (then none); GCP a
    HIGH_THROUGHPUT workload policy on the MIG (or a compact policy in its template); Azure one
    placement group per ND scale set. Groups of CPU, login or bastion nodes are not checked."""
    for resource in args.resources:
        kind, props = resource.resource_type, resource.props
        if kind == AWS_GROUP:
            problems = list(_aws_group_placement(resource))
        elif kind in (GCP_GROUP, GCP_REGION_GROUP):
            problems = list(_gcp_group_placement(resource))
        elif kind == AZURE_VMSS and _instance("azure", _map(props.get("sku")).get("name")) is not None:
            problems = list(_azure_scale_set_placement(resource))
        else:
            continue
        for problem in problems:
            report(problem, resource.urn)


# --- EKS managed node groups on a launch template -------------------------------------------


def _eks_template_problems(group: PolicyResource) -> Iterator[str]:
    """What EKS refuses in a node group's launch template (EKS API LaunchTemplateSpecification: it
    "can't include SubnetId, IamInstanceProfile, RequestSpotInstances, HibernationOptions, or
    TerminateInstances"), and a GPU template with no reservation and no placement group."""
    for template in _depends_on(group, "launchTemplate", AWS_LAUNCH_TEMPLATE):
        props = template.props
        found = ["iamInstanceProfile"] if props.get("iamInstanceProfile") else []
        found += [f"networkInterfaces[{index}].subnetId" for index, nic in enumerate(_items(props.get("networkInterfaces")))
                  if _map(nic).get("subnetId")]
        if _map(props.get("instanceMarketOptions")).get("marketType") == "spot":
            found.append("instanceMarketOptions.marketType spot (the node group's capacityType SPOT says it)")
        if props.get("hibernationOptions"):
            found.append("hibernationOptions")
        for key in found:
            yield (f"EKS node group {group.name}: its launch template {template.name} sets {key}, which EKS refuses "
                   "in a node group's template; the node group gives the subnet, the node role and the capacity type")
        if (_instance("aws", props.get("instanceType")) is not None and reserved_capacity(props) is None
                and not _map(props.get("placement")).get("groupName")):
            yield (f"EKS node group {group.name}: launch template {template.name} of "
                   f"{props.get('instanceType')} has no placement group and no reservation; GPU nodes must share a "
                   "cluster placement group for full EFA bandwidth")


def check_eks_launch_template(args: StackValidationArgs, report: ReportViolation) -> None:
    """An EKS managed node group's launch template holds nothing EKS refuses, and places GPU nodes."""
    for resource in args.resources:
        if resource.resource_type == AWS_NODE_GROUP:
            for problem in _eks_template_problems(resource):
                report(problem, resource.urn)


# --- GCP: one RDMA subnet per GPU NIC --------------------------------------------------------


def check_gcp_gpu_nics(args: ResourceValidationArgs, report: ReportViolation) -> None:
    """GCP instance template: one GPU NIC per catalog GPU NIC (MRDMA on the RDMA VPC), each on
    its own subnet."""
    if args.resource_type != GCP_TEMPLATE:
        return
    instance = _instance("gcp", args.props.get("machineType"))
    if instance is None or instance.layout is None:
        return
    nics = [_map(nic) for nic in _items(args.props.get("networkInterfaces"))]
    others = instance.other_nics.count if instance.other_nics else 1
    gpu = [nic for nic in nics if nic.get("nicType") == "MRDMA"] if instance.layout == "rdma-vpc" else nics[others:]
    want = instance.fabric.count
    if len(gpu) != want:
        kind = "MRDMA" if instance.layout == "rdma-vpc" else "GPU"
        report(f"instance template {args.name}: {len(gpu)} {kind} NICs, {args.props.get('machineType')} has {want} "
               f"GPU NICs; give each its own subnet of the GPU network", None)
        return
    subnets = [str(nic.get("subnetwork")) for nic in gpu]
    if len(set(subnets)) != len(subnets):
        report(f"instance template {args.name}: GPU NICs share subnets ({len(set(subnets))} distinct for {want} NICs); "
               "each GPU NIC needs its own subnet", None)


def check_gcp_gpu_vpcs(args: StackValidationArgs, report: ReportViolation) -> None:
    """A3 High / A3 Mega (one VPC per GPU NIC): the template's NICs reach as many VPCs as it has
    NICs, found through the subnetworks its interfaces come from (the engine's property
    dependencies). GPU NICs sharing one VPC break GPUDirect-TCPX/TCPXO's per-NIC routing."""
    for resource in args.resources:
        if resource.resource_type not in (GCP_TEMPLATE, GCP_REGION_TEMPLATE):
            continue
        instance = _instance("gcp", resource.props.get("machineType"))
        if instance is None or instance.layout != "multi-vpc":
            continue
        subnets = _depends_on(resource, "networkInterfaces", GCP_SUBNETWORK)
        if not subnets:
            continue  # subnets given as plain ids: nothing to follow
        networks = {str(subnet.props.get("network")) for subnet in subnets}
        others = instance.other_nics.count if instance.other_nics else 1
        want = others + instance.fabric.count
        if len(networks) < want:
            report(f"instance template {resource.name}: its {want} NICs reach {len(networks)} VPCs; "
                   f"{resource.props.get('machineType')} needs each GPU NIC in its own VPC", resource.urn)


# --- AWS: the EFA security group stays the fabric's ----------------------------------------


def _self_only(rule: Mapping[str, object]) -> bool:
    return _true(rule.get("self")) and not any(_items(rule.get(key)) for key in (
        "cidrBlocks", "ipv6CidrBlocks", "prefixListIds", "securityGroups"))


def _urns(resource: PolicyResource, key: str) -> set[str]:
    return {dep.urn for dep in resource.property_dependencies.get(key, [])}


def _fabric_rules(group: PolicyResource, resources: list[PolicyResource]) -> list[tuple[str, str, str, bool]]:
    """Every rule of the fabric group as (where, direction, protocol, admits only the group itself):
    its inline ingress / egress, and the separate rule resources attached to it (found through the
    input their securityGroupId comes from): aws:ec2/SecurityGroupRule (`self`, or the group as
    sourceSecurityGroupId) and aws:vpc/SecurityGroupIngressRule / EgressRule (the group as
    referencedSecurityGroupId)."""
    rules = []
    for direction in ("ingress", "egress"):
        for index, rule in enumerate(_map(item) for item in _items(group.props.get(direction))):
            rules.append((f"{direction}[{index}]", direction, str(rule.get("protocol", "")).lower(), _self_only(rule)))
    for attached in resources:
        if attached.resource_type not in AWS_SG_RULES or group.urn not in _urns(attached, "securityGroupId"):
            continue
        props = attached.props
        if attached.resource_type == AWS_SG_RULE:
            direction = str(props.get("type") or "")
            itself = _true(props.get("self")) or group.urn in _urns(attached, "sourceSecurityGroupId")
            others = any(_items(props.get(key)) for key in ("cidrBlocks", "ipv6CidrBlocks", "prefixListIds"))
            protocol = str(props.get("protocol", "")).lower()
        else:
            direction = "ingress" if attached.resource_type == AWS_SG_INGRESS else "egress"
            itself = group.urn in _urns(attached, "referencedSecurityGroupId")
            others = any(props.get(key) for key in ("cidrIpv4", "cidrIpv6", "prefixListId"))
            protocol = str(props.get("ipProtocol", "")).lower()
        rules.append((f"rule {attached.name}", direction, protocol, itself and not others))
    return rules


def _fabric_group_problems(group: PolicyResource, resources: list[PolicyResource]) -> Iterator[str]:
    rules = _fabric_rules(group, resources)
    for where, direction, _protocol, itself in rules:
        if not itself:
            yield (f"security group {group.name}: {where} ({direction}) admits more than the group itself; the EFA "
                   "group must stay the fabric's alone (no CIDR, no other group, no shared role)")
    for direction in ("ingress", "egress"):
        if not any(itself and protocol in ("-1", "all") for _where, way, protocol, itself in rules if way == direction):
            yield (f"security group {group.name}: no {direction} rule for all traffic with the group itself (inline or "
                   "a rule resource); EFA needs every protocol in and out of its security group, not TCP alone (its "
                   "SRD traffic is not TCP; AWS EC2 guide, 'Prepare an EFA-enabled security group')")


def _efa_interface_problems(template: PolicyResource) -> Iterator[str]:
    interfaces = [_map(nic) for nic in _items(template.props.get("networkInterfaces"))]
    primary = [nic for nic in interfaces if (_int(nic.get("networkCardIndex")), _int(nic.get("deviceIndex"))) == (0, 0)]
    efa_groups = {tuple(str(group) for group in _items(nic.get("securityGroups")))
                  for nic in interfaces if nic.get("interfaceType") in EFA_TYPES}
    if not efa_groups:
        return
    if len(efa_groups) > 1 or len(next(iter(efa_groups))) != 1:
        yield (f"launch template {template.name}: EFA interfaces carry {sorted(efa_groups)}; each must carry exactly "
               "the fabric's one security group")
        return
    primary_groups = [str(group) for group in _items(primary[0].get("securityGroups"))] if primary else []
    if primary_groups and set(primary_groups) <= set(next(iter(efa_groups))):
        yield (f"launch template {template.name}: the primary interface carries only the EFA group; management and "
               "storage need their own security groups")


def check_fabric_security_group(args: StackValidationArgs, report: ReportViolation) -> None:
    """The GPU fabric's security group is not shared with storage or management: the group tagged
    `gpu-cluster/network: fabric` admits only itself, with an all-traffic rule to and from itself
    (inline, or as separate rule resources), and the launch template's EFA interfaces carry that
    one group, never the management or storage groups of the primary."""
    resources = list(args.resources)
    for resource in resources:
        if (resource.resource_type == AWS_SECURITY_GROUP
                and _map(resource.props.get("tags")).get("gpu-cluster/network") == "fabric"):
            problems = list(_fabric_group_problems(resource, resources))
        elif resource.resource_type == AWS_LAUNCH_TEMPLATE and _instance("aws", resource.props.get("instanceType")):
            problems = list(_efa_interface_problems(resource))
        else:
            continue
        for problem in problems:
            report(problem, resource.urn)


# --- Instance metadata: IMDSv2 only ---------------------------------------------------------


def check_imdsv2(args: ResourceValidationArgs, report: ReportViolation) -> None:
    """An AWS GPU launch template or instance requires IMDSv2 session tokens (metadataOptions
    httpTokens `required`): with IMDSv1 any process that can make the node send a GET (an SSRF in a
    notebook or a data loader) reads the instance role's credentials (AWS EC2 guide, "Use IMDSv2");
    and a hop limit of at least 2, which containers need to reach it."""
    if args.resource_type not in (AWS_LAUNCH_TEMPLATE, AWS_INSTANCE) or gpu_type(args.resource_type, args.props) is None:
        return
    options = _map(args.props.get("metadataOptions"))
    tokens = options.get("httpTokens")
    if tokens != "required":
        report(f"{args.name}: metadataOptions.httpTokens is {tokens or 'unset (optional: IMDSv1 allowed)'}; GPU nodes "
               "require IMDSv2 (httpTokens: required)", None)
    hops = _int(options.get("httpPutResponseHopLimit"), 1)
    if hops < 2:
        report(f"{args.name}: metadataOptions.httpPutResponseHopLimit is {hops}: a container's IMDSv2 token request "
               "needs 2 hops (AWS EC2 guide: 'In a container environment, we recommend setting the hop limit to 2')",
               None)


# --- Reservations: one instance type, On-Demand capacity ------------------------------------


def _reservation_of(resource: PolicyResource) -> tuple[str, str] | None:
    """(reservation, instance type) a GPU launch template or instance template draws on."""
    props = resource.props
    if resource.resource_type == AWS_LAUNCH_TEMPLATE:
        target = _map(_map(props.get("capacityReservationSpecification")).get("capacityReservationTarget"))
        reservation = target.get("capacityReservationId")
        instance_type = props.get("instanceType")
    elif resource.resource_type in (GCP_TEMPLATE, GCP_REGION_TEMPLATE):
        affinity = _map(props.get("reservationAffinity"))
        values = _items(_map(affinity.get("specificReservation")).get("values"))
        reservation = values[0] if affinity.get("type") == "SPECIFIC_RESERVATION" and values else None
        instance_type = props.get("machineType")
    else:
        return None
    if not isinstance(reservation, str) or gpu_type(resource.resource_type, props) is None:
        return None
    return reservation, str(instance_type)


def _spot(resource: PolicyResource) -> bool:
    props = resource.props
    if resource.resource_type == AWS_LAUNCH_TEMPLATE:
        return _map(props.get("instanceMarketOptions")).get("marketType") == "spot"
    scheduling = _map(props.get("scheduling"))
    return scheduling.get("provisioningModel") == "SPOT" or _true(scheduling.get("preemptible"))


def check_reservations(args: StackValidationArgs, report: ReportViolation) -> None:
    """A reservation (ODCR, Capacity Block, Compute Engine reservation) holds one instance type in
    one zone, as On-Demand capacity: templates of two types drawing on one reservation, or a Spot
    template drawing on one, cannot launch into it (AWS EC2 guide, capacity-reservations-launch;
    ParallelCluster's CapacityReservationValidator)."""
    types: dict[str, tuple[str, PolicyResource]] = {}
    for resource in args.resources:
        drawn = _reservation_of(resource)
        if drawn is None:
            continue
        reservation, instance_type = drawn
        if _spot(resource):
            report(f"{resource.name}: Spot instances on reservation {reservation}, which holds On-Demand capacity: "
                   "buy on-demand to use it, or drop the reservation for Spot", resource.urn)
        first = types.setdefault(reservation, (instance_type, resource))
        if first[0] != instance_type:
            report(f"{resource.name}: {instance_type} on reservation {reservation}, which {first[1].name} draws on for "
                   f"{first[0]}; a reservation holds one instance type: give each type its own", resource.urn)


# --- GCP: MRDMA NICs on a RoCE VPC ----------------------------------------------------------


def check_gcp_rdma_profile(args: StackValidationArgs, report: ReportViolation) -> None:
    """An MRDMA NIC attaches only to a VPC made with the RDMA network profile of its VM's zone
    (`<zone>-vpc-roce`, cloud.google.com/vpc/docs/rdma-network-profiles): the template's MRDMA
    subnets are followed to their VPC (the engine's property dependencies), and a group's zone to
    the profile's."""
    by_urn = {resource.urn: resource for resource in args.resources}
    for template in args.resources:
        if template.resource_type not in (GCP_TEMPLATE, GCP_REGION_TEMPLATE):
            continue
        rdma = [nic for nic in _items(template.props.get("networkInterfaces")) if _map(nic).get("nicType") == "MRDMA"]
        if not rdma:
            continue
        zones = {str(group.props.get("zone")) for group in args.resources
                 if group.resource_type == GCP_GROUP and template.urn in _urns(group, "versions")}
        subnets = _depends_on(template, "networkInterfaces", GCP_SUBNETWORK)
        if not subnets:
            continue  # subnets given as plain ids: nothing to follow
        # The interfaces' subnets as one input: count those on a RoCE VPC against the MRDMA NICs.
        profiles: list[str] = []
        for subnet in subnets:
            for dep in subnet.property_dependencies.get("network", []):
                vpc = by_urn.get(dep.urn)
                profile = str(vpc.props.get("networkProfile") or "") if vpc is not None else ""
                if profile.endswith("-vpc-roce"):
                    profiles.append(profile.rsplit("/", 1)[-1])
        if len(profiles) < len(rdma):
            report(f"instance template {template.name}: {len(rdma)} MRDMA NICs, {len(profiles)} of its subnets on a VPC "
                   "with a RoCE network profile (networkProfile .../networkProfiles/<zone>-vpc-roce): an MRDMA NIC "
                   "attaches only there", template.urn)
        elsewhere = sorted({profile for profile in profiles if profile.removesuffix("-vpc-roce") not in zones})
        if zones and elsewhere:
            report(f"instance template {template.name}: MRDMA NICs on a VPC of profile {', '.join(elsewhere)}, but its "
                   f"group runs in {', '.join(sorted(zones))}: a RoCE VPC serves its own zone only", template.urn)


def check_gke_multi_networking(args: StackValidationArgs, report: ReportViolation) -> None:
    """A GKE node pool with additional node networks (the storage gVNIC, the RDMA subnets) in a
    cluster of the same stack: that cluster has multi-networking on and GKE Dataplane V2
    (datapathProvider ADVANCED_DATAPATH), without which GKE refuses the pool's networks
    (cloud.google.com/kubernetes-engine/docs/how-to/setup-multinetwork-support-for-pods,
    requirements; Cluster Toolkit's gke-cluster module derives dataplane V2 from multi-networking
    and refuses additional networks without it). A pool of a cluster from elsewhere is the
    cluster owner's to check."""
    clusters = [resource for resource in args.resources if resource.resource_type == GKE_CLUSTER]
    for pool in args.resources:
        if pool.resource_type != GKE_NODE_POOL:
            continue
        networks = _items(_map(pool.props.get("networkConfig")).get("additionalNodeNetworkConfigs"))
        if not networks:
            continue
        found = _depends_on(pool, "cluster", GKE_CLUSTER) or [
            cluster for cluster in clusters if str(cluster.props.get("name")) == str(pool.props.get("cluster"))]
        for cluster in found:
            missing = ([] if _true(cluster.props.get("enableMultiNetworking")) else ["enableMultiNetworking"]) + (
                [] if cluster.props.get("datapathProvider") == "ADVANCED_DATAPATH" else
                ["datapathProvider ADVANCED_DATAPATH"])
            if missing:
                report(f"node pool {pool.name}: {len(networks)} additional node networks, but its cluster "
                       f"{cluster.name} lacks {' and '.join(missing)}: GKE attaches extra networks only with "
                       "multi-networking on GKE Dataplane V2", pool.urn)


# --- SSH not open to the world ----------------------------------------------------------------


def _world(source: object) -> bool:
    text = str(source).strip().lower()
    if text in AZURE_ANY_SOURCE:
        return True
    try:
        return ipaddress.ip_network(text, strict=False).prefixlen == 0
    except ValueError:
        return False


def _world_of(sources: list[object]) -> bool:
    """The sources, together, admit every address: one is 0.0.0.0/0, ::/0, `*` or Internet, or
    their union is (0.0.0.0/1 and 128.0.0.0/1 open SSH to the world as surely as /0 does)."""
    if any(_world(source) for source in sources):
        return True
    v4: list[ipaddress.IPv4Network] = []
    v6: list[ipaddress.IPv6Network] = []
    for source in sources:
        try:
            network = ipaddress.ip_network(str(source).strip(), strict=False)
        except ValueError:
            continue
        if isinstance(network, ipaddress.IPv4Network):
            v4.append(network)
        else:
            v6.append(network)
    return (any(collapsed.prefixlen == 0 for collapsed in ipaddress.collapse_addresses(v4))
            or any(collapsed.prefixlen == 0 for collapsed in ipaddress.collapse_addresses(v6)))


def _covers_ssh(low: object, high: object) -> bool:
    return _int(low, -1) <= SSH <= _int(high, -1)


def _port_spec_covers_ssh(spec: object) -> bool:
    """'22', '20-25', '*' (Azure) or '22' / '1-1024' (GCP ports)."""
    text = str(spec).strip()
    if text == "*":
        return True
    low, _, high = text.partition("-")
    return _covers_ssh(low, high or low)


def _aws_rule_admits_ssh(rule: Mapping[str, object]) -> bool:
    protocol = str(rule.get("protocol", rule.get("ipProtocol", ""))).lower()
    if protocol in ("-1", "all"):
        return True
    return protocol in ("tcp", "6") and _covers_ssh(rule.get("fromPort"), rule.get("toPort"))


def _aws_sources(rule: Mapping[str, object], cidr_keys: tuple[str, ...]) -> list[object]:
    return [cidr for key in cidr_keys for cidr in _items(rule.get(key))]


def _aws_rule_opens_ssh(rule: Mapping[str, object], cidr_keys: tuple[str, ...]) -> bool:
    return _aws_rule_admits_ssh(rule) and _world_of(_aws_sources(rule, cidr_keys))


def _azure_rule_opens_ssh(rule: Mapping[str, object]) -> bool:
    if str(rule.get("direction", "")).lower() != "inbound" or str(rule.get("access", "")).lower() != "allow":
        return False
    if str(rule.get("protocol", "*")).lower() not in ("tcp", "*"):
        return False
    ports = [rule.get("destinationPortRange"), *_items(rule.get("destinationPortRanges"))]
    sources = [rule.get("sourceAddressPrefix"), *_items(rule.get("sourceAddressPrefixes"))]
    return (any(_port_spec_covers_ssh(port) for port in ports if port is not None)
            and _world_of([source for source in sources if source is not None]))


def ssh_world_rules(resource_type: str, props: Mapping[str, object]) -> Iterator[str]:
    """Paths of the rules in one security group / rule / firewall / NSG that open port 22 to
    0.0.0.0/0 or ::/0 (or Azure's `*` / Internet)."""
    if resource_type == AWS_SECURITY_GROUP:
        keys = ("cidrBlocks", "ipv6CidrBlocks")
        rules = [_map(rule) for rule in _items(props.get("ingress"))]
        found = [f"ingress[{index}]" for index, rule in enumerate(rules) if _aws_rule_opens_ssh(rule, keys)]
        yield from found
        ssh = [index for index, rule in enumerate(rules) if _aws_rule_admits_ssh(rule)]
        if not found and _world_of([cidr for index in ssh for cidr in _aws_sources(rules[index], keys)]):
            yield "ingress[" + ", ".join(str(index) for index in ssh) + "] together"
    elif resource_type == AWS_SG_RULE:
        if props.get("type") == "ingress" and _aws_rule_opens_ssh(props, ("cidrBlocks", "ipv6CidrBlocks")):
            yield "rule"
    elif resource_type == AWS_SG_INGRESS:
        if _aws_rule_opens_ssh(props, ("cidrIpv4", "cidrIpv6")):
            yield "rule"
    elif resource_type == GCP_FIREWALL:
        if str(props.get("direction") or "INGRESS").upper() != "INGRESS":
            return
        sources = [*_items(props.get("sourceRanges")), *_items(props.get("sourceTags")),
                   *_items(props.get("sourceServiceAccounts"))]
        # An ingress rule that names no source applies to 0.0.0.0/0 (GCP's default source).
        if sources and not _world_of(_items(props.get("sourceRanges"))):
            return
        for index, allow in enumerate(_items(props.get("allows"))):
            allow = _map(allow)
            protocol = str(allow.get("protocol", "")).lower()
            ports = _items(allow.get("ports"))
            if protocol in ("all", "tcp", "6") and (not ports or any(_port_spec_covers_ssh(port) for port in ports)):
                yield f"allows[{index}]"
    elif resource_type == AZURE_NSG:
        for index, rule in enumerate(_items(props.get("securityRules"))):
            if _azure_rule_opens_ssh(_map(rule)):
                yield f"securityRules[{index}]"
    elif resource_type == AZURE_RULE and _azure_rule_opens_ssh(props):
        yield "rule"


def check_ssh_not_world(args: ResourceValidationArgs, report: ReportViolation) -> None:
    """No security group, firewall or NSG opens SSH (22) to 0.0.0.0/0 or ::/0."""
    for path in ssh_world_rules(args.resource_type, args.props):
        report(f"{args.name}: {path} opens SSH (port 22) to the whole internet; admit only cloud.ssh_cidrs", None)


# --- A managed Kubernetes API server not open to the internet ----------------------------------

EKS_CLUSTER = "aws:eks/cluster:Cluster"
AKS_CLUSTER = "azure-native:containerservice:ManagedCluster"


def public_api_server(resource_type: str, props: Mapping[str, object]) -> str | None:
    """Why a managed cluster's API server takes requests from the whole internet, or None. EKS: a
    public endpoint (on unless endpointPublicAccess is false) with no publicAccessCidrs (EKS then
    admits 0.0.0.0/0) or ones that add up to every address (EKS API VpcConfigRequest). AKS: not a
    private cluster and no authorizedIPRanges (AKS "Secure access to the API server using authorized IP
    address ranges"). GKE: no private endpoint and no master authorized networks that exclude the
    internet (GKE "Add authorized networks for control plane access")."""
    if resource_type == EKS_CLUSTER:
        config = _map(props.get("vpcConfig"))
        if config.get("endpointPublicAccess") is False or str(config.get("endpointPublicAccess")).lower() == "false":
            return None
        cidrs = _items(config.get("publicAccessCidrs"))
        if cidrs and not _world_of(cidrs):
            return None
        return "vpcConfig.endpointPublicAccess is on with " + (
            "publicAccessCidrs that admit every address" if cidrs else "no publicAccessCidrs (EKS admits 0.0.0.0/0)")
    if resource_type == AKS_CLUSTER:
        profile = _map(props.get("apiServerAccessProfile"))
        if _true(profile.get("enablePrivateCluster")):
            return None
        ranges = _items(profile.get("authorizedIPRanges"))
        if ranges and not _world_of(ranges):
            return None
        return "apiServerAccessProfile is not a private cluster and " + (
            "its authorizedIPRanges admit every address" if ranges else "names no authorizedIPRanges")
    if resource_type == GKE_CLUSTER:
        if _true(_map(props.get("privateClusterConfig")).get("enablePrivateEndpoint")):
            return None
        blocks = [_map(block).get("cidrBlock") for block in
                  _items(_map(props.get("masterAuthorizedNetworksConfig")).get("cidrBlocks"))]
        if blocks and not _world_of(blocks):
            return None
        return "privateClusterConfig.enablePrivateEndpoint is off and " + (
            "its master authorized networks admit every address" if blocks else "no master authorized networks")
    return None


def check_kubernetes_api_not_public(args: ResourceValidationArgs, report: ReportViolation) -> None:
    """A managed Kubernetes cluster's API server is private or admits only named networks."""
    reason = public_api_server(args.resource_type, args.props)
    if reason is not None:
        report(f"{args.name}: {reason}: the control plane of the GPU nodes would take requests from the whole "
               "internet; keep it private (scheduler.create does) or admit only your networks", None)


# --- Stack: the whole validator on the recorded stack file -------------------------------------


def stack_of(urn: str) -> str:
    """`urn:pulumi:<stack>::<project>::<type>::<name>` -> the stack name."""
    return urn.split("::", 1)[0].rsplit(":", 1)[-1] if urn.startswith("urn:pulumi:") else "stack"


# The pack's config for gpu-cluster-design (`pulumi preview --policy-pack-config FILE`): a platform
# team's gate can be stricter than a stack's own `policy.fail_on`, e.g. {"fail_on": "warning"}.
DESIGN_CONFIG = PolicyConfigSchema(properties={"fail_on": {"type": "string", "enum": ["error", "warning"]}})


def gated(mapping: object, fail_on: object) -> object:
    """The recorded stack file as the gate validates it: with the pack's `fail_on: warning`, the
    design fails on warnings whatever its own policy.fail_on says (`error` changes nothing)."""
    if fail_on != "warning" or not isinstance(mapping, dict):
        return mapping
    policy = mapping.get("policy")
    return {**mapping, "policy": {**(policy if isinstance(policy, dict) else {}), "fail_on": "warning"}}


def check_stack_design(args: StackValidationArgs, report: ReportViolation) -> None:
    """Run the whole validator (cluster.pipeline.validate_mapping) on the stack file the program
    recorded in the GpuCluster component (`validated_cluster`), and fail with every finding."""
    fail_on = (args.get_config() or {}).get("fail_on")
    clusters = [resource for resource in args.resources if resource.resource_type == CLUSTER_TYPE]
    for resource in clusters:
        recorded = resource.props.get(CARRIER)
        if not isinstance(recorded, str):
            report(f"GpuCluster {resource.name} records no {CARRIER}: the design cannot be re-validated", resource.urn)
            continue
        try:
            mapping = json.loads(recorded)
        except ValueError as error:
            report(f"GpuCluster {resource.name}: {CARRIER} is not JSON ({error})", resource.urn)
            continue
        result = validate_mapping(stack_of(resource.urn), gated(mapping, fail_on))
        if result.ok:
            continue
        reported = [finding for finding in result.findings if not finding.suppressed]
        for finding in reported:
            report(f"{finding.rule} ({finding.severity}) at {finding.path}: {finding.message}; hint: {finding.hint}",
                   resource.urn)
        if not reported:
            report(f"GpuCluster {resource.name}: the recorded design fails validation", resource.urn)


def check_design_present(args: StackValidationArgs, report: ReportViolation) -> None:
    """The stack holds a GpuCluster whose design gpu-cluster-design re-validates (advisory: a stack
    of other resources, a bastion or a bucket, is not refused for having none)."""
    if not any(resource.resource_type == CLUSTER_TYPE for resource in args.resources):
        report("no gpu-cluster:cluster:GpuCluster resource in the stack: no design to re-validate", None)


# The pack's policies, one row each: (name, description, check, enforcement, config schema).
# A violation of a mandatory one stops `pulumi up`; an advisory one is reported only.
RESOURCE_POLICIES: tuple[tuple[str, str, ResourceCheck, EnforcementLevel], ...] = (
    ("gpu-efa-per-network-card", "AWS launch template: one EFA interface per EFA network card of the "
     "instance type (catalog), primary interface on card 0 device 0", check_launch_template_efa, MANDATORY),
    ("gpu-no-public-ip", "GPU nodes get no public IP", check_no_public_ip, MANDATORY),
    ("gpu-imdsv2", "AWS GPU nodes require IMDSv2 session tokens", check_imdsv2, MANDATORY),
    ("gcp-rdma-subnet-per-gpu-nic", "GCP: one GPU NIC, on its own subnet, per GPU NIC of the machine type",
     check_gcp_gpu_nics, MANDATORY),
    ("ssh-not-open-to-world", "SSH (port 22) is not open to 0.0.0.0/0 or ::/0", check_ssh_not_world, MANDATORY),
    ("gpu-type-in-catalog", "GPU instance types are ones the catalog describes", check_gpu_type_in_catalog,
     MANDATORY),
    ("kubernetes-api-not-public", "A managed Kubernetes cluster's API server (EKS, AKS, GKE) is private or "
     "admits only named networks, never the whole internet", check_kubernetes_api_not_public, MANDATORY),
)
STACK_POLICIES: tuple[tuple[str, str, StackCheck, EnforcementLevel, PolicyConfigSchema | None], ...] = (
    ("gpu-placement-group", "GPU node groups are placed close together as their capacity allows (AWS cluster "
     "placement group unless reserved, GCP HIGH_THROUGHPUT workload policy, Azure one placement group)",
     check_placement, MANDATORY, None),
    ("gpu-eks-launch-template", "An EKS managed node group's launch template names no subnet, instance profile "
     "or Spot request, and places GPU nodes", check_eks_launch_template, MANDATORY, None),
    ("gcp-gpu-vpc-per-nic", "GCP A3 High / Mega: every GPU NIC in its own VPC", check_gcp_gpu_vpcs, MANDATORY, None),
    ("gpu-fabric-security-group-not-shared", "The GPU fabric's security group is not shared with storage or "
     "management (inline rules and rule resources)", check_fabric_security_group, MANDATORY, None),
    ("gpu-reservation", "A reservation is drawn on by one instance type, never by Spot", check_reservations,
     MANDATORY, None),
    ("gcp-rdma-network-profile", "GCP MRDMA NICs sit on a VPC with the RoCE profile of their zone",
     check_gcp_rdma_profile, MANDATORY, None),
    ("gke-multi-networking", "A GKE node pool's additional node networks: its cluster, when the stack creates "
     "it, has multi-networking and GKE Dataplane V2", check_gke_multi_networking, MANDATORY, None),
    ("gpu-cluster-present", "The stack holds a GpuCluster (advisory)", check_design_present,
     EnforcementLevel.ADVISORY, None),
    ("gpu-cluster-design", "The stack's gpu-cluster:cluster, recorded in the GpuCluster component, passes the "
     "whole validator", check_stack_design, MANDATORY, DESIGN_CONFIG),
)


def policies() -> list[Policy]:
    """Every policy of the pack, resource policies first, each as its row says."""
    resource: list[Policy] = [ResourceValidationPolicy(name=name, description=text, validate=check,
                                                       enforcement_level=level)
                              for name, text, check, level in RESOURCE_POLICIES]
    stack: list[Policy] = [StackValidationPolicy(name=name, description=text, validate=check, enforcement_level=level,
                                                 config_schema=config)
                           for name, text, check, level, config in STACK_POLICIES]
    return resource + stack
