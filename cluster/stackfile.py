"""The stack-file contract (`gpu-cluster:cluster`), as pydantic models.

Field names and meanings are public (DESIGN.md). These models check shape, types and ranges;
catalog lookups, defaults and cross-field checks happen in `cluster.resolve.resolve`.
"""

from __future__ import annotations

import ipaddress
import re
from typing import Annotated, Literal, get_args

from pydantic import AfterValidator, BaseModel, BeforeValidator, ConfigDict, Field, model_validator

from cluster.dialects import stack_os_names

NAME_PATTERN = r"^[a-z0-9]([a-z0-9-]{0,30}[a-z0-9])?$"
Name = Annotated[str, Field(pattern=NAME_PATTERN)]


def _whole_number(value: object) -> object:
    # A Literal of ints compares by value, so 400.0 would pass as 400: speeds are written as integers.
    if isinstance(value, float):
        raise ValueError(f"write the speed as a whole number of Gbps ({value:g}, not {value!r})")
    return value


PortGbps = Annotated[Literal[1, 10, 25, 40, 50, 100, 200, 400, 800, 1600], BeforeValidator(_whole_number)]
Count = Annotated[int, Field(ge=0, le=100_000)]
RATIO_TEXT = re.compile(r"^\s*([0-9]+(?:\.[0-9]+)?)\s*:\s*([0-9]+(?:\.[0-9]+)?)\s*$")


def _ratio(value: object) -> object:
    # Ratios are written `2:1` as often as 2.0; the text form is read as the ratio it means.
    if not isinstance(value, str):
        return value
    match = RATIO_TEXT.match(value)
    if match is None or float(match.group(2)) == 0:
        raise ValueError(f"write a ratio as a number (1.5) or as N:M (3:2), not {value[:40]!r}")
    return float(match.group(1)) / float(match.group(2))


Ratio = Annotated[float, BeforeValidator(_ratio), Field(ge=1.0, le=1000.0, title="ratio: a number or `N:M`")]
Dscp = Annotated[int, Field(ge=0, le=63)]
Priority = Annotated[int, Field(ge=0, le=7)]


def _dialect(value: str) -> str:
    names = stack_os_names()
    if value not in names:
        raise ValueError(f"Input should be {', '.join(repr(name) for name in names[:-1])} or {names[-1]!r}")
    return value


# A switch dialect a stack file may name: one of cluster/dialects/ (its registry says which)
Os = Annotated[str, AfterValidator(_dialect), Field(title=" \\| ".join(f"`{name}`" for name in stack_os_names()))]


def _not_loopback(name: str) -> str:
    if name == "lo":
        raise ValueError("lo is the loopback device, not a NIC: name the port's netdev (ip -br link)")
    return name


# A Linux netdev / RDMA name; never the loopback device.
DeviceName = Annotated[str, Field(pattern=r"^[A-Za-z][A-Za-z0-9_.-]{0,14}$"), AfterValidator(_not_loopback)]
# Strings that reach names, configs and scripts admit no whitespace, shell or template syntax.
CatalogKey = Annotated[str, Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9._+-]{0,63}$")]
Cidr = Annotated[str, Field(pattern=r"^[0-9A-Fa-f.:]{2,45}(/[0-9]{1,3})?$")]  # no IPv6 %scope suffix


def _ipv4(value: str) -> str:
    try:
        ipaddress.IPv4Address(value)
    except ValueError:
        raise ValueError(f"{value!r} is no IPv4 address: write four numbers 0-255, such as 10.176.0.0") from None
    return value


IPV4_PATTERN = r"^[0-9.]{7,15}$"
Ipv4 = Annotated[str, Field(pattern=IPV4_PATTERN, title="IPv4 address"), AfterValidator(_ipv4)]


