"""The cloud cluster's /home (storage.home): an NFS file system per provider (FSx for OpenZFS, Filestore,
Azure NetApp Files) on the design's storage or management network, protected, mounted at /home by the
nodes' boot script, in the stack's outputs and the plan."""

from __future__ import annotations

import base64
import shutil
import subprocess
from typing import Any

import pytest
from conftest import run
from test_components_support import cloud_stack, of_type, one, run_program

from cluster.deployment import deployment
from cluster.filesystems import boot_script
from cluster.pipeline import Valid

TYPES = {"aws": "p5e.48xlarge", "gcp": "a3-ultragpu-8g", "azure": "Standard_ND96isr_H200_v5"}
HOME_TYPE = {"aws": "fsx/openZfsFileSystem:OpenZfsFileSystem", "gcp": "filestore/instance:Instance",
             "azure": "netapp:CapacityPoolVolume"}


def with_home(target: str, **home: Any) -> dict[str, Any]:
    return {**cloud_stack(target, TYPES[target]), "storage": {"home": home}}


def _boot_script(outcome: Any, target: str) -> str:
    if target == "aws":
        return base64.b64decode(one(outcome, "LaunchTemplate").inputs["userData"]).decode()
    if target == "gcp":
        return str(one(outcome, "InstanceTemplate").inputs["metadata"]["startup-script"])
    profile = one(outcome, "VirtualMachineScaleSet").inputs["virtualMachineProfile"]["osProfile"]
    return base64.b64decode(profile["customData"]).decode()


@pytest.mark.parametrize("target, source, options", [
    ("aws", "<t-storage-home.fsx>:/fsx", "nfsvers=4.1,_netdev"),
    ("gcp", "<t-storage-home ip>:/home", "defaults,_netdev"),
    ("azure", "<t-storage-home ip>:/t-home", "rw,hard,rsize=262144,wsize=262144,vers=3,tcp,_netdev,nconnect=8"),
])
def test_home_is_created_protected_and_mounted_at_boot(target: str, source: str, options: str) -> None:
    outcome = run_program(with_home(target))
    assert outcome.ok, outcome.errors
    home = one(outcome, HOME_TYPE[target])
    assert [item.name for item in outcome.resources if item.protect] == [home.name]  # the stateful one only
    script = _boot_script(outcome, target)
    assert f"mount -t nfs -o {options} {source} /run/gpu-cluster-home" in script
    assert f"echo '{source} /home nfs {options} 0 0' >> /etc/fstab" in script
    assert "cp -an /home/. /run/gpu-cluster-home/" in script  # the image's /home (login keys) seeds the share
    assert "lustre" not in script  # no storage.filesystem: nothing else mounted
    output = outcome.outputs["network"]["home"]
    assert (output["source"], output["mount"], output["id"]) == (source, "/home", f"<{home.name}>")


def test_aws_home_is_openzfs_in_the_storage_subnet_behind_the_nfs_rules() -> None:
    outcome = run_program(with_home("aws"))
    home = one(outcome, HOME_TYPE["aws"])
    assert home.inputs["subnetIds"] == ["<t-storage-subnet>"] and home.inputs["securityGroupIds"] == ["<t-storage-sg>"]
    assert (home.inputs["deploymentType"], home.inputs["storageCapacity"], home.inputs["throughputCapacity"]) == (
        "SINGLE_AZ_HA_2", 512, 320)
    group = next(item for item in of_type(outcome, "SecurityGroup") if item.name == "t-storage-sg")
    nfs = {(rule["protocol"], rule["fromPort"], rule["toPort"]) for rule in group.inputs["ingress"]
           if rule.get("self") and rule["description"] == "NFS (/home)"}
    assert nfs == {(protocol, low, high) for protocol in ("tcp", "udp")
                   for low, high in ((111, 111), (2049, 2049), (20001, 20003))}
    # the nodes' primary interface carries the storage group, so the NFS self rules admit them
    primary = one(outcome, "LaunchTemplate").inputs["networkInterfaces"][0]
    assert "<t-storage-sg>" in primary["securityGroups"]


