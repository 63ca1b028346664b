"""A host port has one OS name wherever one is given, as a switch port does: cabling.csv's a_name,
the host's and the switch's verify files, the switch's description of the port (and SONiC's
DEVICE_NEIGHBOR), the host's netplan file and netnames.sh, the DHCP plan. Its plan port, the
NIC's label (`gpu-nic0`), is cabling.csv's a_port and the netplan comment only."""

from __future__ import annotations

import copy
import csv
import io
import json
import re
from typing import Any

import pytest
import yaml

from cluster.artifacts import render_tree
from cluster.pipeline import Valid, validate, validate_mapping
from tests.conftest import ROOT

DEV = yaml.safe_load((ROOT / "stacks" / "Pulumi.dev.yaml").read_text())["config"]["gpu-cluster:cluster"]


def _dev_with(**pool: Any) -> dict[str, Any]:
    data: dict[str, Any] = copy.deepcopy(DEV)
    data["node_pools"][0].update(pool)
    return data


EXAMPLES: dict[str, str | dict[str, Any]] = {
    "dev": "dev",
    "prod": "prod",
    "golden-eos": str(ROOT / "tests/golden/stacks/eos.yaml"),
    "golden-nvue": str(ROOT / "tests/golden/stacks/nvue.yaml"),
    "golden-infiniband": str(ROOT / "tests/golden/stacks/infiniband.yaml"),
    "fabric-interfaces-given": _dev_with(fabric_nics={"count": 8, "gbps": 400,
                                                      "interfaces": [f"ens{r + 1}f0np0" for r in range(8)]}),
    "dual-port-nics": _dev_with(fabric_nics={"count": 4, "gbps": 400, "ports_per_nic": 2},
                                storage_nics={"count": 1, "gbps": 200, "ports_per_nic": 2}),
}


def _tree(example: str | dict[str, Any]) -> dict[str, str]:
    result = validate(example) if isinstance(example, str) else validate_mapping("t", example)
    assert isinstance(result, Valid) and result.ok, [f.message for f in result.findings][:3]
    return render_tree(result.spec, result.topology)


def _neighbors(text: str) -> dict[str, tuple[str, str]]:
    """A verify neighbor file: port -> (neighbor, neighbor's port)."""
    rows = [line.split("\t") for line in text.splitlines() if line and not line.startswith("#")]
    return {row[0]: (row[1], row[2]) for row in rows}


def _descriptions(tree: dict[str, str], switch: str) -> dict[str, str] | None:
    """The switch's description of each of its ports as its rendered config sets it (None: no
    config of its own, as an InfiniBand switch, which opensm configures)."""
    folder = f"switches/{switch}/"
    if folder + "config_db.json" in tree:
        db = json.loads(tree[folder + "config_db.json"])
        for port, neighbor in db.get("DEVICE_NEIGHBOR", {}).items():  # SONiC: the same name twice
            assert db["PORT"][port]["description"] == f"{neighbor['name']} {neighbor['port']}"
        return {port: fields["description"] for port, fields in db["PORT"].items() if "description" in fields}
    if folder + "nvue.sh" in tree:
        return dict(re.findall(r"^nv set interface (\S+) description '(.*)'$", tree[folder + "nvue.sh"], re.M))
    if folder + "eos.cfg" in tree:
        return dict(re.findall(r"^interface (\S+)\n   description (.*)$", tree[folder + "eos.cfg"], re.M))
    assert not any(path.startswith(folder) for path in tree), sorted(p for p in tree if p.startswith(folder))
    return None


@pytest.mark.parametrize("name", EXAMPLES)
def test_every_host_port_has_one_os_name(name: str) -> None:
    tree = _tree(EXAMPLES[name])
    rows = list(csv.DictReader(io.StringIO(tree["cabling.csv"])))
    hosts = {row["a_device"] for row in rows if row["link"] == "host-leaf"}
    pools = {path.split("/")[1] for path in tree if path.startswith("hosts/")}
    netplans = {path.split("/")[-1].removesuffix(".yaml"): text for path, text in tree.items()
                if re.fullmatch(r"hosts/[^/]+/netplan/[^/]+\.yaml", path)}
    netnames = {pool: tree.get(f"hosts/{pool}/netnames.sh", "") for pool in pools}
    pinned = {name for text in netnames.values() for names in re.findall(r"^\w+_NAMES=\((.*)\)$", text, re.M)
              for name in names.split()}
    kea = json.loads(tree["dhcp/kea-dhcp4.conf"]) if "dhcp/kea-dhcp4.conf" in tree else None
    dhcp = {(s["user-context"]["host"], s["user-context"]["port"]) for s in kea["Dhcp4"]["subnet4"]} if kea else set()
    checked = {"description": 0, "netplan": 0, "netnames": 0}
    for row in (row for row in rows if row["a_device"] in hosts):
        host, port, switch, switch_port = row["a_device"], row["a_name"], row["b_device"], row["b_name"]
        where = f"{name}: cable {row['cable']} ({host} {row['a_port']})"
        assert port != row["a_port"] or port == "bmc", where  # the NIC's label is the plan port, not the OS name
        assert _neighbors(tree[f"verify/neighbors/{host}.txt"])[port] == (switch, switch_port), where
        assert _neighbors(tree[f"verify/neighbors/{switch}.txt"])[switch_port] == (host, port), where
        descriptions = _descriptions(tree, switch)
        if descriptions is not None:
            assert descriptions[switch_port] == f"{host} {port}", where
            checked["description"] += 1
        if row["network"] in ("management", "storage"):
            # the netplan file configures the port by that name; its comment gives the NIC's label
            assert port in yaml.safe_load(netplans[host])["network"]["ethernets"], where
            assert f"    {port}:  # NIC {row['a_port']}, cabled to {switch} {switch_port}\n" in netplans[host], where
            checked["netplan"] += 1
            if row["network"] == "management" and kea is not None:
                assert (host, port) in dhcp, where
        if port in pinned:
            checked["netnames"] += 1
    # every example renders descriptions of its host ports; RoCE rails without given names are pinned
    assert checked["description"] and checked["netplan"], checked
    fabric = [row for row in rows if row["a_device"] in hosts and row["network"] == "fabric"]
    if name in ("dev", "prod", "golden-eos", "golden-nvue", "dual-port-nics"):
        assert {row["a_name"] for row in fabric} <= pinned, name
    if name == "fabric-interfaces-given":
        assert {row["a_name"] for row in fabric} == {f"ens{r + 1}f0np0" for r in range(8)}
        assert not {row["a_name"] for row in fabric} & pinned
    if name == "golden-infiniband":
        assert {row["a_name"] for row in fabric} == {f"mlx5_{d}/1" for d in (0, 3, 4, 5, 6, 9, 10, 11)}


def test_dual_port_nics_name_each_port_by_its_position() -> None:
    """NIC-major: port p of NIC n is rail n*2+p, its label gpu-nic<n>p<p+1>."""
    rows = list(csv.DictReader(io.StringIO(_tree(EXAMPLES["dual-port-nics"])["cabling.csv"])))
    ends = [(row["a_port"], row["a_name"]) for row in rows if row["a_device"] == "h200-node-001"
            and row["network"] in ("fabric", "storage")]
    assert ends == [*((f"gpu-nic{r // 2}p{r % 2 + 1}", f"rail{r}") for r in range(8)),
                    ("stor-nic0p1", "stor0"), ("stor-nic0p2", "stor1")]
