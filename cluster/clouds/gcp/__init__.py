"""Google Cloud: what the design side knows of it (the Pulumi side is components/gcp/)."""

from __future__ import annotations

from cluster.clouds import Cloud, Home, Lustre, Managed, round_up
from cluster.sshkeys import LoginKey

# Google Cloud Managed Lustre: per tier a minimum, a step and a maximum (cloud.google.com/managed-lustre/
# docs/performance-tiers: 1000 MB/s/TiB from 9,000 GiB in 9,000 GiB steps up to 1,530,000 GiB,
# then 72,000 GiB steps; 500: 18,000 / 18,000 / 3,060,000 / 144,000; 250: 36,000 / 36,000 /
# 6,120,000 / 288,000; 125: 72,000 in 72,000 steps).
# tier -> (minimum GiB, step GiB, where the step grows, the larger step, maximum GiB)
LUSTRE_STEPS = {1000: (9_000, 9_000, 1_530_000, 72_000, 10_008_000),
                500: (18_000, 18_000, 3_060_000, 144_000, 20_016_000),
                250: (36_000, 36_000, 6_120_000, 288_000, 40_032_000),
                125: (72_000, 72_000, 12_240_000, 72_000, 12_240_000)}


def lustre_size(tier: int, needed_gib: float) -> tuple[int, int | None]:
    """Managed Lustre's size for at least `needed_gib` at `tier`, and its largest."""
    minimum, step, threshold, large_step, largest = LUSTRE_STEPS[tier]
    size = max(minimum, round_up(needed_gib, step))
    if size > threshold:
        size = threshold + round_up(needed_gib - threshold, large_step)
    return size, largest


# GKE: a node pool's name is 1-40 lower-case characters (gcloud container node-pools create); a
# cluster's 1-40 lower-case letters, digits and hyphens, a letter first, no hyphen last (gcloud container
# clusters create NAME). scheduler.create: the control plane's version when the stack file gives none: the
# 1.35 minor on the REGULAR channel, as Cluster Toolkit's gke-a3-ultragpu blueprint
# (examples/gke-a3-ultragpu/gke-a3-ultragpu.yaml at 1047080375af: version_prefix "1.35.", release_channel REGULAR).
GKE_RELEASE_CHANNEL = "REGULAR"
GKE = Managed(
    pool_name_limit=40,
    cluster_name_form=(r"^[a-z](?:[a-z0-9-]{0,38}[a-z0-9])?$", "1-40 lower-case letters, digits and hyphens starting "
                       "with a letter"),
    default_version="1.35",
    own_keys=("location",),
    own_node_image=True,
    location_is_region=True,
    one_rdma_zone=True,  # one set of Network objects (rdma-0..) per cluster names one RDMA VPC: cloud.zone's
    instance_needs=("gke_accelerator", "{type} gets no GKE node pool here: its GPU NICs are GPUDirect-TCPX(O) VPCs, "
                    "whose GKE daemons and pod networks this stack does not build (A3 Ultra and A4 RDMA node pools it "
                    "does)"),
)

