"""NCCL / EFA env files per pool: on premises from the host renderer and the QoS plan, on cloud
from the instance catalog; parsed as KEY=VALUE and checked against what each provider requires."""

from __future__ import annotations

import copy
import re
import subprocess
from pathlib import Path
from typing import Any, get_args

import pytest
import yaml

from cluster.artifacts import render_tree
from cluster.catalog import CloudFabric, load_catalog
from cluster.exports.files import export_files
from cluster.exports.nccl import nccl_env
from cluster.pipeline import Valid, validate, validate_mapping
from tests.conftest import ROOT

ECT0 = 2
KEY_VALUE = re.compile(r"^(?P<key>[A-Z][A-Z0-9_]*)=(?:'(?P<quoted>[^']+)'|(?P<value>[^\s'\"]+))$")
SOURCE = re.compile(r"^# Source: .*\b[\w.-]+/[\w.-]+ \S+")  # owner/repo path/to/file
CLOUD_STACKS = {"aws": "aws-p5e", "gcp": "gcp-a3ultra", "azure": "azure-ndh200"}
CATALOG_TYPES = [(target, instance_type) for target, types in sorted(load_catalog().instances.items())
                 for instance_type in sorted(types)]


def cluster_of(stack: str) -> dict[str, Any]:
    data: dict[str, Any] = yaml.safe_load((ROOT / "stacks" / f"Pulumi.{stack}.yaml").read_text())
    return copy.deepcopy(data["config"]["gpu-cluster:cluster"])


def built(data: dict[str, Any]) -> Valid:
    result = validate_mapping("t", data)
    assert isinstance(result, Valid), [f.message for f in result.findings]
    return result


def parse(text: str) -> dict[str, str]:
    """KEY=VALUE lines; comments and nothing else allowed, no key twice."""
    env: dict[str, str] = {}
    for number, line in enumerate(text.splitlines(), 1):
        if line.startswith("#"):
            continue
        match = KEY_VALUE.match(line)
        assert match, f"line {number} is neither a comment nor KEY=VALUE: {line!r}"
        assert match["key"] not in env, f"{match['key']} set twice"
        env[match["key"]] = match["quoted"] if match["quoted"] is not None else match["value"]
    return env


def sourced(text: str, tmp_path: Path) -> dict[str, str]:
    """What bash sees after `set -a; . FILE` in an empty environment."""
    path = tmp_path / "nccl.env"
    path.write_text(text)
    done = subprocess.run(["env", "-i", "bash", "-c", f"set -a; . {path}; env -0"],
                          capture_output=True, text=True, check=True)
    variables = dict(entry.split("=", 1) for entry in done.stdout.split("\0") if entry)
    return {key: value for key, value in variables.items() if key not in {"PWD", "SHLVL", "_"}}


def names(value: str) -> list[str]:
    return value.split(",")


# What aws-samples/awsome-distributed-training micro-benchmarks/nccl-tests/slurm/
# nccl-tests-container.sbatch exports at commit 47535fafb9402faf265af442277835d31e549772 (lines
# 29-43; NCCL_DEBUG aside, and NCCL_TUNER_PLUGIN, which it builds with $(uname -m)). Read from the
# file, not from the catalog; kubernetes/nccl-tests.yaml passes the same values with mpirun -x.
SBATCH_EXPORTS = {"FI_PROVIDER": "efa", "FI_EFA_FORK_SAFE": "1", "NCCL_BUFFSIZE": "8388608",
                  "NCCL_P2P_NET_CHUNKSIZE": "524288"}


def check_efa(env: dict[str, str], text: str, fabric: CloudFabric) -> None:
    assert env["FI_PROVIDER"] == "efa"
    # Every setting the cited sbatch exports (NCCL_DEBUG aside, and its tuner path, which it
    # builds with $(uname -m)), with the sbatch's values.
    assert {key: env.get(key) for key in SBATCH_EXPORTS} == SBATCH_EXPORTS
    assert env["NCCL_TUNER_PLUGIN"] == "/opt/amazon/ofi-nccl/lib/x86_64-linux-gnu/libnccl-ofi-tuner.so"
    assert not [key for key in env if key.startswith("NCCL_IB_")]
    assert "aws-ofi-nccl" in text