def test_without_home_there_is_no_nfs_rule_and_the_plan_says_none_created() -> None:
    outcome = run_program(cloud_stack("aws", TYPES["aws"]))
    assert of_type(outcome, HOME_TYPE["aws"]) == [] and outcome.outputs["network"]["home"] is None
    group = next(item for item in of_type(outcome, "SecurityGroup") if item.name == "t-storage-sg")
    assert all(rule["description"] == "Lustre" for rule in group.inputs["ingress"])
    result = run(cloud_stack("aws", TYPES["aws"]))
    assert isinstance(result, Valid)
    summary = deployment(result.spec)
    assert summary is not None and any(line.startswith("home: none created (FSx for OpenZFS; storage.home creates")
                                       for line in summary.todo)


def test_gcp_home_is_filestore_on_the_management_vpc() -> None:
    """Cluster Toolkit's homefs sits on the VMs' first network: every machine type has a NIC there."""
    home = one(run_program(with_home("gcp")), HOME_TYPE["gcp"])
    assert home.inputs["networks"] == [{"network": "<t-management-vpc>", "modes": ["MODE_IPV4"],
                                        "connectMode": "DIRECT_PEERING"}]
    assert (home.inputs["tier"], home.inputs["location"]) == ("BASIC_SSD", "us-central1-b")
    assert home.inputs["fileShares"] == {"capacityGb": 2560, "name": "home"}


def test_azure_home_is_a_netapp_volume_in_a_delegated_subnet_exported_to_the_vnet() -> None:
    outcome = run_program(with_home("azure", capacity_gib=1500))
    volume = one(outcome, HOME_TYPE["azure"])
    subnet = next(item for item in of_type(outcome, "network:Subnet") if item.name == "t-storage-home-subnet")
    assert subnet.inputs["delegations"] == [{"name": "netapp", "serviceName": "Microsoft.NetApp/volumes"}]
    assert volume.inputs["subnetId"] == "<t-storage-home-subnet>"
    assert subnet.inputs["addressPrefix"] not in {item.inputs["addressPrefix"] for item in of_type(outcome, "network:Subnet")
                                                  if item is not subnet}
    two_tib = 2 * 1024 ** 4  # 1,500 GiB asked: capacity pools come in whole TiB
    assert volume.inputs["usageThreshold"] == two_tib and one(outcome, "netapp:CapacityPool").inputs["size"] == two_tib
    (rule,) = volume.inputs["exportPolicy"]["rules"]
    assert rule["allowedClients"] == "10.0.0.0/16" and rule["nfsv3"] and volume.inputs["protocolTypes"] == ["NFSv3"]


@pytest.mark.parametrize("target, home, message", [
    ("gcp", {"capacity_gib": 1024}, "Filestore (Basic SSD) holds 2,560 to 65,433 GiB, not 1,024"),
    ("azure", {"capacity_gib": 200_000}, "Azure NetApp Files (Premium) holds 1,024 to 102,400 GiB"),
])
def test_a_size_the_service_does_not_offer_is_refused(target: str, home: dict[str, Any], message: str) -> None:
    (finding,) = [f for f in run(with_home(target, **home)).findings if f.severity.name == "ERROR"]
    assert finding.path == "storage.home.capacity_gib" and message in finding.message


def test_on_premises_home_is_reported_ignored() -> None:
    onprem = {"name": "t", "target": "onprem", "node_pools": [{"name": "h200", "nodes": 16, "gpu": "H200"}],
              "storage": {"home": {}}}
    assert ("SPEC-IGNORED", "storage.home") in {(f.rule, f.path) for f in run(onprem).findings}


@pytest.mark.parametrize("target, service", [("aws", "FSx for OpenZFS"), ("gcp", "Filestore"),
                                             ("azure", "Azure NetApp Files")])
