"""Azure NCCL env as Azure's own NCCL validation sets it (NCCL_IGNORE_CPU_AFFINITY, the NDv5
topology file), and the host paths a container must mount, in the env file and in the exported
sample jobs."""

from __future__ import annotations

import pytest

from cluster.exports.kubernetes import kueue_objects
from cluster.exports.nccl import nccl_env
from cluster.pipeline import Valid, validate


def built(stack: str) -> Valid:
    result = validate(stack)
    assert isinstance(result, Valid)
    return result


def test_azure_ndv5_env_ignores_the_vms_cpu_affinity_and_names_the_topology_file() -> None:
    result = built("azure-ndh200")
    text = nccl_env(result.spec, result.topology)["h200"]
    assert "\nNCCL_IGNORE_CPU_AFFINITY=1\n" in text
    assert "\nNCCL_TOPO_FILE=/opt/microsoft/ndv5/topo.xml\n" in text
    assert "# Container mounts: these host paths, at the same path, read-only" in text
    assert "#   - /opt/microsoft\n" in text
    assert "configs/hopper.conf" in text  # the source says where the setting comes from


@pytest.mark.parametrize("stack, mounts", [
    ("azure-ndh200", ["/opt/microsoft"]),
    ("gcp-a3ultra", ["/usr/local/gib"]),
    ("aws-p5e", []),  # aws-ofi-nccl lives in the training image (the awsome images build it in)
])
def test_sample_jobs_mount_what_the_env_names(stack: str, mounts: list[str]) -> None:
    result = built(stack)
    jobs = [item for item in kueue_objects(result.spec, result.topology) if item["kind"] == "Job"]
    assert jobs
    for job in jobs:
        pod = job["spec"]["template"]["spec"]
        (container,) = pod["containers"]
        assert [mount["mountPath"] for mount in container.get("volumeMounts", [])] == mounts
        assert all(mount["readOnly"] for mount in container.get("volumeMounts", []))
        assert [volume["hostPath"]["path"] for volume in pod.get("volumes", [])] == mounts