def check_gib(env: dict[str, str], text: str, fabric: CloudFabric) -> None:
    assert env["NCCL_NET"] == "gIB"
    assert len(names(env["NCCL_SOCKET_IFNAME"])) == 2  # the two gVNICs, not the RDMA NICs
    # Current Google tooling (the nccl-plugin-gib package) installs the plugin in /usr/local/gib;
    # /var/lib/gib was the old host path (cluster-toolkit run-nccl-tests.sh, commit 1047080).
    assert re.search(r"^#\s+- source /usr/local/gib/scripts/set_nccl_env\.sh", text, re.MULTILINE)
    assert "/var/lib/gib" not in text


def check_tcpxo(env: dict[str, str], text: str, fabric: CloudFabric) -> None:
    assert len(names(env["NCCL_FASTRAK_IFNAME"])) == fabric.count
    assert env["NCCL_FASTRAK_CTRL_DEV"] == env["NCCL_SOCKET_IFNAME"]
    assert env["NCCL_FASTRAK_CTRL_DEV"] not in names(env["NCCL_FASTRAK_IFNAME"])
    assert "source /var/lib/tcpxo/lib64/nccl-env-profile.sh" in text


def check_tcpx(env: dict[str, str], text: str, fabric: CloudFabric) -> None:
    assert env["NCCL_NET"] == "GPUDirectTCPX_v7"
    nics = names(env["NCCL_GPUDIRECTTCPX_SOCKET_IFNAME"])
    assert len(nics) == fabric.count
    assert env["NCCL_GPUDIRECTTCPX_CTRL_DEV"] == env["NCCL_SOCKET_IFNAME"] not in nics
    for bindings in ("NCCL_GPUDIRECTTCPX_TX_BINDINGS", "NCCL_GPUDIRECTTCPX_RX_BINDINGS"):
        assert [binding.split(":")[0] for binding in env[bindings].split(";")] == nics
    assert env["NCCL_CROSS_NIC"] == "0"


def check_azure_ib(env: dict[str, str], text: str, fabric: CloudFabric) -> None:
    assert env["NCCL_SOCKET_IFNAME"] == "eth0"
    if fabric.count == 4:  # ND GB200 v6: Azure's Grace Blackwell NCCL validation config
        assert env["NCCL_IGNORE_CPU_AFFINITY"] == "1" and env["NCCL_MNNVL_ENABLE"] == "1"
        assert "#   - /usr/local/nccl-rdma-sharp-plugins" in text
        return
    assert "#   - /opt/microsoft" in text  # where the topology file lives: the container mounts it
    # The Azure HPC image's topology file of the VM's generation (azhpc-images customizations/
    # ndv4.sh for the HDR A100 sizes, ndv5.sh for the NDR v5 sizes).
    generation = {200: "ndv4", 400: "ndv5"}[fabric.gbps]
    assert env["NCCL_IB_PCI_RELAXED_ORDERING"] == "1"
    assert env["UCX_IB_PCI_RELAXED_ORDERING"] == "on"
    assert env["NCCL_TOPO_FILE"] == f"/opt/microsoft/{generation}/topo.xml"


ARM64_IMAGE = {"aws": "ami-0123456789abcdef0", "azure": "example:ubuntu-arm64:2404:latest"}
REQUIRED = {"efa": check_efa, "rdma": check_gib, "gpudirect-tcpxo": check_tcpxo,
            "gpudirect-tcpx": check_tcpx, "infiniband": check_azure_ib}


def test_every_cloud_fabric_kind_has_its_requirements() -> None:
    kinds = get_args(CloudFabric.model_fields["kind"].annotation)
    assert set(REQUIRED) == set(kinds)