class Model(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid", strict=True)  # YAML types are exact: `true` is no count


class NicSet(Model):
    """NICs of one kind per node; gbps is per port."""

    # NICs of this kind per node
    count: Annotated[int, Field(ge=0, le=64)]
    # speed of one port
    gbps: PortGbps
    # ports per NIC (dual-port NICs on a dual-plane fabric: 2)
    ports_per_nic: Annotated[int, Field(ge=1, le=8)] = 1
    # Optional host naming, one name per port in rail order (default: cluster/naming.py)
    devices: list[DeviceName] | None = Field(default=None, max_length=512)  # RDMA devices, e.g. mlx5_0
    interfaces: list[DeviceName] | None = Field(default=None, max_length=512)  # netdevs, e.g. ens1f0np0

    @model_validator(mode="after")
    def _one_name_per_port(self) -> NicSet:
        ports = self.count * self.ports_per_nic
        for key in ("devices", "interfaces"):
            names = getattr(self, key)
            if names is not None and len(names) != ports:
                raise ValueError(f"{key} lists {len(names)} names; give one per port ({ports}), in rail order")
            if names is not None and len(set(names)) != len(names):
                raise ValueError(f"{key} names a device twice")
        return self


class SwitchRef(Model):
    """A catalog model (`switch`), or a generic box given by `ports` at `port_gbps`."""

    # a model of cluster/catalog/switches.yaml (ports, speeds, breakouts and OS from there)
    switch: CatalogKey | None = None
    # a generic switch: its number of ports at port_gbps
    ports: Annotated[int, Field(ge=1, le=4096)] | None = None
    # the speed the ports run at (a breakout mode of the model, e.g. 400 on an 800G switch)
    port_gbps: PortGbps | None = None
    # fixed uplink ports beside the main ones (default from the model, else 0)
    uplink_ports: Annotated[int, Field(ge=0, le=4096)] | None = None
    # speed of those uplink ports
    uplink_gbps: PortGbps | None = None
    # switch OS to render for: sonic | nvue (Cumulus) | eos (default from the model)
    os: Os | None = None

    @model_validator(mode="after")
    def _model_or_size(self) -> SwitchRef:
        if self.switch is None and (self.ports is None or self.port_gbps is None):
            raise ValueError("give a catalog model as `switch`, or both `ports` and `port_gbps`")
        return self


class TierOversubscription(Model):
    # leaf tier ratio
    leaf: Ratio = 1.0
    # spine tier ratio
    spine: Ratio = 1.0
    # core tier ratio
    core: Ratio = 1.0


class Fabric(Model):
    """The GPU fabric (compute / backend network)."""

    # default from the leaf switch model (an InfiniBand switch means infiniband)
    transport: Literal["roce", "infiniband"] | None = None
    # rail-optimized: port r of every node to a rail-r leaf; rack-tor: all of a node's ports to one leaf
    design: Literal["rail-optimized", "rack-tor"] = "rail-optimized"
    # 2 = dual-plane: port p of every NIC goes to plane p
    planes: Annotated[int, Field(ge=1, le=8)] = 1
    # the leaf switch (default: the catalog's default fabric switch for the transport)
    leaf: SwitchRef | None = None
    # the spine switch (default: the leaf's model)
    spine: SwitchRef | None = None
    # the core switch, used only when two tiers cannot hold the cluster
    core: SwitchRef | None = None
    # as-designed sizing, honoured exactly (a multiple of rails x planes); omitted: sized for 1:1
    leaves: Count | None = None
    # as-designed spines (omitted: sized)
    spines: Count | None = None
    # as-designed cores (omitted: sized; 0 with no pods: two tiers)
    cores: Count | None = None
    # three tiers: leaf groups split into this many pods (ceil(groups / pods) each, the last may hold fewer), spines evenly
    pods: Count | None = None
    # links from each leaf to the spine tier (omitted: sized for max_oversubscription)
    leaf_uplinks: Count | None = None
    # links from each spine to the core tier
    spine_uplinks: Count | None = None
    # downlink / uplink bandwidth allowed, for every tier or per tier
    max_oversubscription: Ratio | TierOversubscription = 1.0
    # a converged network: storage and/or management NICs cabled to the fabric leaves
    shared_with: list[Literal["storage", "management"]] = Field(default_factory=list, max_length=2)
    # How nodes fill the leaf groups: `even` spreads them (DESIGN's default), `packed` fills each
    # group to its capacity in order, so appending nodes never moves a cabled host.
    fill: Literal["even", "packed"] = "even"
    # How a leaf's uplinks land on the spines (and a spine's on the cores): `blocks` gives each upper
    # switch a run of the leaf's uplink ports and each leaf a run of the spine's ports; `striped`
    # sends uplink k to spine k mod spines and a leaf's t-th link to spine port t x stride + its
    # place, so adding spines keeps every other uplink where it was and adding leaves moves none.
    uplink_layout: Literal["blocks", "striped"] = "blocks"


class Ecn(Model):
    # ECN marking starts at this queue depth
    min_bytes: Annotated[int, Field(ge=1, le=1 << 30)] = 150_000
    # every packet is marked from this queue depth
    max_bytes: Annotated[int, Field(ge=1, le=1 << 30)] = 1_500_000

    @model_validator(mode="after")
    def _min_below_max(self) -> Ecn:
        if self.min_bytes >= self.max_bytes:
            raise ValueError(
                f"min_bytes ({self.min_bytes}) must be below max_bytes ({self.max_bytes})"
            )
        return self


class Network(Model):
    """Storage, management or out-of-band network: leaves, and spines when one leaf is not enough."""

    # the leaf switch (default from the catalog's defaults for this network)
    leaf: SwitchRef | None = None
    # the spine switch, used when one leaf is not enough
    spine: SwitchRef | None = None
    # as-designed leaves (omitted: sized)
    leaves: Count | None = None
    # as-designed spines (omitted: sized)
    spines: Count | None = None
    # links from each leaf to the spines (omitted: sized)
    leaf_uplinks: Count | None = None
    # allowed leaf oversubscription (default 3.0)
    max_oversubscription: Ratio | None = None


class SharedFileSystem(Model):
    """Cloud targets: a Lustre file system on the storage network that every node mounts (FSx for
    Lustre, Google Cloud Managed Lustre, Azure Managed Lustre), sized from the pools."""

    # the read and write throughput the jobs need per GPU (MB/s): with the tier it sizes the file system
    mbps_per_gpu: Annotated[int, Field(ge=1, le=100_000)] | None = None
    # at least this capacity (TiB); the throughput may need more
    capacity_tib: Annotated[float, Field(gt=0, le=100_000)] | None = None
    # MB/s per TiB (aws and gcp 125, 250, 500, 1000; azure 40, 125, 250, 500); default the fastest
    tier: Literal[40, 125, 250, 500, 1000] | None = None
    # where every node mounts it
    mount: Annotated[str, Field(pattern=r"^/[A-Za-z0-9_.-]{1,64}(/[A-Za-z0-9_.-]{1,64}){0,4}$")] = "/lustre"


class HomeFileSystem(Model):
    """Cloud targets: an NFS file system every GPU node mounts at /home, apart from the Lustre
    scratch (FSx for OpenZFS on aws, Filestore on gcp, Azure NetApp Files on azure), as the reference
    deployments give their clusters a /home of its own."""

    # capacity (GiB); default aws 512 (FSx for OpenZFS), gcp 2560 (Filestore Basic SSD), azure 1024
    # (an Azure NetApp Files capacity pool's smallest size)
    capacity_gib: Annotated[int, Field(ge=64, le=524_288)] | None = None


class StorageNetwork(Network):
    """The storage network, and the storage systems hosts reach over it."""

    # Prefixes of the storage systems (file servers, NVMe-oF targets) on the storage network: every
    # host routes them over its storage ports, as it routes the storage network's own host addresses
    targets: list[Cidr] = Field(default_factory=list, max_length=64)
    # On premises, storage RDMA (GPUDirect Storage, NVMe-oF over RoCE) runs on qos.storage's
    # priority with ECN marking and DCQCN on every storage switch and host storage port. true: PFC
    # on that priority too (a lossless storage network, as storage systems that require PFC ask);
    # false: ECN only, so no pause ever spreads from a slow target into the network
    lossless: bool = False
    # ECN thresholds of the storage class; omitted: qos.ecn scaled by the storage leaf's port speed
    # over the fabric leaf's (a marking threshold grows with bandwidth x delay, DCTCP)
    ecn: Ecn | None = None
    # cloud targets: the shared Lustre file system (the other keys are on-premises switch sizing)
    filesystem: SharedFileSystem | None = None
    # cloud targets: an NFS file system mounted at /home on every GPU node (`home: {}` for the default size)
    home: HomeFileSystem | None = None


class Provisioning(Model):
    """How hosts boot and take their management address (on premises): the management leaves relay
    DHCP from every host port to one server, which hands each port its planned address."""

    # The DHCP server: the management address of the node that runs it (the host end of its
    # management leaf port, as its hosts/<pool>/netplan/<host>.yaml sets it)
    dhcp_server: Ipv4
    # PXE: the server hosts load their boot file from (default: dhcp_server)
    next_server: Ipv4 | None = None
    # PXE: the boot file (`grubx64.efi`, or an http:// URL for UEFI HTTP boot); omitted: no PXE options
    boot_filename: Annotated[str, Field(pattern=r"^[A-Za-z0-9._:/?=&%+~-]{1,200}$")] | None = None


class ExistingSubnets(Model):
    """AWS subnet ids to use instead of creating a subnet for that network."""

    management: Annotated[str, Field(pattern=r"^subnet-[0-9a-f]{8,17}$")] | None = None
    storage: Annotated[str, Field(pattern=r"^subnet-[0-9a-f]{8,17}$")] | None = None
    fabric: Annotated[str, Field(pattern=r"^subnet-[0-9a-f]{8,17}$")] | None = None


Zone = Annotated[str, Field(pattern=r"^[a-z0-9-]{1,40}$")]
ReservationId = Annotated[str, Field(pattern=r"^[A-Za-z0-9_./:-]{1,200}$")]
# Where a cluster runs: on premises or a cloud of cluster/clouds/. Spelled out, not built from the
# registry, so the stack-file reference and a bad target's message name every choice (a test holds
# it to the registry's folders).
Target = Literal["onprem", "aws", "gcp", "azure"]
TARGETS: tuple[str, ...] = get_args(Target)  # in that order, which messages and the starter list them in
Market = Literal["on-demand", "capacity-block", "spot"]


class Reservation(Model):
    """A reservation as the provider describes it (`aws ec2 describe-capacity-reservations`, `gcloud
    compute reservations describe`): the pools that draw on it are checked against what it holds."""

    # the Capacity Block / ODCR id (aws) or the reservation name (gcp)
    id: ReservationId
    # the one instance type it holds
    instance_type: CatalogKey | None = None
    # the one zone it is in
    zone: Zone | None = None
    # how many instances it holds
    nodes: Annotated[int, Field(ge=1, le=100_000)] | None = None


class PoolCloud(Model):
    """Where one pool's nodes run and how they are bought; every key defaults to the cluster's `cloud`."""

    # the pool's zone (in cloud.region; default cloud.zone)
    zone: Zone | None = None
    # the pool's Capacity Block / ODCR id or GCP reservation name, or the reservation as described;
    # `none`: the pool draws on no reservation, whatever cloud.reservation says
    reservation: ReservationId | Reservation | None = None
    # how the pool's instances are bought (default cloud.market)
    market: Market | None = None
    # the pool's node image (default cloud.image, else the provider's GPU image for the type's arch)
    image: Annotated[str, Field(pattern=r"^[A-Za-z0-9_./:+-]{1,300}$")] | None = None


class Cloud(Model):
    # the provider's region
    region: Annotated[str, Field(pattern=r"^[a-z0-9-]{1,40}$")]
    # required on aws and gcp (a reservation's zone); a pool's cloud.zone overrides it
    zone: Zone | None = None
    # a Capacity Block / ODCR id (aws) or a reservation name (gcp), or the reservation as described;
    # every pool draws on it unless its own cloud.reservation says otherwise
    reservation: ReservationId | Reservation | None = None
    # how the instances are bought (a pool's cloud.market overrides it)
    market: Market = "on-demand"
    # GCP (optional): the project the cluster goes into; default the stack's gcp:project
    project: Annotated[str, Field(pattern=r"^[a-z][a-z0-9-]{4,28}[a-z0-9]$")] | None = None
    # Azure (optional): the subscription id; default the stack's azure-native:subscriptionId
    subscription: Annotated[str, Field(pattern=r"^[0-9a-fA-F]{8}(-[0-9a-fA-F]{4}){3}-[0-9a-fA-F]{12}$")] | None = None
    # ranges allowed to reach SSH (never wider than a /8)
    ssh_cidrs: list[Cidr] = Field(default_factory=list, max_length=64)
    # Optional (Pulumi components): node image (AWS AMI id or `resolve:ssm:` parameter, GCP image
    # URL or family, Azure `publisher:offer:sku:version`) and the admin SSH public key.
    image: Annotated[str, Field(pattern=r"^[A-Za-z0-9_./:+-]{1,300}$")] | None = None
    # One line of `[user:]type base64 [comment]` words: a newline would add a key to GCP's ssh-keys metadata.
    ssh_public_key: Annotated[
        str, Field(max_length=16384, pattern=r"^[A-Za-z0-9@._:+/=-]+( [A-Za-z0-9@._:+/=-]+){1,8}$")
    ] | None = None
    # Outbound internet for images and packages (GPU nodes never get public IPs): `nat` (default)
    # creates a NAT gateway (AWS), Cloud NAT (GCP) or an Azure NAT gateway; `none` leaves the
    # nodes without a way out (an existing VPC's own routes, a proxy, an air gap).
    egress: Literal["nat", "none"] = "nat"
    # How users reach a node: `ssm` (AWS Session Manager, the default there), `iap` (GCP
    # Identity-Aware Proxy TCP forwarding, the default there), `bastion` (Azure Bastion, the
    # default there), `none` (a VPN or peering of your own, SSH from ssh_cidrs).
    access: Literal["ssm", "iap", "bastion", "none"] | None = None
    # What the nodes' identity may read, and nothing else: S3 bucket names (aws), GCS bucket names
    # (gcp), storage account resource ids (azure)
    data_buckets: list[Annotated[str, Field(pattern=r"^[A-Za-z0-9_./-]{3,300}$")]] = Field(
        default_factory=list, max_length=32)
    # Azure: container registry resource ids the nodes pull from (AcrPull); AWS and GCP nodes read
    # their account's ECR / project's Artifact Registry
    registries: list[Annotated[str, Field(pattern=r"^[A-Za-z0-9_./-]{3,300}$")]] = Field(
        default_factory=list, max_length=16)
    # AWS only (optional): deploy into an existing VPC, and existing subnets per network.
    vpc_id: Annotated[str, Field(pattern=r"^vpc-[0-9a-f]{8,17}$")] | None = None
    subnet_ids: ExistingSubnets | None = None

    @model_validator(mode="after")
    def _deployable(self) -> Cloud:
        if self.subnet_ids is not None and self.vpc_id is None:
            raise ValueError("subnet_ids need vpc_id (the VPC the subnets are in)")
        return self


class Scheduler(Model):
    """Cloud targets: the managed Kubernetes the GPU nodes join as node pools of an existing cluster
    (EKS managed node groups on the pool's launch template, GKE node pools with the RDMA networks,
    AKS node pools on the ND size), or of a cluster the stack creates (`create`), so the exported
    Kueue objects select nodes that exist; `none` leaves the nodes bare in their groups."""

    # eks (aws) | gke (gcp) | aks (azure) | none: bare VMs in auto scaling groups, MIGs or scale sets
    kind: Literal["eks", "gke", "aks", "none"] = "none"
    # the existing cluster's name the node pools join (its control plane, add-ons and access stay yours)
    cluster: Annotated[str, Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9_-]{0,99}$")] | None = None
    # gke: the cluster's location (a region or zone; default cloud.region)
    location: Annotated[str, Field(pattern=r"^[a-z0-9-]{1,40}$")] | None = None
    # aks: the existing cluster's resource group (a created cluster goes in the stack's own)
    resource_group: Annotated[str, Field(pattern=r"^[A-Za-z0-9_.()-]{1,90}$")] | None = None
    # create the cluster instead of joining one, with a private endpoint; `cluster` is then its name (default
    # the stack's cluster name). gke: on the management VPC with multi-networking and GKE Dataplane V2 for the
    # RDMA node networks. eks: in the stack's VPC (or cloud.vpc_id), its control plane in scheduler.zones, a
    # CPU node group for system pods. aks: in the stack's resource group and VNet, Azure CNI, a system node pool
    create: bool = False
    # create: the control plane's Kubernetes version. gke: a minor (1.35) or a full GKE version, default 1.35 on
    # the REGULAR channel (Cluster Toolkit's gke-a3-ultragpu); eks: a minor, default 1.35; aks: a minor or a
    # patch (1.33 or 1.33.2), required: no default is sourced, and AKS supports only its recent minors
    version: Annotated[str, Field(pattern=r"^1\.[0-9]{2}(\.[0-9]{1,3}(-gke\.[0-9]{1,6})?)?$")] | None = None
    # eks with create: the Availability Zones of the control plane's subnets (two or more in cloud.region; EKS
    # places its network interfaces there)
    zones: list[Annotated[str, Field(pattern=r"^[a-z]{2}(-[a-z]+)+-[0-9]{1,2}[a-z]$")]] | None = Field(
        default=None, max_length=6)


class NodePool(Model):
    # a DNS label; names the pool's hosts (<pool>-node-001)
    name: Name
    # servers in the pool
    nodes: Annotated[int, Field(ge=1, le=100_000)]
    # catalog key (A100, H100, H200, B200, MI300X, ...); on cloud derived from instance_type
    gpu: CatalogKey | None = None
    # default from the catalog
    gpus_per_node: Annotated[int, Field(ge=1, le=72)] | None = None
    # a server of cluster/catalog/servers.yaml (default: the GPU's default server)
    server: CatalogKey | None = None
    # cloud targets: the NIC layout comes from the instance catalog
    instance_type: CatalogKey | None = None
    # on-prem, per node (default from the server)
    fabric_nics: NicSet | None = None
    # per node (default from the server)
    storage_nics: NicSet | None = None
    # per node (default from the server)
    management_nics: NicSet | None = None
    # Which block of the host address pools the pool takes (on premises); default its position in
    # the file. Giving every pool one lets pools be inserted or removed without renumbering others.
    address_block: Annotated[int, Field(ge=0, le=255)] | None = None
    # cloud targets: the pool's own zone, reservation and market (default the cluster's `cloud`)
    cloud: PoolCloud | None = None
    # cloud targets: the names the pool had before, oldest first (its group is renamed, not replaced)
    previous_names: list[Name] = Field(default_factory=list, max_length=8)

    @model_validator(mode="after")
    def _one_network_per_device(self) -> NodePool:
        owner: dict[str, str] = {}
        for network in ("fabric_nics", "storage_nics", "management_nics"):
            nics = getattr(self, network)
            for key in ("devices", "interfaces"):
                for name in (getattr(nics, key) or []) if nics is not None else []:
                    if owner.setdefault(name, network) != network:
                        raise ValueError(f"{name} is named in both {owner[name]} and {network}: a device serves "
                                         "one network (the fabric would share a NIC with storage or management)")
        return self


class Addressing(Model):
    # switch loopbacks (IPv4, with its prefix length)
    loopbacks: Cidr = "10.0.0.0/16"
    # /31s of switch-to-switch cables
    fabric_links: Cidr = "10.64.0.0/12"
    # /31s of host ports
    hosts: Cidr = "10.128.0.0/10"
    # the out-of-band segment (one subnet, VLAN 100): its upper half holds every switch's
    # management address, by stable name; the lower half is the site's (the gateway at its first
    # address by default, BMCs)
    oob: Cidr = "172.16.0.0/16"


# Management servers are IPv4 addresses (Ipv4), no hostnames: a switch needs no DNS to reach its
# NTP, syslog or AAA servers.
# One line of plain text that reaches configs and scripts: no quote, backslash, `$` or template syntax
PLAIN_TEXT_PATTERN = r"^[A-Za-z0-9 .,:;!?()@_+/=-]+$"
PlainText = Annotated[str, Field(min_length=1, max_length=200, pattern=PLAIN_TEXT_PATTERN)]
USER_NAME_PATTERN = r"^[a-z_][a-z0-9_-]{0,30}$"
UserName = Annotated[str, Field(pattern=USER_NAME_PATTERN)]


class SwitchUser(Model):
    """A local account on every switch; its password is `gpu-cluster:switch_password`."""

    # the login name
    name: UserName
    # admin: full rights; operator: read-only
    role: Literal["admin", "operator"] = "admin"


class Snmp(Model):
    """SNMPv2c read-only polling of every switch over its management address; the community is
    `gpu-cluster:snmp_community`."""

    # where the switches are (SNMPv2-MIB sysLocation)
    location: PlainText | None = None
    # who runs them (sysContact)
    contact: PlainText | None = None
    # SNMPv2c trap receivers on the oob segment (link up/down, authentication failures), sent from
    # the management VRF with the same community; not on SONiC, whose config_db has no trap table
    trap_receivers: list[Ipv4] = Field(default_factory=list, max_length=8)


def _endpoint(value: str) -> str:
    address, _, port = value.rpartition(":")
    _ipv4(address)
    if not 1 <= int(port) <= 65535:
        raise ValueError(f"{value!r}: port {port} is not 1-65535")
    return value


# A collector: an IPv4 address and a TCP port, `a.b.c.d:port`
Endpoint = Annotated[str, Field(pattern=r"^[0-9.]{7,15}:[0-9]{1,5}$", title="IPv4 address:port"),
                     AfterValidator(_endpoint)]


class Telemetry(Model):
    """Streaming telemetry every switch pushes from its management VRF to collectors, in the
    protocol its OS has: SONiC gNMI dial-out (config_db TELEMETRY_CLIENT), EOS gNMI through a gRPC
    tunnel it opens to the collector (`management api gnmi` `transport grpc-tunnel`), Cumulus Linux
    OpenTelemetry (OTLP over gRPC). Each list names the collectors of one protocol; a switch whose
    protocol has none pushes nothing (the report says so). Interface counters with PFC and
    queue counters are what a GPU fabric is watched by."""

    # how often the switches report, in seconds (SONiC report_interval, Cumulus sample-interval); an
    # EOS collector gives its own interval in the subscription it sends through the tunnel
    interval_s: Annotated[int, Field(ge=1, le=3600)] = 10
    # gNMI dial-out collectors, `a.b.c.d:port` (SONiC's dialout client publishes to the first that
    # answers, the next on failure)
    gnmi_dialout: list[Endpoint] = Field(default_factory=list, max_length=4)
    # gRPC tunnel servers, `a.b.c.d:port` (EOS dials each; the collector subscribes to gNMI through it)
    grpc_tunnel: list[Endpoint] = Field(default_factory=list, max_length=4)
    # OpenTelemetry collectors' OTLP/gRPC receivers, `a.b.c.d:port` (OTLP's port is 4317)
    otlp: list[Endpoint] = Field(default_factory=list, max_length=4)

    @model_validator(mode="after")
    def _collectors(self) -> Telemetry:
        if not (self.gnmi_dialout or self.grpc_tunnel or self.otlp):
            raise ValueError("telemetry names no collector: give gnmi_dialout, grpc_tunnel or otlp collectors (the "
                             "protocol each switch OS pushes: docs/reference/dialects.md), or remove telemetry")
        for key in ("gnmi_dialout", "grpc_tunnel", "otlp"):
            values = getattr(self, key)
            if len(set(values)) != len(values):
                raise ValueError(f"{key} lists a collector twice")
        return self


def oob_quarters(pool: ipaddress.IPv4Network) -> tuple[ipaddress.IPv4Network, ipaddress.IPv4Network]:
    """The site's lower half of an oob segment, as (its static first quarter: the gateway, the DHCP
    server and other site equipment; its second quarter: the oob DHCP server's pool). The upper
    half holds the switches' management addresses (cluster.addressing)."""
    static, dynamic = next(pool.subnets(prefixlen_diff=1)).subnets(prefixlen_diff=1)
    return static, dynamic


class ManagementPlane(Model):
    """How every switch is managed: its management VRF and address on the oob segment, the
    services it uses and offers there, its local users. Secrets are never written here: they come
    from Pulumi secret config (`gpu-cluster:switch_password`, `tacacs_key`, `snmp_community`) or
    the environment, and the rendered files carry placeholders the deploy fills."""

    # the oob segment's default gateway (default: the first address of addressing.oob)
    gateway: Ipv4 | None = None
    # the oob segment's DHCP server, in the first quarter of addressing.oob (the site's static part):
    # BMCs and switches booting for ZTP lease from the second quarter (dhcp/kea-dhcp4-oob.conf);
    # omitted: no DHCP configuration for the oob segment is rendered
    dhcp_server: Ipv4 | None = None
    # NTP servers (default: the gateway)
    ntp_servers: list[Ipv4] | None = Field(default=None, max_length=10)
    # syslog collectors
    syslog_servers: list[Ipv4] = Field(default_factory=list, max_length=8)
    # DNS resolvers
    dns_servers: list[Ipv4] = Field(default_factory=list, max_length=3)
    # TACACS+ servers, tried in order before the local users (key: gpu-cluster:tacacs_key)
    tacacs_servers: list[Ipv4] = Field(default_factory=list, max_length=8)
    # SNMPv2c polling (community: gpu-cluster:snmp_community); omitted: no SNMP
    snmp: Snmp | None = None
    # streaming telemetry pushed to collectors on the oob segment or beyond its gateway; omitted: none
    telemetry: Telemetry | None = None
    # the switches' management API (EOS eAPI, NVUE REST API) and gNMI server, on the management address
    api: bool = True
    # the text shown before login
    banner: PlainText = "Authorized access only. Activity may be monitored."
    # local accounts (password: gpu-cluster:switch_password), the fallback when TACACS+ is unreachable
    users: list[SwitchUser] = Field(default_factory=lambda: [SwitchUser(name="admin")], min_length=1, max_length=8)

    @model_validator(mode="after")
    def _distinct(self) -> ManagementPlane:
        names = [user.name for user in self.users]
        if len(set(names)) != len(names):
            raise ValueError("users names an account twice")
        for key in ("ntp_servers", "syslog_servers", "dns_servers", "tacacs_servers"):
            values = getattr(self, key) or []
            if len(set(values)) != len(values):
                raise ValueError(f"{key} lists an address twice")
        return self


class Asn(Model):
    # the spines' ASN (RFC 7938, 4-byte private range)
    spine: Annotated[int, Field(ge=1, le=4_294_967_294)] = 4_200_000_000
    # the first leaf ASN; each leaf adds its loopback offset
    leaf_base: Annotated[int, Field(ge=1, le=4_294_967_294)] = 4_200_001_000


class TrafficClass(Model):
    # the DSCP the traffic is marked with
    dscp: Dscp
    # the 802.1p priority (PFC class) it maps to
    priority: Priority


class Qos(Model):
    """One QoS plan for host and switch: NVIDIA's RoCE convention by default."""

    # lossless: PFC + ECN; lossy: ECN only
    mode: Literal["lossless", "lossy"] = "lossless"
    # RoCE data (NVIDIA's convention: DSCP 26 on priority 3)
    roce: TrafficClass = TrafficClass(dscp=26, priority=3)
    # congestion notification packets (strict priority, no PFC)
    cnp: TrafficClass = TrafficClass(dscp=48, priority=6)
    # storage traffic where it shares a NIC or switch
    storage: TrafficClass = TrafficClass(dscp=10, priority=1)
    # everything else
    management: TrafficClass = TrafficClass(dscp=0, priority=0)
    # priorities with PFC on (lossless mode)
    pfc_priorities: list[Priority] = Field(default_factory=lambda: [3], max_length=8)
    ecn: Ecn = Ecn()
    # the MTU of fabric ports and host rails
    mtu: Annotated[int, Field(ge=1280, le=9216)] = 9000


class Policy(Model):
    # below: FAB-GPU-NIC error
    min_gbps_per_gpu: Annotated[float, Field(ge=0, le=100_000)] = 200
    # below: FAB-GPU-NIC warning
    recommended_gbps_per_gpu: Annotated[float, Field(ge=0, le=100_000)] = 400
    # FAB-CONNECTED bound (default 3 for two tiers, 5 for three)
    max_switch_hops: Annotated[int, Field(ge=1, le=15)] | None = None
    # the severity that fails validation (exit 1)
    fail_on: Literal["error", "warning"] = "error"
    # rule ids reported as info instead (ADDR-POOL cannot be suppressed)
    suppress: list[Annotated[str, Field(max_length=64)]] = Field(default_factory=list, max_length=64)
    max_degraded_oversubscription: Ratio | None = None  # FAB-N1: worst ratio after losing one switch


Usd = Annotated[float, Field(ge=0, le=1e9)]
Watts = Annotated[float, Field(ge=0, le=1e7)]
UsdPerKwh = Annotated[float, Field(ge=0, le=10)]


class PriceOverride(Model):
    """The stack's own price and/or power for one item of cluster/catalog/prices.yaml: a number or [low, high]."""

    usd: Usd | Annotated[list[Usd], Field(min_length=2, max_length=2)] | None = None
    watts: Watts | Annotated[list[Watts], Field(min_length=2, max_length=2)] | None = None


class Costs(Model):
    """Optional overrides for the bill of materials: item id -> price / watts, and energy price."""

    usd_per_kwh: UsdPerKwh | Annotated[list[UsdPerKwh], Field(min_length=2, max_length=2)] | None = None
    prices: dict[CatalogKey, PriceOverride] = Field(default_factory=dict, max_length=512)

    @model_validator(mode="after")
    def _known_items_and_ranges(self) -> Costs:
        from cluster.catalog.prices import price_ids  # the catalog is read only when costs are given

        known = price_ids()
        for item, override in self.prices.items():
            if item not in known:
                raise ValueError(f"unknown price item {item!r} in costs.prices; known items: {', '.join(known)}")
            for value in (override.usd, override.watts):
                if isinstance(value, list) and value[0] > value[1]:
                    raise ValueError(f"costs.prices.{item}: range {value} has low above high")
        if isinstance(self.usd_per_kwh, list) and self.usd_per_kwh[0] > self.usd_per_kwh[1]:
            raise ValueError(f"costs.usd_per_kwh: range {self.usd_per_kwh} has low above high")
        return self


class StackFile(Model):
    """The value of `gpu-cluster:cluster` in a stack file."""

    # the cluster's name (a DNS label)
    name: Annotated[str, Field(pattern=r"^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$")]
    # cloud targets: the names the cluster had before, oldest first: its deployed resources are
    # renamed in place (Pulumi aliases), not replaced, and host names keep the oldest
    previous_names: list[Annotated[str, Field(pattern=r"^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$")]] = Field(
        default_factory=list, max_length=8)
    # where it runs
    target: Target
    # cloud targets: region, zone, reservation, access
    cloud: Cloud | None = None
    # cloud targets: the managed Kubernetes node pools the GPU nodes join (default none: bare nodes)
    scheduler: Scheduler | None = None
    # the GPU servers, in file order (cabling and addresses follow it)
    node_pools: list[NodePool] = Field(min_length=1, max_length=64)
    # the GPU fabric (on premises; the provider's on cloud)
    fabric: Fabric | None = None
    # the storage network
    storage: StorageNetwork | None = None
    # the management (in-band) network
    management: Network | None = None
    # the out-of-band network: BMCs and switch management ports
    oob: Network | None = None
    # host provisioning: the DHCP server the management leaves relay to, PXE boot
    provisioning: Provisioning | None = None
    # address pools
    addressing: Addressing = Addressing()
    # BGP AS numbers
    asn: Asn = Asn()
    # the lossless QoS plan (RoCE only)
    qos: Qos | None = None
    # thresholds, failing severity, suppressions
    policy: Policy = Policy()
    # bill-of-materials price overrides
    costs: Costs | None = None
    # how the switches are managed (on premises): management address, services, users
    management_plane: ManagementPlane = ManagementPlane()