def test_the_plan_shows_home(target: str, service: str) -> None:
    result = run(with_home(target))
    assert isinstance(result, Valid)
    summary = deployment(result.spec)
    assert summary is not None
    (line,) = [line for line in summary.creates if line.startswith("home: ")]
    assert service in line and "mounted at /home on every node at boot; protected" in line
    assert not any(line.startswith("home: none created") for line in summary.todo)


def test_kubernetes_node_pools_do_not_mount_home_and_the_plan_says_so() -> None:
    data = {**with_home("gcp"), "scheduler": {"kind": "gke", "cluster": "ml"}}
    result = run(data)
    assert isinstance(result, Valid)
    summary = deployment(result.spec)
    assert summary is not None
    assert any("not mounted by the node pools" in line for line in summary.creates if line.startswith("home: "))
    assert any(line.startswith("home: Google Kubernetes Engine nodes do not run the stack's boot script")
               for line in summary.todo)


def test_the_boot_script_is_valid_bash_with_both_file_systems() -> None:
    script = boot_script(("10.0.16.5@tcp:/lustrefs", "/lustre"), ("fs-1.fsx:/fsx", "nfsvers=4.1,_netdev", "/home"))
    assert script.index("/lustre") < script.index("mount.nfs")  # one script, Lustre first, no early exit
    assert "exit" not in script
    if shutil.which("bash") is None:
        pytest.skip("no bash")
    subprocess.run(["bash", "-n"], input=script, text=True, check=True)


def _unshare_works() -> bool:
    return shutil.which("unshare") is not None and subprocess.run(
        ["unshare", "-rm", "true"], capture_output=True).returncode == 0


def test_the_boot_script_seeds_the_share_and_mounts_it_once(tmp_path: Any) -> None:
    """The script run for real in a user and mount namespace: /etc/fstab and /run are the test's, the
    home is a directory of the test's (the script takes the path), and the NFS server a directory that
    `mount` (a stub on PATH) binds. The image's home (a login key) lands on the share, the share covers
    the home, and a second boot adds no second fstab line."""
    if not _unshare_works():
        pytest.skip("no user namespaces here")
    share, home, stubs = tmp_path / "share", tmp_path / "home", tmp_path / "bin"
    for directory in (share, home / "azureuser" / ".ssh", stubs):
        directory.mkdir(parents=True)
    (home / "azureuser" / ".ssh" / "authorized_keys").write_text("ssh-ed25519 AAAA key\n")
    (tmp_path / "fstab").write_text("")
    # `mount -t nfs -o OPTS SOURCE TARGET` and `mount HOME` (from fstab) bind the share on their target
    (stubs / "mount").write_text(f'#!/bin/bash\nexec /usr/bin/mount --bind {share} "${{@: -1}}"\n')
    (stubs / "mount.nfs").write_text("#!/bin/bash\n")
    for stub in stubs.iterdir():
        stub.chmod(0o755)
    script = tmp_path / "boot.sh"
    script.write_text(boot_script(None, ("fs-1.fsx:/fsx", "nfsvers=4.1,_netdev", str(home))))
    boot = f"PATH={stubs}:$PATH bash {script}"
    # boot, read the key through the mounted share, then boot again with the share unmounted
    outer = (f"/usr/bin/mount --bind {tmp_path / 'fstab'} /etc/fstab && /usr/bin/mount -t tmpfs none /run && "
             f"{boot} && mountpoint -q {home} && cat {home}/azureuser/.ssh/authorized_keys && "
             f"/usr/bin/umount {home} && {boot} && mountpoint -q {home}")
    done = subprocess.run(["unshare", "-rm", "bash", "-c", outer], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert "ssh-ed25519 AAAA key" in done.stdout
    assert (share / "azureuser" / ".ssh" / "authorized_keys").read_text() == "ssh-ed25519 AAAA key\n"
    assert (tmp_path / "fstab").read_text() == f"fs-1.fsx:/fsx {home} nfs nfsvers=4.1,_netdev 0 0\n"