CLOUD = Cloud(
    name="gcp",
    provider="Google Cloud",
    group="managed instance group",
    kubernetes="gke",
    managed=GKE,
    kubernetes_service="Google Kubernetes Engine",
    kubernetes_pool="node pool",
    kubernetes_pools="GKE node pools",
    lustre=Lustre(service="Google Cloud Managed Lustre", short="Managed Lustre", tiers=(125, 250, 500, 1000),
                  size=lustre_size),
    # /home: Filestore Basic SSD, 2,560 GiB, as Cluster Toolkit's a3-ultragpu-8g a3ultra-vm.yaml homefs
    # (filestore_tier BASIC_SSD, size_gb 2560, local_mount /home, at 1047080375af); Basic SSD holds 2.5 to
    # 63.9 TiB (cloud.google.com/filestore/docs/service-tiers); the filestore module's mount options
    # `defaults,_netdev`.
    home=Home(service="Filestore (Basic SSD)", short="Filestore", default_gib=2_560, smallest_gib=2_560,
              largest_gib=65_433, options="defaults,_netdev", where="on the management VPC (every VM's first gVNIC)"),
    # Google's Ubuntu accelerator images (the arm64 family is the one Cluster Toolkit's A4X blueprint
    # builds on, examples/machine-learning/a4x-highgpu-4g/a4x-vm.yaml at 1047080375af:
    # ubuntu-accelerator-2404-arm64-with-nvidia-580).
    default_images={"amd64": "projects/ubuntu-os-accelerator-images/global/images/family/"
                             "ubuntu-accelerator-2204-amd64-with-nvidia-580",
                    "arm64": "projects/ubuntu-os-accelerator-images/global/images/family/"
                             "ubuntu-accelerator-2404-arm64-with-nvidia-580"},
    default_image_words="Ubuntu accelerator image with the NVIDIA 580 driver (22.04 amd64; 24.04 arm64 for A4X)",
    image_needs="the NVIDIA driver and, for A3 Ultra / A4, the gIB NCCL plugin in /usr/local/gib",
    quota="quota: {gpus:,} {gpu} GPUs in {region} for pool {pool} (Compute Engine GPU quota of the machine series)",
    # GKE: block, sub-block, host (GoogleCloudPlatform/cluster-toolkit examples/gke-a3-ultragpu/
    # kueue-configuration.yaml.tftpl, commit 1047080); gce-topology-host is the host's own machine,
    # so the level nearest a host is the sub-block.
    egress="Cloud NAT on the management VPC",
    topology_labels=("cloud.google.com/gce-topology-block", "cloud.google.com/gce-topology-subblock",
                     "cloud.google.com/gce-topology-host"),
    close_level=3,
    # The RDMA VPC follows its zone's RoCE profile, and the GPU VPCs of A3 High / Mega serve one NIC layout.
    fabric_per_layout=True,
    fabrics=("GPU fabrics (one per RDMA zone or NIC layout)",
             "put the pools that train together in one zone and machine series"),
    gpu_taint_tolerated=True,  # GKE taints GPU nodes nvidia.com/gpu:NoSchedule; Google's own flavor tolerates it
    provider_settings={"gcp:project": "project", "gcp:region": "region", "gcp:zone": "zone"},
    own_keys=("project",),
    access={"iap": "IAP TCP forwarding: TCP 22 from 35.235.240.0/20 on the management VPC "
                   "(`gcloud compute ssh <vm> --tunnel-through-iap`)"},
    # A zone's name is its region's, a dash and a letter: "us-central1" + "-b"
    # (cloud.google.com/compute/docs/regions-zones).
    access_commands={"iap": "gcloud compute ssh <vm> --zone <zone> --tunnel-through-iap"},
    zone_suffix=r"-[a-z]",
    zone_form="the region's name, a dash and a letter, as {region}-b",
    # The `ssh-keys` metadata takes `user:type base64 [comment]` (cloud.google.com/compute/docs/
    # connect/add-ssh-keys); the user is optional here (components/gcp/node_pool.py adds one).
    login_key=LoginKey(user_form="GCP's ssh-keys form", user_note="GCP also takes `user:` in front"),
    # A GCS bucket name: 3-63 lower-case letters, digits, dots, _ and - (cloud.google.com/storage/
    # docs/buckets#naming); the nodes read the project's Artifact Registry, so no registries.
    data_buckets=(r"[a-z0-9][a-z0-9._-]{1,61}[a-z0-9]",
                  "a GCS bucket name: 3-63 lower-case letters, digits, dots, _, -"),
    own_registry="project",
    os_login_todo="login: OS Login is on; grant your users roles/compute.osLogin (and IAP-secured Tunnel User for "
                  "IAP) on the project",
)
