"""Azure: what the design side knows of it (the Pulumi side is components/azure/)."""

from __future__ import annotations

import hashlib

from cluster.clouds import Cloud, Home, Lustre, Managed, round_up
from cluster.sshkeys import LoginKey

# Azure Managed Lustre (AMLFS-Durable-Premium-40 / 125 / 250 / 500): a minimum that is also the
# increment, 48 / 16 / 8 / 4 TiB (Azure/ai-infrastructure-on-azure storage_references/aks/
# shared_storage, the SKU table it quotes from learn.microsoft.com azure-managed-lustre).
# tier -> (increment = minimum TiB, maximum TiB)
LUSTRE_STEPS = {40: (48, 12_800), 125: (16, 4_096), 250: (8, 2_048), 500: (4, 1_024)}
GIB_PER_TIB = 1024

# A scale set in a single placement group holds at most 100 VMs, and InfiniBand connects VMs only
# within one placement group (learn.microsoft.com "Working with large virtual machine scale sets":
# singlePlacementGroup true caps the scale set at 100 VMs; a larger capacity is refused at deploy).
# The pool's scale set sets singlePlacementGroup true (components/azure/node_pool.py), so a bigger
# pool cannot deploy (CLOUD-PLACEMENT).
PLACEMENT_GROUP_VMS = 100


def lustre_size(tier: int, needed_gib: float) -> tuple[int, int | None]:
    """Azure Managed Lustre's size for at least `needed_gib` at `tier`, and its largest."""
    increment, largest_tib = LUSTRE_STEPS[tier]
    return round_up(needed_gib / GIB_PER_TIB, increment) * GIB_PER_TIB, largest_tib * GIB_PER_TIB


# "Computer name prefixes must be 1 to 15 characters long" (VirtualMachineScaleSetOSProfile
# .computerNamePrefix, Azure compute REST API); each VM's host name is the prefix and a suffix.
PREFIX_CHARS = 15
PREFIX_HASH = 5


def host_prefix(cluster: str, pool: str) -> str:
    """The scale set's computerNamePrefix: `<cluster>-<pool>` when it fits 15 characters, else its
    head and a hash of the whole (`training-clu-3f2a1`), so two pools of one cluster never share
    host names, and the prefix of a pool depends on its own names only (adding a pool renames none)."""
    full = f"{cluster}-{pool}"
    if len(full) <= PREFIX_CHARS:
        return full
    digest = hashlib.sha256(full.encode()).hexdigest()[:PREFIX_HASH]
    head = full[:PREFIX_CHARS - PREFIX_HASH - 1].rstrip("-")
    return f"{head}-{digest}"


# AKS: a Linux agent pool's name is 1-12 lower-case letters and digits, starting with a letter (AKS "Create
# node pools": "Linux node pools ... length must be between 1 and 12 characters"), so a pool's is its own
# name without hyphens; a cluster's 1-63 letters, digits, underscores and hyphens, a letter or digit first
# and last (az aks create --name; Azure resource naming rules, Microsoft.ContainerService/managedClusters).
# AKS takes a minor or a patch version (ManagedCluster kubernetesVersion: "both patch version
# <major.minor.patch> and <major.minor> are supported"), never a GKE build suffix, and supports only its few
# most recent minors, so gpu-cluster sources no default.
AKS = Managed(
    pool_name=lambda _cluster, pool: pool.replace("-", ""),
    pool_name_form=(r"^[a-z][a-z0-9]{0,11}$", "AKS node pool name {name!r} (the pool's name without hyphens) is not "
                    "1-12 lower-case letters and digits starting with a letter"),
    cluster_name_form=(r"^[A-Za-z0-9](?:[A-Za-z0-9_-]{0,61}[A-Za-z0-9])?$", "1-63 letters, digits, '_' and '-' "
                       "starting and ending with a letter or digit"),
    version_form=(r"^1\.[0-9]{2}(\.[0-9]{1,3})?$", "a minor or a patch version",
                  "give a version `az aks get-versions --location <region>` lists, as 1.33 or 1.33.2"),
    version_required=("scheduler.version is required to create an AKS cluster: AKS supports only its few most "
                      "recent minors, so no default stays true",
                      "give a version `az aks get-versions --location <region>` lists, as 1.33 (gpu-cluster sources "
                      "no AKS default: one would fall out of AKS's supported window)"),
    own_keys=("resource_group",),
    joined_needs=("scheduler.resource_group", "scheduler.resource_group is required with kind aks: an agent pool is "
                  "created in its cluster's resource group", "add the AKS cluster's resource group"),
    created_ignores={"resource_group": ("a created AKS cluster goes in the stack's own resource group",
                                        "remove scheduler.resource_group")},
    own_node_image=True,
)

