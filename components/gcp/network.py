"""GCP networks: a management VPC and a storage VPC (gVNIC, MTU 8896), and for the GPU
fabric either one RDMA VPC (network profile `<zone>-vpc-roce`, one subnet per GPU NIC, MRDMA
NICs: A3 Ultra, A4) or one VPC per GPU NIC (the multi-VPC layout of A3 High / A3 Mega).
Sources: FACTS.md 1.2 (cloud.google.com gpu-network-bandwidth, rdma-network-profiles,
cluster-toolkit blueprints)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pulumi
import pulumi_gcp as gcp
from pulumi_gcp import provider as gcp_provider

from cluster.catalog import Catalog, load_catalog
from cluster.resolve import access_of
from components.addressing import gpu_nic_cidr, network_cidr
from components.base import FabricAttachments, NetworkAttachment, child

if TYPE_CHECKING:
    from cluster.spec import ClusterSpec
    from components.base import ConcernArgs
    from components.fabric import GpuFabricArgs
    from components.management import ManagementNetworkArgs
    from components.storage import StorageNetworkArgs

IAP_RANGE = "35.235.240.0/20"
MTU = 8896  # gcloud's default and Google's recommendation for GPU and RDMA VPCs


def _vpc(parent: pulumi.Resource, name: str, network_profile: pulumi.Input[str] | None = None) -> gcp.compute.Network:
    return gcp.compute.Network(name, auto_create_subnetworks=False, mtu=MTU, network_profile=network_profile,
                               opts=child(parent))


def _subnet(parent: pulumi.Resource, name: str, args: ConcernArgs, network: gcp.compute.Network, cidr: str
            ) -> gcp.compute.Subnetwork:
    assert args.spec.cloud is not None
    return gcp.compute.Subnetwork(name, network=network.id, ip_cidr_range=cidr, region=args.spec.cloud.region,
                                  opts=child(parent))


def _internal(parent: pulumi.Resource, name: str, network: gcp.compute.Network, cidr: str) -> None:
    gcp.compute.Firewall(name, network=network.id, direction="INGRESS", source_ranges=[cidr],
                         allows=[{"protocol": "all"}], opts=child(parent))


def provider(parent: pulumi.Resource, name: str, spec: ClusterSpec) -> pulumi.ProviderResource | None:
    """The cluster's Google provider: cloud.project (or the stack's gcp:project, which the resolver
    fills in), cloud.region and cloud.zone."""
    assert spec.cloud is not None
    return gcp_provider.Provider(name, project=spec.cloud.project, region=spec.cloud.region, zone=spec.cloud.zone,
                                 opts=pulumi.ResourceOptions(parent=parent))


def management(parent: pulumi.Resource, name: str, args: ManagementNetworkArgs) -> NetworkAttachment:
    """Management VPC and subnet; SSH only from cloud.ssh_cidrs, all traffic within the subnet."""
    assert args.spec.cloud is not None
    vpc = _vpc(parent, f"{name}-vpc")
    cidr = network_cidr("management")
    subnet = _subnet(parent, f"{name}-subnet", args, vpc, cidr)
    _internal(parent, f"{name}-internal", vpc, cidr)
    if args.spec.cloud.ssh_cidrs:
        gcp.compute.Firewall(f"{name}-ssh", network=vpc.id, direction="INGRESS",
                             source_ranges=list(args.spec.cloud.ssh_cidrs),
                             allows=[{"protocol": "tcp", "ports": ["22"]}], opts=child(parent))
    if args.spec.cloud.egress == "nat":
        # Cloud NAT on the management VPC (the VMs' nic0 and default route): images and packages
        # without external IPs (cloud.google.com/nat/docs/overview; Cluster Toolkit's vpc module
        # does the same with a Cloud Router per region).
        router = gcp.compute.Router(f"{name}-router", network=vpc.id, region=args.spec.cloud.region,
                                    opts=child(parent))
        gcp.compute.RouterNat(f"{name}-nat", router=router.name, region=args.spec.cloud.region,
                              nat_ip_allocate_option="AUTO_ONLY",
                              source_subnetwork_ip_ranges_to_nat="ALL_SUBNETWORKS_ALL_IP_RANGES", opts=child(parent))
    access = None
    if access_of(args.spec.cloud, "gcp") == "iap":
        # IAP TCP forwarding reaches VMs without external IPs from Google's range 35.235.240.0/20
        # (cloud.google.com/iap/docs/using-tcp-forwarding, "Create a firewall rule").
        access = gcp.compute.Firewall(f"{name}-iap-ssh", network=vpc.id, direction="INGRESS",
                                      source_ranges=[IAP_RANGE], allows=[{"protocol": "tcp", "ports": ["22"]}],
                                      opts=child(parent)).name
    identity = _node_identity(parent, name, args)
    cluster = _gke_cluster(parent, name, args, vpc, subnet) if args.spec.scheduler.create else None
    return NetworkAttachment("management", (subnet.id,), network_id=vpc.id, access_id=access, identity=identity,
                             kubernetes_cluster=cluster)


# scheduler.create: the cluster's pod and service ranges (VPC-native; outside the stack's 10.0.0.0/16; the pod
# range is Cluster Toolkit's gke-a3-ultragpu `pods` range) and its control plane's private range (the
# gke-cluster module's default master_ipv4_cidr_block).
GKE_PODS, GKE_SERVICES, GKE_CONTROL_PLANE = "10.4.0.0/14", "10.8.0.0/20", "172.16.0.32/28"


def _gke_cluster(parent: pulumi.Resource, name: str, args: ManagementNetworkArgs, vpc: gcp.compute.Network,
                 subnet: gcp.compute.Subnetwork) -> pulumi.Output[str]:
    """The GKE cluster the node pools join (scheduler.create), as Cluster Toolkit's gke-cluster module
    builds it for gke-a3-ultragpu (modules/scheduler/gke-cluster/main.tf at 1047080375af): on the
    management VPC and subnet (the node pools' first network), VPC-native, multi-networking with GKE
    Dataplane V2 (ADVANCED_DATAPATH), which additional node networks need; private nodes and a
    private endpoint (kubectl from inside the VPC); the default node pool removed (the module's
    remove_default_node_pool with initial_node_count 1); Workload Identity; the REGULAR channel at
    scheduler.version; deletion protection on. Returns its name."""
    spec = args.spec
    scheduler, cloud = spec.scheduler, spec.cloud
    assert cloud is not None and scheduler.cluster is not None
    from cluster.clouds.gcp import GKE_RELEASE_CHANNEL

    project = (pulumi.Output.from_input(cloud.project) if cloud.project else
               gcp.organizations.get_project_output(opts=pulumi.InvokeOutputOptions(parent=parent)).project_id)
    cluster = gcp.container.Cluster(
        f"{name}-gke", name=scheduler.cluster, location=scheduler.location, network=vpc.id, subnetwork=subnet.id,
        networking_mode="VPC_NATIVE",
        ip_allocation_policy={"cluster_ipv4_cidr_block": GKE_PODS, "services_ipv4_cidr_block": GKE_SERVICES},
        enable_multi_networking=True, datapath_provider="ADVANCED_DATAPATH",
        private_cluster_config={"enable_private_nodes": True, "enable_private_endpoint": True,
                                "master_ipv4_cidr_block": GKE_CONTROL_PLANE},
        remove_default_node_pool=True, initial_node_count=1,
        workload_identity_config={"workload_pool": project.apply(lambda project_id: f"{project_id}.svc.id.goog")},
        release_channel={"channel": GKE_RELEASE_CHANNEL}, min_master_version=scheduler.version,
        deletion_protection=True, resource_labels={"gpu-cluster": spec.name}, opts=child(parent))
    return cluster.name


# The nodes' project roles: Cluster Toolkit's GKE A3 Ultra node service account's, but for
# storage.objectViewer, which is granted per bucket of cloud.data_buckets instead of project-wide
# (examples/gke-a3-ultragpu/gke-a3-ultragpu.yaml at 1047080375af: logging.logWriter,
# monitoring.metricWriter, monitoring.viewer, stackdriver.resourceMetadata.writer,
# storage.objectViewer, artifactregistry.reader).
NODE_ROLES = ("roles/logging.logWriter", "roles/monitoring.metricWriter", "roles/monitoring.viewer",
              "roles/stackdriver.resourceMetadata.writer", "roles/artifactregistry.reader")


def service_account_id(cluster: str) -> str:
    """A service account id (6-30 characters, a letter first): `<cluster>-gpu-nodes`, the cluster
    name cut to fit."""
    return f"{cluster[:19].rstrip('-')}-gpu-nodes"


def _node_identity(parent: pulumi.Resource, name: str, args: ManagementNetworkArgs) -> pulumi.Output[str]:
    """A service account for the GPU nodes with read access to images and to the data buckets, and
    write access to logs and metrics, instead of the Compute Engine default account (Editor on the
    project). Returns its email."""
    assert args.spec.cloud is not None
    account = gcp.serviceaccount.Account(f"{name}-nodes", account_id=service_account_id(args.spec.first_name),
                                         display_name=f"gpu-cluster {args.spec.name} GPU nodes", opts=child(parent))
    member = account.email.apply(lambda email: f"serviceAccount:{email}")
    project = (pulumi.Output.from_input(args.spec.cloud.project) if args.spec.cloud.project else
               gcp.organizations.get_project_output(opts=pulumi.InvokeOutputOptions(parent=parent)).project_id)
    for role in NODE_ROLES:
        gcp.projects.IAMMember(f"{name}-nodes-{role.split('/')[1].replace('.', '-').lower()}", project=project,
                               role=role, member=member, opts=child(parent))
    for index, bucket in enumerate(args.spec.cloud.data_buckets):
        gcp.storage.BucketIAMMember(f"{name}-nodes-data{index}", bucket=bucket, role="roles/storage.objectViewer",
                                    member=member, opts=child(parent))
    return account.email


def storage(parent: pulumi.Resource, name: str, args: StorageNetworkArgs) -> NetworkAttachment:
    """Storage VPC and subnet (the second gVNIC of A3 Ultra / A4), and the shared file system."""
    vpc = _vpc(parent, f"{name}-vpc")
    cidr = network_cidr("storage")
    subnet = _subnet(parent, f"{name}-subnet", args, vpc, cidr)
    _internal(parent, f"{name}-internal", vpc, cidr)
    home, home_id = _home(parent, name, args) if args.spec.home is not None else (None, None)
    if args.spec.filesystem is None:
        return NetworkAttachment("storage", (subnet.id,), network_id=vpc.id, home=home, home_id=home_id)
    # A3 High / Mega VMs have one gVNIC, on the management VPC: the file system goes where every
    # VM has a NIC (Managed Lustre: "This must be the same network as used for your VMs").
    catalog = load_catalog()
    on_storage = all(_gvnics(catalog, pool.instance_type) >= 2 for pool in args.spec.pools)
    network = vpc.id if on_storage else args.management.network_id
    assert network is not None
    source, fs_id = _lustre(parent, name, args, network)
    return NetworkAttachment("storage", (subnet.id,), network_id=vpc.id, filesystem=source, filesystem_id=fs_id,
                             home=home, home_id=home_id)


HOME_SHARE = "home"  # a Filestore share name: up to 16 letters, digits and underscores


def _home(parent: pulumi.Resource, name: str, args: StorageNetworkArgs) -> tuple[pulumi.Output[str], pulumi.Output[str]]:
    """A Filestore Basic SSD instance for /home in cloud.zone on the management VPC, where every
    machine type has its first gVNIC: Cluster Toolkit's a3ultra-vm.yaml puts its homefs on the VMs'
    first network (`use: [a3ultra-net-0]`, filestore_tier BASIC_SSD, the filestore module's
    DIRECT_PEERING connect mode, at 1047080375af). Protected. Returns the mount source
    (`<ip>:/home`) and the instance's id."""
    spec = args.spec
    assert spec.cloud is not None and spec.home is not None and args.management.network_id is not None
    instance = gcp.filestore.Instance(
        f"{name}-home", name=f"{spec.first_name[:58]}-home", location=spec.cloud.zone, tier="BASIC_SSD",
        file_shares={"capacity_gb": spec.home.capacity_gib, "name": HOME_SHARE},
        networks=[{"network": args.management.network_id.apply(lambda vpc: vpc.rsplit("/", 1)[-1]),
                   "modes": ["MODE_IPV4"], "connect_mode": "DIRECT_PEERING"}],
        labels={"gpu-cluster": spec.name}, opts=pulumi.ResourceOptions(parent=parent, protect=True))
    source = instance.networks.apply(lambda networks: f"{(networks[0].ip_addresses or [''])[0]}:/{HOME_SHARE}")
    return source, instance.id


def _lustre(parent: pulumi.Resource, name: str, args: StorageNetworkArgs, network: pulumi.Input[str]
            ) -> tuple[pulumi.Output[str], pulumi.Output[str]]:
    """Private service access on `network` (an allocated range and the Service Networking
    peering: Cluster Toolkit's private-service-access module, prefix length 16) and a Managed
    Lustre instance in cloud.zone on it (Cluster Toolkit's managed-lustre module). The instance is
    protected. Returns its mount point (`<ip>@tcp:/<fs>`) and id."""
    spec = args.spec
    assert spec.cloud is not None and spec.cloud.zone is not None and spec.filesystem is not None
    fs = spec.filesystem
    psa_range = gcp.compute.GlobalAddress(f"{name}-psa", purpose="VPC_PEERING", address_type="INTERNAL",
                                          prefix_length=16, network=network, opts=child(parent))
    peering = gcp.servicenetworking.Connection(f"{name}-psa", network=network,
                                               service="servicenetworking.googleapis.com",
                                               reserved_peering_ranges=[psa_range.name], opts=child(parent))
    instance = gcp.lustre.Instance(
        f"{name}-lustre", instance_id=f"{spec.first_name[:50]}-lustre", location=spec.cloud.zone,
        filesystem=LUSTRE_FS_NAME, capacity_gib=str(fs.capacity_gib), per_unit_storage_throughput=str(fs.tier),
        network=network, labels={"gpu-cluster": spec.name},
        opts=pulumi.ResourceOptions(parent=parent, protect=True, depends_on=[peering]))
    return instance.mount_point, instance.id


LUSTRE_FS_NAME = "lustrefs"  # Managed Lustre: at most eight letters and digits


def _gvnics(catalog: Catalog, instance_type: str | None) -> int:
    """The machine type's regular (gVNIC) NICs."""
    instance = catalog.instance("gcp", instance_type or "")
    return instance.other_nics.count if instance is not None and instance.other_nics is not None else 1


def fabric(parent: pulumi.Resource, name: str, args: GpuFabricArgs) -> FabricAttachments:
    """The GPU VPCs for every layout the pools use, sized by the widest pool of each layout."""
    catalog = load_catalog()
    nics: dict[str, int] = {}
    for pool in args.spec.pools:
        instance = catalog.instance("gcp", pool.instance_type or "")
        assert instance is not None and instance.layout is not None
        nics[instance.layout] = max(nics.get(instance.layout, 0), instance.fabric.count)
    layouts: dict[str, NetworkAttachment] = {}
    if "rdma-vpc" in nics:
        layouts["rdma-vpc"] = _rdma_vpcs(parent, f"{name}-rdma", args, nics["rdma-vpc"])
    if "multi-vpc" in nics:
        layouts["multi-vpc"] = _gpu_vpcs(parent, f"{name}-gpu", args, nics["multi-vpc"])
    return FabricAttachments(layouts)


def _rdma_vpcs(parent: pulumi.Resource, name: str, args: GpuFabricArgs, count: int) -> NetworkAttachment:
    """One RDMA VPC per zone its pools sit in: a RoCE network profile, and so its VPC, serves one
    zone (FACTS.md 1.2, rdma-network-profiles). cloud.zone's keeps the plain name."""
    assert args.spec.cloud is not None
    home = args.spec.cloud.zone
    catalog = load_catalog()
    used = sorted({pool.capacity.zone for pool in args.spec.pools if pool.capacity is not None
                   and pool.capacity.zone is not None and _layout(catalog, pool.instance_type) == "rdma-vpc"})
    vpcs = {zone: _rdma_vpc(parent, name if zone == home else f"{name}-{zone}", args, count, zone) for zone in used}
    first = vpcs[home] if home in vpcs else vpcs[used[0]]
    return NetworkAttachment("fabric", first.subnet_ids, network_id=first.network_id,
                             zones={zone: vpc.subnet_ids for zone, vpc in vpcs.items()})


def _layout(catalog: Catalog, instance_type: str | None) -> str | None:
    instance = catalog.instance("gcp", instance_type or "")
    return instance.layout if instance is not None else None


def _rdma_vpc(parent: pulumi.Resource, name: str, args: GpuFabricArgs, count: int, zone: str) -> NetworkAttachment:
    assert args.spec.cloud is not None
    # The project: the stack's, else the provider's own (its credentials' default), read through it.
    project = (pulumi.Output.from_input(args.spec.cloud.project) if args.spec.cloud.project else
               gcp.organizations.get_project_output(opts=pulumi.InvokeOutputOptions(parent=parent)).project_id)
    profile = project.apply(lambda project_id: f"projects/{project_id}/global/networkProfiles/{zone}-vpc-roce")
    vpc = _vpc(parent, f"{name}-vpc", network_profile=profile)
    subnets = [_subnet(parent, f"{name}-nic{nic}", args, vpc, gpu_nic_cidr(nic)) for nic in range(count)]
    # No firewall rule: a VPC with the RoCE network profile takes only regional network firewall
    # policies of type RDMA_ROCE_POLICY and admits all traffic between its NICs without one; a
    # plain VPC firewall rule on it is refused at deploy. Cluster Toolkit's gpu-rdma-vpc module
    # creates none and rejects any (GoogleCloudPlatform/cluster-toolkit
    # modules/network/gpu-rdma-vpc/main.tf `firewall_rules = []` and variables.tf "firewall_rules
    # can not be specified for gpu-rdma-vpc", commit 1047080375afbb44da4b596be314634e7486af4a).
    return NetworkAttachment("fabric", tuple(subnet.id for subnet in subnets), network_id=vpc.id)


def _gpu_vpcs(parent: pulumi.Resource, name: str, args: GpuFabricArgs, count: int) -> NetworkAttachment:
    subnets = []
    for nic in range(count):
        vpc = _vpc(parent, f"{name}{nic}-vpc")
        subnets.append(_subnet(parent, f"{name}{nic}-subnet", args, vpc, gpu_nic_cidr(nic)))
        _internal(parent, f"{name}{nic}-internal", vpc, gpu_nic_cidr(nic))
    return NetworkAttachment("fabric", tuple(subnet.id for subnet in subnets))


def kubernetes_networks(spec: ClusterSpec, storage: NetworkAttachment, fabric: FabricAttachments
                        ) -> pulumi.Output[str] | None:
    """scheduler gke: the GKE Network objects (YAML) of the node pools' additional networks, named
    from the deployed VPCs and subnets: the storage gVNIC when the machines have a second gVNIC, and
    one per subnet of the RDMA VPC (every GKE pool is in cloud.zone: the resolver holds it so).
    None for bare nodes."""
    if spec.scheduler.kind != "gke":
        return None
    from cluster.clouds.gcp.kubernetes import networks_yaml

    instances = [load_catalog().instance("gcp", pool.instance_type or "") for pool in spec.pools]
    gvnic = any(instance is not None and instance.other_nics is not None and instance.other_nics.count >= 2
                for instance in instances)
    rdma = fabric.layouts["rdma-vpc"]
    assert rdma.network_id is not None and storage.network_id is not None

    def names(ids: list[str]) -> str:
        short = [value.rsplit("/", 1)[-1] for value in ids]
        storage_pair = (short[0], short[1]) if gvnic else None
        return networks_yaml(storage_pair, [(short[2], subnet) for subnet in short[3:]])

    ids: list[pulumi.Input[str]] = [storage.network_id, storage.subnet_ids[0], rdma.network_id, *rdma.subnet_ids]
    return pulumi.Output.all(*ids).apply(names)
