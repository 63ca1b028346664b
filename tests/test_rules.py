"""Every rule: a table of (stack change -> rule id, config path, severity), passing and failing."""

from __future__ import annotations

from typing import Any

import pytest

from cluster.findings import Severity
from cluster.loader import from_mapping
from cluster.pipeline import Valid, check
from cluster.rules.base import Rule
from tests.conftest import BASE, run, stack
from tests.test_components_support import EXAMPLE_KEY

AWS = {"region": "us-east-1", "zone": "us-east-1a"}
GCP = {"region": "us-central1", "zone": "us-central1-b"}
AZURE = {"region": "eastus", "ssh_public_key": EXAMPLE_KEY}


def pool(**changes: Any) -> list[dict[str, Any]]:
    return [{**BASE["node_pools"][0], **changes}]


def cloud(target: str, instance_type: str, nodes: int = 4, region: dict[str, str] = AWS) -> dict[str, Any]:
    return stack(target=target, cloud=region, node_pools=[{"name": "gpu", "nodes": nodes, "instance_type": instance_type}])


# (case id, stack, rule, path, severity)
FAILING = [
    ("leaf 2:1 by uplinks", stack(fabric={"leaves": 8, "spines": 4, "leaf_uplinks": 8}),
     "FAB-OVERSUB", "fabric.leaf_uplinks", "error"),
    ("leaf 2:1 auto sized at 1:1 with tighter switch", stack(fabric={"leaves": 8, "spines": 2, "leaf_uplinks": 10}),
     "FAB-OVERSUB", "fabric.leaf_uplinks", "error"),
    ("spine 2:1 in three tiers",
     stack(node_pools=pool(nodes=64), fabric={"leaf": {"ports": 32, "port_gbps": 400}, "leaves": 32, "spines": 32, "pods": 2,
                                                "cores": 8, "leaf_uplinks": 16, "spine_uplinks": 8}),
     "FAB-OVERSUB", "fabric.spine_uplinks", "error"),
    ("100G per GPU", stack(node_pools=pool(fabric_nics={"count": 8, "gbps": 100})),
     "FAB-GPU-NIC", "node_pools[0].fabric_nics", "error"),
    ("200G per GPU is below recommended", stack(node_pools=pool(fabric_nics={"count": 8, "gbps": 200})),
     "FAB-GPU-NIC", "node_pools[0].fabric_nics", "warning"),
    ("one NIC per GPU pair", stack(node_pools=pool(fabric_nics={"count": 4, "gbps": 400})),
     "FAB-GPU-NIC", "node_pools[0].fabric_nics", "warning"),
    ("400G NICs on 200G leaf ports", stack(fabric={"leaf": {"switch": "SN5600", "port_gbps": 200}}),
     "FAB-GPU-NIC", "node_pools[0].fabric_nics", "warning"),
    ("mismatched link speed", stack(fabric={"leaf": {"switch": "SN5600", "port_gbps": 200}}),
     "FAB-LINK-SPEED", "node_pools[0].fabric_nics", "warning"),
    ("p4d: 4 x 100G EFA for 8 GPUs", cloud("aws", "p4d.24xlarge"), "FAB-GPU-NIC", "node_pools[0].instance_type", "error"),
    ("a3-highgpu: 4 x 200G for 8 GPUs", cloud("gcp", "a3-highgpu-8g", region=GCP),
     "FAB-GPU-NIC", "node_pools[0].instance_type", "error"),
    ("a3-megagpu: 200G per GPU", cloud("gcp", "a3-megagpu-8g", region=GCP),
     "FAB-GPU-NIC", "node_pools[0].instance_type", "warning"),
    ("pool with fewer rails", stack(node_pools=[*pool(nodes=2), {"name": "small", "nodes": 2, "gpu": "H100",
                                                                  "fabric_nics": {"count": 4, "gbps": 400}}]),
     "FAB-RAIL", "node_pools", "error"),
    ("pool with fewer rails warns per pool", stack(node_pools=[*pool(nodes=2), {"name": "small", "nodes": 2, "gpu": "H100",
                                                                                 "fabric_nics": {"count": 4, "gbps": 400}}]),
     "FAB-RAIL", "node_pools[1].fabric_nics", "warning"),
    ("storage shares the fabric, RoCE protected", stack(fabric={"shared_with": ["storage"]}),
     "FAB-ISOLATION", "fabric.shared_with", "warning"),
    ("storage shares the fabric and RoCE's priority",
     stack(fabric={"shared_with": ["storage"]}, qos={"storage": {"dscp": 10, "priority": 3}}),
     "FAB-ISOLATION", "fabric.shared_with", "error"),
    ("management shares a lossy fabric",
     stack(fabric={"shared_with": ["management"]}, qos={"mode": "lossy", "pfc_priorities": []}),
     "FAB-ISOLATION", "fabric.shared_with", "error"),
    ("storage shares an InfiniBand fabric", stack(fabric={"transport": "infiniband", "shared_with": ["storage"]}),
     "FAB-ISOLATION", "fabric.shared_with", "error"),
    ("rack-tor leaf over its ports", stack(node_pools=pool(nodes=20), fabric={"design": "rack-tor", "leaves": 1, "spines": 0}),
     "FAB-RADIX", "fabric.leaf", "error"),
    ("spine too small for its leaves", stack(fabric={"spine": {"ports": 32, "port_gbps": 400}, "spines": 1}),
     "FAB-RADIX", "fabric.spine", "error"),
    ("no spines on a rail-optimized fabric", stack(fabric={"leaves": 8, "spines": 0, "leaf_uplinks": 0}),
     "FAB-CONNECTED", "fabric", "error"),
    ("dual plane with single-port NICs", stack(fabric={"planes": 2}),
     "FAB-CONNECTED", "fabric.planes", "error"),
    ("hop budget", stack(policy={"max_switch_hops": 1}), "FAB-CONNECTED", "policy.max_switch_hops", "error"),
    ("RoCE on a priority without PFC", stack(qos={"roce": {"dscp": 26, "priority": 5}}),
     "QOS-PFC-MAP", "qos.pfc_priorities", "error"),
    ("CNP on the RoCE priority", stack(qos={"cnp": {"dscp": 48, "priority": 3}}), "QOS-PFC-MAP", "qos.cnp.priority", "error"),
    ("PFC on the CNP priority", stack(qos={"pfc_priorities": [3, 6]}), "QOS-PFC-MAP", "qos.cnp.priority", "error"),
    ("one DSCP for two classes", stack(qos={"storage": {"dscp": 26, "priority": 1}}), "QOS-PFC-MAP", "qos.storage.dscp", "error"),
    ("lossy mode with PFC listed", stack(qos={"mode": "lossy"}), "QOS-PFC-MAP", "qos.pfc_priorities", "warning"),
    ("storage leaves short of uplinks", stack(node_pools=pool(nodes=64), storage={"leaves": 2, "leaf_uplinks": 4}),
     "NET-OVERSUB", "storage.leaf_uplinks", "error"),
    ("management at its default 3:1", stack(node_pools=pool(nodes=64), management={"leaf": {"ports": 48, "port_gbps": 25},
                                                                                   "leaves": 2, "leaf_uplinks": 2}),
     "NET-OVERSUB", "management.leaf_uplinks", "error"),
    ("standard MTU", stack(qos={"mtu": 1500}), "QOS-MTU", "qos.mtu", "warning"),
    ("host pool too small", stack(addressing={"hosts": "10.128.0.0/28"}), "ADDR-POOL", "addressing.hosts", "error"),
    ("azure pool over one placement group",
     cloud("azure", "Standard_ND96isr_H200_v5", nodes=150, region=AZURE),
     "CLOUD-PLACEMENT", "node_pools[0].nodes", "error"),
    ("fabric section on a cloud target", {**cloud("aws", "p5e.48xlarge"), "fabric": {"planes": 1}},
     "SPEC-IGNORED", "fabric", "warning"),
    ("address block on a cloud target",
     stack(target="aws", cloud=AWS, node_pools=[{"name": "gpu", "nodes": 4, "instance_type": "p5e.48xlarge",
                                                 "address_block": 3}]),
     "SPEC-IGNORED", "node_pools[0].address_block", "warning"),
]