CLOUD = Cloud(
    name="azure",
    provider="Azure",
    group="VM scale set",
    kubernetes="aks",
    managed=AKS,
    kubernetes_service="Azure Kubernetes Service",
    kubernetes_pool="node pool",
    kubernetes_pools="AKS node pools",
    lustre=Lustre(service="Azure Managed Lustre", short="Azure Managed Lustre", tiers=(40, 125, 250, 500),
                  size=lustre_size),
    # /home: Azure NetApp Files (Premium), as CycleCloud Workspace for Slurm's shared file system (Azure/
    # cyclecloud-slurm-workspace bicep/anf.bicep: one capacity pool and one NFSv3 volume in a delegated
    # subnet, mount options rw,hard,rsize=262144,wsize=262144,vers=3,tcp,_netdev,nconnect=8); a capacity
    # pool is 1 TiB at least, in 1 TiB steps, a regular volume 100 TiB at most (learn.microsoft.com
    # azure-netapp-files-resource-limits).
    home=Home(service="Azure NetApp Files (Premium)", short="Azure NetApp Files", default_gib=1_024,
              smallest_gib=1_024, largest_gib=102_400,
              options="rw,hard,rsize=262144,wsize=262144,vers=3,tcp,_netdev,nconnect=8",
              where="in its own subnet delegated to Microsoft.NetApp/volumes, exported to the VNet only",
              step_gib=1_024),
    # Microsoft's Ubuntu HPC image (Mellanox OFED, NVIDIA driver). No default for an arm64 type: the
    # stack file names the image.
    default_images={"amd64": "microsoft-dsvm:ubuntu-hpc:2204:latest"},
    default_image_words="Microsoft's Ubuntu HPC 22.04 image (Mellanox OFED, NVIDIA driver)",
    image_needs="the NVIDIA driver and the InfiniBand (OFED) stack",
    quota="quota: {vcpus:,} vCPUs of the {instance_type} family in {region} for pool {pool} ({nodes} x "
          "{vcpus_per_node})",
    # AKS: the agent pool, one scale set and so one InfiniBand fabric (kubernetes.azure.com/agentpool):
    # a hard boundary, so a job's topology is required there.
    egress="a NAT gateway on the management and storage subnets",
    topology_labels=("kubernetes.azure.com/agentpool",),
    one_fabric_per_pool=True,
    host_prefix=host_prefix,
    placement_group_vms=PLACEMENT_GROUP_VMS,
    fabrics=("InfiniBand fabrics (one per scale set)",
             "expected when a pool is split at 100 VMs: keep every job within one pool (the exported Kueue objects "
             "require one agent pool per job)"),
    provider_settings={"azure-native:location": "region", "azure-native:subscriptionId": "subscription"},
    own_keys=("subscription",),
    access={"bastion": "Azure Bastion (Standard, native-client tunneling) in AzureBastionSubnet "
                       "(`az network bastion ssh ... --auth-type ssh-key --username azureuser`)"},
    access_commands={"bastion": "az network bastion ssh --name <bastion> --resource-group <resource_group> "
                                "--target-resource-id <vm id> --auth-type ssh-key --username azureuser "
                                "--ssh-key ~/.ssh/id_ed25519"},
    # AKS: the node pools are the AKS cluster's, so its API server is the way in
    kubernetes_access="az aks get-credentials --resource-group {resource_group} --name {cluster}",
    # The scale set is bought on demand; reservations and markets are not used there.
    capacity_unused="the scale set asks for its VMs on demand; arrange capacity with Azure ahead of time",
    key_todo="login: the scale set's only login is cloud.ssh_public_key for azureuser; the example stack's "
             "placeholder key logs nobody in: put your own key there",
    registry_todo="images: the nodes' identity pulls from no Azure Container Registry; name yours in "
                  "cloud.registries (AcrPull)",
    # The scale set's linuxConfiguration.ssh.publicKeys[].keyData takes the key alone, RSA of at
    # least 2048 bits or Ed25519 (learn.microsoft.com "Detailed steps: Create and manage SSH keys
    # for authentication to a Linux VM in Azure", Supported SSH key formats; the pinned
    # pulumi-azure-native SshPublicKey.key_data: "at least 2048-bit and in ssh-rsa format"), and
    # password login is disabled (components/azure/node_pool.py), so bare nodes need the key.
    login_key=LoginKey(
        hint="give the one line of your id_ed25519.pub or id_rsa.pub (RSA of at least 2048 bits) as it is, "
             "without a user: prefix",
        no_user="Azure's keyData takes the key alone; the {user!r}: prefix ({user_form}) makes it invalid (the "
                "scale set's user is azureuser)",
        types=("ssh-rsa", "ssh-ed25519"), types_words="RSA (at least 2048 bits) or Ed25519 keys", min_rsa_bits=2048,
        required="cloud.ssh_public_key is required on azure: password login is disabled, so without a key the "
                 "scale set has no login method and Azure refuses it",
        required_hint="add `ssh_public_key: ssh-ed25519 AAAA... you@example` (the one line of your "
                      "~/.ssh/id_ed25519.pub, or an RSA key of at least 2048 bits)"),
    # A storage account resource id: the nodes' identity gets Storage Blob Data Reader on it, and
    # AcrPull on each container registry named (components/azure/network.py).
    data_buckets=(r"/subscriptions/[0-9a-fA-F-]{36}/resourceGroups/[A-Za-z0-9_.()-]{1,90}/providers/"
                  r"Microsoft\.Storage/storageAccounts/[a-z0-9]{3,24}",
                  "a storage account resource id: /subscriptions/<id>/resourceGroups/<group>/providers/"
                  "Microsoft.Storage/storageAccounts/<name>"),
    registries=(r"/subscriptions/[0-9a-fA-F-]{36}/resourceGroups/[A-Za-z0-9_.()-]{1,90}/providers/"
                r"Microsoft\.ContainerRegistry/registries/[A-Za-z0-9]{5,50}",
                "a container registry resource id: /subscriptions/<id>/resourceGroups/<group>/providers/"
                "Microsoft.ContainerRegistry/registries/<name>"),
    # With AKS the node pools are the AKS cluster's: its VNet, kubelet identity, outbound path and
    # access (components/azure/network.py creates none of the stack's own for them).
    bare_only_keys={
        "access": "picks the way in (Azure Bastion)", "egress": "picks the way out (a NAT gateway)",
        "ssh_cidrs": "admits SSH through the management NSG", "ssh_public_key": "is the scale set's admin login",
        "data_buckets": "are read by the stack's node identity",
        "registries": "are pulled from by the stack's node identity",
    },
    kubelet_todo="identity: AKS nodes run as the cluster's kubelet identity (the stack creates none): grant it "
                 "AcrPull and Storage Blob Data Reader where the nodes need them",
)
