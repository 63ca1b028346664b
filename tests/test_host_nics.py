"""Host NIC layouts of the server catalog: each NIC set's status and source, and the DGX port split
the vendor documents."""

from __future__ import annotations

import re
from collections import Counter
from typing import Any

import pytest

from cluster.catalog import NIC_SETS, NicLayout, Server, load_catalog
from cluster.pipeline import Valid
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
