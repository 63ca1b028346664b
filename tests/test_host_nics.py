"""Host NIC layouts of the server catalog: each NIC set's status and source, the DGX port split the
vendor documents, and the DESIGN summary naming every default that is not VERIFIED."""

from __future__ import annotations

import json
import re
from collections import Counter
from typing import Any

import pytest

from cluster.catalog import NIC_SETS, NicLayout, Server, load_catalog
from cluster.pipeline import Valid
from cluster.report import summary, to_json, to_text
from tests.conftest import run, stack

STATUS = re.compile(r"\b(?:UNVERIFIED|VERIFIED|PARTIAL)\b")


@pytest.mark.parametrize("name", sorted(load_catalog().servers))
def test_every_nic_set_states_its_status_in_its_source(name: str) -> None:
    server = load_catalog().servers[name]
    for key in NIC_SETS:
        nics: NicLayout = getattr(server, key)
        assert nics.status is not None and nics.status in STATUS.findall(nics.source), (key, nics.source)
    if server.fabric_nics.devices:  # a device order is documented: the note names its devices
        assert all(device in server.fabric_nics.source for device in server.fabric_nics.devices)


def test_a_server_nic_set_without_status_or_source_is_refused() -> None:
    entry = load_catalog().servers["dgx-h100"].model_dump()
    entry["storage_nics"].pop("status")
    with pytest.raises(ValueError, match="storage_nics needs a status and a source"):
        Server(**entry)


def links_per_node(valid: Valid, host: str) -> Counter[str]:
    graph = valid.topology.graph
    counts: Counter[str] = Counter()
    for _, _, data in graph.edges(host, data=True):
        counts[data["network"]] += data["links"]
    return counts


def valid(data: dict[str, Any]) -> Valid:
    result = run(data)
    assert isinstance(result, Valid), [(f.rule, f.message) for f in result.findings]
    return result


def test_a_dgx_h100_cables_one_port_of_each_dual_port_card_to_storage_and_one_to_in_band() -> None:
    """DGX BasePOD RA: 2 dual-port ConnectX-7 (up to 400G) beside the 8 compute ports; BasePOD
    deployment guide: port 2 of both cards is in-band management, port 1 storage; so 2 + 2, not 4
    storage ports and the 10 GbE LAN port the SuperPOD RA leaves unused."""
    result = valid(stack(node_pools=[{"name": "dgx", "nodes": 2, "gpu": "H100"}]))
    assert result.spec.pools[0].server == "dgx-h100"
    assert links_per_node(result, "dgx-node-001") == {"fabric": 8, "storage": 2, "management": 2, "oob": 1}
    gbps = {data["network"]: data["gbps"] for _, _, data in result.topology.graph.edges("dgx-node-001", data=True)}
    assert (gbps["storage"], gbps["management"]) == (400, 400)


def host_nics(data: dict[str, Any]) -> dict[str, Any]:
    result = valid(data)
    found: dict[str, Any] = summary(result.spec, result.topology)["host_nics"]
    return found


def test_the_summary_names_the_dgx_b200_device_order_as_unverified() -> None:
    """No DGX B200 port-to-RDMA-device table in a primary source: NCCL_IB_HCA would be the generic
    mlx5_0..mlx5_7, and the summary says so with the key to set."""
    nics = host_nics(stack(node_pools=[{"name": "dgx", "nodes": 2, "gpu": "B200"}]))
    assert nics["dgx"]["server"] == "dgx-b200"
    items = {item["nics"]: item for item in nics["dgx"]["unverified"]}
    assert items["fabric_nics.devices"] == {"nics": "fabric_nics.devices", "layout": "generic mlx5_0..mlx5_7",
                                            "status": "UNVERIFIED", "path": "node_pools[0].fabric_nics.devices"}
    assert "fabric_nics" not in items  # 8 x 400G single-port ConnectX-7: VERIFIED


def test_the_summary_is_silent_for_a_verified_server() -> None:
    assert host_nics(stack(node_pools=[{"name": "dgx", "nodes": 2, "gpu": "H100"}])) == {}


def test_what_the_stack_file_gives_is_no_catalog_default() -> None:
    given = {"name": "h200", "nodes": 2, "gpu": "H200",
             "fabric_nics": {"count": 8, "gbps": 400, "devices": [f"mlx5_{i}" for i in range(8)]},
             "storage_nics": {"count": 2, "gbps": 200}}
    nics = host_nics(stack(node_pools=[given]))
    assert [item["nics"] for item in nics["h200"]["unverified"]] == ["management_nics"]
    everything = {**given, "management_nics": {"count": 1, "gbps": 25}}
    assert host_nics(stack(node_pools=[everything])) == {}


def test_design_text_and_json_show_the_unverified_defaults() -> None:
    result = run(stack(node_pools=[{"name": "h200", "nodes": 2, "gpu": "H200"}]))
    text = to_text(result)
    assert ("  host NICs of h200 not verified (server hgx-h200): fabric_nics 8 x 400G PARTIAL, storage_nics 2 x 200G "
            "UNVERIFIED, management_nics 1 x 25G UNVERIFIED, fabric_nics.devices generic mlx5_0..mlx5_7 UNVERIFIED"
            ) in text.splitlines()
    assert "node_pools[0].fabric_nics.devices" in text
    assert set(json.loads(to_json(result))["summary"]["host_nics"]) == {"h200"}


def test_cloud_pools_have_no_server_defaults() -> None:
    nics = host_nics(stack(target="aws", cloud={"region": "us-east-1", "zone": "us-east-1a"},
                           node_pools=[{"name": "gpu", "nodes": 2, "instance_type": "p5e.48xlarge"}]))
    assert nics == {}