@pytest.mark.parametrize(("target", "instance_type"), CATALOG_TYPES)
def test_cloud_env_per_catalog_instance_type(target: str, instance_type: str, tmp_path: Path) -> None:
    data = cluster_of(CLOUD_STACKS[target])
    data["node_pools"][0]["instance_type"] = instance_type
    entry = load_catalog().instances[target][instance_type]
    if entry.not_deployable:
        result = validate_mapping("t", data)
        assert not isinstance(result, Valid) and "gpu-cluster does not deploy it yet" in result.findings[0].message
        return
    if entry.arch == "arm64" and target != "gcp":  # no default arm64 image there: the stack names one
        data["node_pools"][0]["cloud"] = {"image": ARM64_IMAGE[target]}
    result = built(data)
    assert isinstance(result, Valid)
    files = nccl_env(result.spec, result.topology)
    assert list(files) == ["h200"]
    text = files["h200"]
    env = parse(text)
    assert sourced(text, tmp_path) == env  # a shell reads exactly the values the provider set
    fabric = load_catalog().instances[target][instance_type].fabric
    REQUIRED[fabric.kind](env, text, fabric)
    assert "NCCL_IB_TC" not in env and "NCCL_IB_HCA" not in env
    assert any(SOURCE.match(line) for line in text.splitlines()), "no source file named"
    assert instance_type in text.splitlines()[0]
    comments_before = [text.splitlines()[index - 1] for index, line in enumerate(text.splitlines())
                       if KEY_VALUE.match(line)]
    assert all(line.startswith("# ") for line in comments_before), "every value needs its why"


def test_every_pool_of_a_cloud_stack_gets_its_own_instance_type() -> None:
    data = cluster_of("aws-p5e")
    data["node_pools"].append({"name": "a100", "nodes": 2, "instance_type": "p4d.24xlarge",
                               "cloud": {"market": "on-demand", "reservation": "none"}})
    result = built(data)
    assert isinstance(result, Valid)
    files = export_files(result.spec, result.topology)
    assert {path for path in files if path.startswith("nccl/")} == {"nccl/a100.env", "nccl/h200.env"}
    assert "p4d.24xlarge" in files["nccl/a100.env"] and "4 x 100G efa" in files["nccl/a100.env"]
    assert "p5e.48xlarge" in files["nccl/h200.env"] and "32 x 100G efa" in files["nccl/h200.env"]


@pytest.mark.parametrize("stack", sorted(path.stem.removeprefix("Pulumi.")
                                         for path in (ROOT / "stacks").glob("Pulumi.*.yaml")))
def test_export_writes_an_env_per_pool_for_every_example_stack(stack: str) -> None:
    result = validate(stack)
    assert isinstance(result, Valid), f"{stack} does not resolve"
    files = export_files(result.spec, result.topology)
    assert sorted(path for path in files if path.startswith("nccl/")) == sorted(
        f"nccl/{pool.name}.env" for pool in result.spec.pools)
    for pool in result.spec.pools:
        env = parse(files[f"nccl/{pool.name}.env"])
        assert ("NCCL_IB_TC" in env) == (result.spec.target == "onprem" and result.spec.fabric is not None
                                         and result.spec.fabric.transport == "roce")


@pytest.mark.parametrize("stack", ["prod", "superpod", "dev"])
def test_onprem_env_is_the_rendered_host_file_byte_for_byte(stack: str, tmp_path: Path) -> None:
    result = validate(stack)
    assert isinstance(result, Valid)
    files = render_tree(result.spec, result.topology)
    for pool in result.spec.pools:
        assert files[f"nccl/{pool.name}.env"] == files[f"hosts/{pool.name}/nccl.env"]
        assert sourced(files[f"nccl/{pool.name}.env"], tmp_path) == parse(files[f"nccl/{pool.name}.env"])


@pytest.mark.parametrize("golden", ["eos", "infiniband", "nvue", "sonic"])
def test_golden_trees_carry_identical_env_files(golden: str) -> None:
    tree = ROOT / "tests" / "golden" / golden
    exported = sorted((tree / "nccl").glob("*.env"))
    assert exported
    for path in exported:
        assert path.read_bytes() == (tree / "hosts" / path.stem / "nccl.env").read_bytes()