@pytest.mark.parametrize(("case", "data", "rule", "path", "severity"), FAILING, ids=[c[0] for c in FAILING])
def test_rule_fires(case: str, data: dict[str, Any], rule: str, path: str, severity: str) -> None:
    result = run(data)
    assert isinstance(result, Valid), [f.message for f in result.findings]
    hits = [(f.rule, f.path, str(f.severity)) for f in result.findings]
    assert (rule, path, severity) in hits, hits
    finding = next(f for f in result.findings if (f.rule, f.path) == (rule, path))
    assert finding.message and finding.hint


PASSING = [
    ("base design", stack()),
    ("per-tier ratio allows 2:1 leaves", stack(fabric={"leaves": 8, "spines": 4, "leaf_uplinks": 8,
                                                       "max_oversubscription": {"leaf": 2.0}})),
    ("rack-tor in one leaf", stack(fabric={"design": "rack-tor"})),
    ("dual plane with dual-port NICs", stack(node_pools=pool(fabric_nics={"count": 8, "gbps": 200, "ports_per_nic": 2}),
                                             fabric={"planes": 2})),
    ("three tiers sized automatically", stack(node_pools=pool(nodes=512), fabric={"transport": "infiniband"})),
    ("p5e: 32 x 100G EFA for 8 GPUs", cloud("aws", "p5e.48xlarge")),
    ("p6-b200", cloud("aws", "p6-b200.48xlarge")),
    ("a3-ultragpu", cloud("gcp", "a3-ultragpu-8g", region=GCP)),
    ("azure ND H100 v5", cloud("azure", "Standard_ND96isr_H100_v5", region=AZURE)),
    ("DSCP 46 carried on priority 3", stack(qos={"roce": {"dscp": 46, "priority": 3}})),
    ("a pool without storage NICs", stack(node_pools=pool(storage_nics={"count": 0, "gbps": 200}))),
    ("lower policy minimum", stack(node_pools=pool(fabric_nics={"count": 8, "gbps": 200}),
                                   policy={"recommended_gbps_per_gpu": 200})),
]