def rail_devices(env: dict[str, str]) -> list[str]:
    value = env["NCCL_IB_HCA"]
    assert value.startswith("="), "without `=` mlx5_1 also selects mlx5_10.."
    return [device.removesuffix(":1") for device in value[1:].split(",")]


@pytest.mark.parametrize("stack", ["prod", "superpod"])
def test_onprem_hca_list_is_exact_and_in_rail_order(stack: str) -> None:
    data = cluster_of(stack)
    devices = ["mlx5_0", "mlx5_3", "mlx5_4", "mlx5_5", "mlx5_6", "mlx5_9", "mlx5_10", "mlx5_11"]
    data["node_pools"][0].setdefault("fabric_nics", {"count": 8, "gbps": 400})["devices"] = devices
    result = built(data)
    assert isinstance(result, Valid)
    pool = result.spec.pools[0]
    assert pool.fabric_nics.ports == len(devices)
    env = parse(nccl_env(result.spec, result.topology)[pool.name])
    assert rail_devices(env) == devices  # stack-file order kept, not sorted (mlx5_10 after mlx5_9)
    infiniband = stack == "superpod"
    assert ("NCCL_IB_TC" in env) is not infiniband  # the subnet manager owns InfiniBand QoS


# NVIDIA DGX H100/H200 User Guide, "Network Connections, Cables, and Adaptors", table Network
# Modules: the default RDMA device of the compute port of GPU 0..7. mlx5_1, 2, 7, 8 are the
# BlueField-3 storage / in-band ports, which NCCL must not pick.
DGX_H100_COMPUTE = ["mlx5_0", "mlx5_3", "mlx5_4", "mlx5_5", "mlx5_6", "mlx5_9", "mlx5_10", "mlx5_11"]


def test_superpod_hca_list_names_the_dgx_h100_compute_nics() -> None:
    result = validate("superpod")
    assert isinstance(result, Valid)
    env = parse(nccl_env(result.spec, result.topology)["dgx"])
    assert rail_devices(env) == DGX_H100_COMPUTE
    assert not {"mlx5_1", "mlx5_2", "mlx5_7", "mlx5_8"} & set(rail_devices(env))
    assert "server catalog's dgx-h100" in nccl_env(result.spec, result.topology)["dgx"]


def test_dgx_h100_on_roce_gets_the_same_devices_in_nccl_env_and_qos_sh() -> None:
    data = cluster_of("prod")
    data["node_pools"][0] = {"name": "dgx", "nodes": 16, "gpu": "H100", "server": "dgx-h100"}
    result = built(data)
    assert isinstance(result, Valid)
    files = render_tree(result.spec, result.topology)
    assert rail_devices(parse(files["nccl/dgx.env"])) == DGX_H100_COMPUTE
    script = files["hosts/dgx/qos.sh"]
    assert re.findall(r"cma_roce_tos -d (\S+)", script) == DGX_H100_COMPUTE


@pytest.mark.parametrize("server", ["hgx-h200", "dgx-b200", None])
def test_servers_without_documented_devices_keep_the_generic_names_and_say_so(server: str | None) -> None:
    data = cluster_of("prod")
    data["node_pools"][0].pop("fabric_nics")
    if server is not None:
        data["node_pools"][0]["server"] = server
        data["node_pools"][0]["gpu"] = load_catalog().servers[server].gpu
    result = built(data)
    assert isinstance(result, Valid)
    text = nccl_env(result.spec, result.topology)["h200"]
    assert rail_devices(parse(text)) == [f"mlx5_{rail}" for rail in range(8)]
    assert "generic default" in text and "node_pools[0].fabric_nics.devices" in text


def test_catalog_devices_give_way_to_the_stack_file_and_to_another_port_count() -> None:
    data = cluster_of("superpod")
    own = [f"mlx5_{rail}" for rail in (11, 10, 9, 6, 5, 4, 3, 0)]
    data["node_pools"][0]["fabric_nics"] = {"count": 8, "gbps": 400, "devices": own}
    result = built(data)
    assert isinstance(result, Valid)
    text = nccl_env(result.spec, result.topology)["dgx"]
    assert rail_devices(parse(text)) == own and "node_pools[0].fabric_nics.devices" in text
    data["node_pools"][0]["fabric_nics"] = {"count": 4, "gbps": 400}  # not the catalog's eight ports
    data["fabric"].update(leaves=16, spines=8, leaf_uplinks=32)
    result = built(data)
    assert isinstance(result, Valid)
    assert rail_devices(parse(nccl_env(result.spec, result.topology)["dgx"])) == [f"mlx5_{rail}" for rail in range(4)]


def test_catalog_rejects_a_device_list_that_does_not_fit_the_ports() -> None:
    from pydantic import ValidationError

    from cluster.catalog import NicLayout

    with pytest.raises(ValidationError, match="devices lists 2 names for 8 ports"):
        NicLayout(count=8, gbps=400, devices=("mlx5_0", "mlx5_1"))


@pytest.mark.parametrize("dscp", [26, 34, 46])
def test_one_roce_tos_in_every_rendered_file_derived_from_the_plan(dscp: int) -> None:
    """NCCL_IB_TC, cma_roce_tos and traffic_class are one byte: DSCP << 2 | ECT(0) (RFC 3168 ECN bits)."""
    data = cluster_of("prod")
    data["qos"]["roce"]["dscp"] = dscp
    result = built(data)
    assert isinstance(result, Valid) and result.spec.qos is not None
    assert result.spec.qos.roce.dscp == dscp
    expected = dscp << 2 | ECT0  # 106 for NVIDIA's DSCP 26
    files = render_tree(result.spec, result.topology)
    for pool in result.spec.pools:
        env = parse(files[f"nccl/{pool.name}.env"])
        script = files[f"hosts/{pool.name}/qos.sh"]
        values = {("NCCL_IB_TC", int(env["NCCL_IB_TC"]))}
        values |= {("cma_roce_tos", int(tos)) for tos in re.findall(r"cma_roce_tos -d \S+ -t (\d+)", script)}
        values |= {("traffic_class", int(tos)) for tos in re.findall(r"/tc/1/traffic_class\"? (\d+)", script)}
        assert {name for name, _ in values} == {"NCCL_IB_TC", "cma_roce_tos", "traffic_class"}
        assert {value for _, value in values} == {expected}, values
        assert int(env["NCCL_IB_TC"]) >> 2 == dscp and int(env["NCCL_IB_TC"]) & 0b11 == ECT0
        for device in rail_devices(env):
            assert f"cma_roce_tos -d {device} -t {expected}" in script
    without_ecn = re.compile(rf"(?i)(tos|_tc\b|traffic.class)\W{{1,3}}(?:\S+\W+){{0,3}}{dscp << 2}\b")
    stale = [(path, line) for path, text in files.items() if path.startswith(("hosts/", "nccl/"))
             for line in text.splitlines() if without_ecn.search(line)]
    assert stale == [], "a ToS / traffic class without the ECN bits"


def test_cloud_env_ignores_the_stack_qos_and_is_deterministic() -> None:
    result = built(cluster_of("gcp-a3ultra"))
    assert isinstance(result, Valid)
    first = nccl_env(result.spec, result.topology)
    assert first == nccl_env(result.spec, result.topology)
    assert not re.search(r"20\d\d-\d\d-\d\d", first["h200"])


def test_export_cli_writes_the_cloud_env(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from cluster.cli import main

    assert main(["export", "aws-p5e", "--out", str(tmp_path)]) == 0
    env = parse((tmp_path / "nccl" / "h200.env").read_text())
    assert env["FI_PROVIDER"] == "efa" and "NCCL_IB_TC" not in env
    assert "nccl/h200.env" in capsys.readouterr().out