@pytest.mark.parametrize(("case", "data"), PASSING, ids=[c[0] for c in PASSING])
def test_design_passes(case: str, data: dict[str, Any]) -> None:
    result = run(data)
    assert result.exit_code == 0, [(f.rule, f.path, f.message) for f in result.findings]
    assert not [f for f in result.findings if f.severity >= Severity.WARNING], result.findings


def test_three_tier_sizing_matches_the_b200_superpod() -> None:
    """DGX SuperPOD B200, 16 SU: 512 nodes, 128 leaves, 128 spines, 64 cores (FACTS.md 3.3)."""
    result = run(stack(node_pools=pool(nodes=512, gpu="B200"), fabric={"transport": "infiniband"}))
    assert isinstance(result, Valid)
    tiers = [data["tier"] for _, data in result.topology.switches("fabric")]
    assert (tiers.count("leaf"), tiers.count("spine"), tiers.count("core")) == (128, 128, 64)
    assert result.exit_code == 0


def test_two_tiers_hold_the_b200_8su() -> None:
    result = run(stack(node_pools=pool(nodes=256, gpu="B200"), fabric={"transport": "infiniband"}))
    assert isinstance(result, Valid)
    tiers = [data["tier"] for _, data in result.topology.switches("fabric")]
    assert (tiers.count("leaf"), tiers.count("spine"), tiers.count("core")) == (64, 32, 0)


def test_worst_switch_is_named() -> None:
    result = run(stack(fabric={"leaves": 8, "spines": 4, "leaf_uplinks": 8}))
    finding = next(f for f in result.findings if f.rule == "FAB-OVERSUB")
    assert "2.00:1 at leaf-001-r" in finding.message and "expected <= 1:1" in finding.message


def test_a_leaf_whose_downlinks_overflow_it_has_room_for_no_uplink() -> None:
    result = run(stack(node_pools=[{"name": "h200", "nodes": 40, "gpu": "H200"}],
                       fabric={"leaf": {"ports": 32, "port_gbps": 400}, "spine": {"ports": 64, "port_gbps": 400},
                               "leaves": 8, "spines": 2, "leaf_uplinks": 4}))
    finding = next(f for f in result.findings if f.rule == "FAB-OVERSUB")
    assert "uplinks and has room for 0: put fewer nodes per leaf" in finding.hint, finding.hint  # never a negative room


def test_suppressed_findings_stay_as_info() -> None:
    result = run(stack(fabric={"leaves": 8, "spines": 4, "leaf_uplinks": 8}, policy={"suppress": ["FAB-OVERSUB"]}))
    finding = next(f for f in result.findings if f.rule == "FAB-OVERSUB")
    assert finding.suppressed and finding.severity == Severity.INFO
    assert finding.to_dict()["suppressed"] is True
    assert result.exit_code == 0


def test_fail_on_warning() -> None:
    data = stack(node_pools=pool(fabric_nics={"count": 8, "gbps": 200}))
    assert run(data).exit_code == 0
    assert run({**data, "policy": {"fail_on": "warning"}}).exit_code == 1


def test_crashing_rule_becomes_an_error_finding() -> None:
    class Broken(Rule):
        """Always crashes."""

        id = "FAB-BROKEN"
        title = "broken"

        def check(self, spec, topology):  # type: ignore[no-untyped-def]
            raise ZeroDivisionError("boom")
            yield

    result = check(from_mapping("t", stack()), rules=[Broken()])
    assert result.exit_code == 1
    assert [(f.rule, str(f.severity)) for f in result.findings] == [("FAB-BROKEN", "error")]
    assert "ZeroDivisionError" in result.findings[0].message


def test_every_rule_has_an_id_title_and_docstring() -> None:
    from cluster.rules import ALL_RULES, RULE_IDS

    ids = [rule.id for rule in ALL_RULES]
    assert len(ids) == len(set(ids))
    for rule in ALL_RULES:
        assert rule.id in RULE_IDS and rule.title and (type(rule).__doc__ or "").strip()
    for public in ("FAB-OVERSUB", "FAB-GPU-NIC", "FAB-RAIL", "FAB-ISOLATION", "FAB-RADIX", "FAB-CONNECTED", "QOS-PFC-MAP"):
        assert public in ids


def test_three_tier_pods_with_a_partial_last_pod_stay_non_blocking() -> None:
    """9 leaf groups in 5 pods (of 2, the last of 1): the fullest pod decides the spine uplinks."""
    small = {"ports": 32, "port_gbps": 400}
    result = run(stack(node_pools=pool(nodes=144), fabric={"leaf": small, "spine": small, "core": small, "pods": 5}))
    assert isinstance(result, Valid) and result.topology.fabric_plan is not None
    plan = result.topology.fabric_plan
    assert (plan.groups, plan.pods, plan.tiers) == (9, 5, 3)
    assert result.exit_code == 0, [(f.rule, f.message) for f in result.findings]


def test_spine_count_uses_data_ports_only() -> None:
    """Fixed uplink ports of a spine model never take leaf downlinks (out-of-band of ~1,200 devices)."""
    from cluster.sizing import size_network

    result = run(stack())
    assert isinstance(result, Valid) and result.spec.oob is not None
    oob = result.spec.oob  # OOB-48x1 leaves (4 x 10G uplinks) under MGMT-48x25 spines (48 data + 8 uplink ports)
    plan = size_network(oob, devices=1200, ports_per_device=1, device_gbps=1)
    assert plan.leaves * plan.leaf_uplinks <= plan.spines * oob.spine.ports
    assert plan.leaves * plan.leaf_uplinks > plan.spines * oob.spine.ports - oob.spine.ports  # and no spine too many


def test_gb200_pools_take_the_trays_gpu_count() -> None:
    """GB200 comes 4 GPUs to a compute tray: without `server` or `gpus_per_node` the GPU catalog decides."""
    result = run(stack(node_pools=[{"name": "nvl", "nodes": 72, "gpu": "GB200"}]))
    assert isinstance(result, Valid)
    pool = result.spec.pools[0]
    assert (pool.gpus_per_node, pool.nvlink_domain, pool.fabric_nics.count) == (4, 72, 4)
    assert result.exit_code == 0, [(f.rule, f.message) for f in result.findings]


def test_qos_pfc_map_holds_the_host_and_switch_intents_to_each_other() -> None:
    """The intent branch can fire: an intent whose sides disagree (a derivation bug) is a finding."""
    from dataclasses import replace

    from cluster.intent.qos import qos_intent
    from cluster.pipeline import Valid, validate
    from cluster.rules.base import Derived
    from cluster.rules.qos import PfcMap

    result = validate("prod")
    assert isinstance(result, Valid) and result.spec.qos is not None
    intent = qos_intent(result.spec.qos)
    broken = replace(intent, switch=replace(intent.switch, lossless=(3, 4)), host=replace(intent.host, mtu=9500))
    derived = Derived(address_check=lambda: None, qos_intent=lambda: broken, storage_intent=lambda: None)  # type: ignore[arg-type,return-value]
    messages = [f.message for f in PfcMap().check_derived(result.spec, result.topology, derived)]
    assert "host and switch intents disagree: PFC on host [3], switch [3, 4]" in messages
    assert "host MTU 9500 is above the switches' 9216" in messages
    clean = Derived(address_check=lambda: None, qos_intent=lambda: intent, storage_intent=lambda: None)  # type: ignore[arg-type,return-value]
    assert list(PfcMap().check_derived(result.spec, result.topology, clean)) == []


def test_the_fabric_is_sized_once_per_validation(monkeypatch: pytest.MonkeyPatch) -> None:
    """The limits and the builder share one plan: sizing a three-tier fabric is a search."""
    from cluster import limits, sizing, topology
    from cluster.pipeline import validate

    calls: list[str] = []
    real = sizing.size_fabric

    def counted(spec: object) -> object:
        calls.append("sized")
        return real(spec)  # type: ignore[arg-type]

    for module in (limits, topology):
        monkeypatch.setattr(module, "size_fabric", counted)
    assert validate("pods").exit_code == 0
    assert calls == ["sized"]
