"""SONiC config_db.json against SONiC's own YANG models (tests/sonic_yang_check.py).

First the harness itself: upstream's known-good sample must load, and configs broken the way
a real mistake breaks them must fail with libyang's (or sonic_yang's) own message.
"""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
import yaml

from cluster.artifacts import render_tree
from cluster.dialects.sonic.skus import sonic_sku
from cluster.pipeline import Result, Valid, validate
from tests import sonic_yang_check as yang
from tests.conftest import ROOT, missing_tool, run, stack


@pytest.fixture(scope="module")
def sample() -> dict[str, Any]:
    reason = yang.unavailable()
    if reason:
        missing_tool(reason)
    data: dict[str, Any] = json.loads(yang.SAMPLE.read_text())["SAMPLE_CONFIG_DB_JSON"]
    return data


def broken(sample: dict[str, Any], table: str, key: str, field: str, value: Any = None) -> dict[str, Any]:
    """`sample` with one field of one entry removed (value None) or set."""
    config = copy.deepcopy(sample)
    if value is None:
        del config[table][key][field]
    else:
        config[table][key][field] = value
    return config


def test_upstream_sample_config_validates(sample: dict[str, Any]) -> None:
    assert len(sample) > 90  # the whole sample (every table SONiC ships a model for), not a subset
    assert yang.errors(sample) == ""


def test_a_port_without_lanes_fails(sample: dict[str, Any]) -> None:
    message = yang.errors(broken(sample, "PORT", "Ethernet0", "lanes"))
    assert 'Mandatory node "lanes" instance does not exist' in message


def test_an_unknown_device_metadata_key_fails(sample: dict[str, Any]) -> None:
    message = yang.errors(broken(sample, "DEVICE_METADATA", "localhost", "platform_model", "SN5600"))
    assert "All Keys are not parsed in DEVICE_METADATA" in message and "platform_model" in message


def test_a_value_of_the_wrong_type_fails(sample: dict[str, Any]) -> None:
    message = yang.errors(broken(sample, "DEVICE_METADATA", "localhost", "mac", "00:11:22:33:dd"))
    assert "00:11:22:33:dd" in message and "failed to parse data tree" in message


def test_a_dangling_leafref_fails(sample: dict[str, Any]) -> None:
    config = copy.deepcopy(sample)
    config["INTERFACE"]["Ethernet999|10.0.0.1/31"] = {}
    message = yang.errors(config)
    assert 'Invalid leafref value "Ethernet999"' in message


def test_a_bad_enumeration_value_fails(sample: dict[str, Any]) -> None:
    message = yang.errors(broken(sample, "DEVICE_METADATA", "localhost", "docker_routing_config_mode", "splt"))
    assert "splt" in message


def test_a_table_without_a_model_fails(sample: dict[str, Any]) -> None:
    config = copy.deepcopy(sample)
    config["BUFFER_PGS"] = {"Ethernet0|3": {"profile": "x"}}
    assert yang.errors(config) == "tables with no YANG model: BUFFER_PGS"


# --- every rendered config_db.json ---------------------------------------------------------

STACKS = sorted(path.stem.removeprefix("Pulumi.") for path in (ROOT / "stacks").glob("Pulumi.*.yaml"))
THREE_TIER_SONIC = {
    "name": "tiers",
    "target": "onprem",
    "node_pools": [{"name": "h200", "nodes": 128, "gpu": "H200", "fabric_nics": {"count": 8, "gbps": 400},
                    "storage_nics": {"count": 2, "gbps": 200}}],
    "fabric": {"leaf": {"switch": "SN5600", "ports": 32, "port_gbps": 400, "os": "sonic"},
               "spine": {"switch": "SN5600", "ports": 32, "port_gbps": 400, "os": "sonic"},
               "core": {"switch": "SN5600", "ports": 32, "port_gbps": 400, "os": "sonic"}},
    "storage": {"leaf": {"switch": "SN5600", "port_gbps": 200, "os": "sonic"}},
}


def sonic_configs(result: Result) -> dict[str, dict[str, Any]]:
    assert isinstance(result, Valid), [str(f) for f in result.findings]
    files = render_tree(result.spec, result.topology)
    return {path: json.loads(text) for path, text in files.items() if path.endswith("config_db.json")}


def assert_all_validate(configs: dict[str, dict[str, Any]]) -> None:
    failures = {path: message for path, config in sorted(configs.items()) if (message := yang.errors(config))}
    assert not failures, f"{len(failures)} of {len(configs)} configs fail YANG, first: {next(iter(failures.items()))}"


@pytest.mark.parametrize("name", STACKS)
def test_every_config_db_of_every_example_validates(sample: dict[str, Any], name: str) -> None:
    result = validate(name)
    assert isinstance(result, Valid), [str(f) for f in result.findings]
    if result.spec.target != "onprem":
        pytest.skip(f"{name} is a cloud stack: no switch configs")
    assert_all_validate(sonic_configs(result))


def test_the_examples_render_sonic(sample: dict[str, Any]) -> None:
    """The parametrized test above is not vacuous: dev renders its fabric on SONiC."""
    configs = sonic_configs(validate("dev"))
    assert {path.split("/")[1] for path in configs} >= {"leaf-001-r0", "leaf-001-r7", "spine-001"}


@pytest.mark.slow
def test_every_config_db_of_a_three_tier_sonic_design_validates(sample: dict[str, Any]) -> None:
    result = run(THREE_TIER_SONIC)
    assert result.ok, [str(f) for f in result.findings if str(f.severity) == "error"]
    configs = sonic_configs(result)
    tiers = {config["DEVICE_METADATA"]["localhost"]["type"] for config in configs.values()}
    assert tiers >= {"ToRRouter", "LeafRouter", "SpineRouter"}  # leaves, spines and cores all on SONiC
    assert_all_validate(configs)


@pytest.mark.parametrize(("leaf", "spine", "storage"), [
    (("SN5400", 400), ("SN5400", 400), ("SN4700", 200)),
    (("SN4700", 400), ("SN4700", 400), ("SN4700", 100)),
])
def test_every_config_db_of_an_sn5400_or_sn4700_design_validates(sample: dict[str, Any], leaf: tuple[str, int],
                                                                  spine: tuple[str, int],
                                                                  storage: tuple[str, int]) -> None:
    """Every SKU of the SN5400 and SN4700 in the catalog, the fabric's (lossless) and a storage
    network's (lossy buffers on every port)."""
    def ref(model: tuple[str, int]) -> dict[str, Any]:
        return {"switch": model[0], "port_gbps": model[1], "os": "sonic"}

    result = run(stack(fabric={"leaf": ref(leaf), "spine": ref(spine)}, storage={"leaf": ref(storage)},
                       node_pools=[{"name": "h200", "nodes": 16, "gpu": "H200",
                                    "storage_nics": {"count": 2, "gbps": storage[1]}}]))
    assert result.ok, [str(f) for f in result.findings if str(f.severity) == "error"]
    configs = sonic_configs(result)
    assert {config["DEVICE_METADATA"]["localhost"]["hwsku"] for config in configs.values()} == {
        sku.hwsku for model, gbps in (leaf, spine, storage) if (sku := sonic_sku(model, gbps))}
    assert_all_validate(configs)


def on_sonic(stack_name: str) -> dict[str, Any]:
    """An example stack with every SN5600 tier (fabric and storage) switched to SONiC."""
    data: dict[str, Any] = yaml.safe_load((ROOT / "stacks" / f"Pulumi.{stack_name}.yaml").read_text())
    design = data["config"]["gpu-cluster:cluster"]
    design.setdefault("storage", {"leaf": {"switch": "SN5600"}, "spine": {"switch": "SN5600"}})  # the defaults
    for section in ("fabric", "storage"):
        for tier, ref in (design.get(section) or {}).items():
            if isinstance(ref, dict) and ref.get("switch") == "SN5600":
                design[section][tier] = {**ref, "os": "sonic"}
    return dict(design)


@pytest.mark.parametrize("name", ["prod", "superpod", "legacy"])
def test_every_config_db_of_an_example_rendered_for_sonic_validates(sample: dict[str, Any], name: str) -> None:
    result = run(on_sonic(name))
    configs = sonic_configs(result)
    assert configs
    assert_all_validate(configs)


def test_a_rendered_config_with_a_port_lane_removed_fails(sample: dict[str, Any]) -> None:
    configs = sonic_configs(validate("dev"))
    config = configs["switches/leaf-001-r0/config_db.json"]
    assert yang.errors(config) == ""
    first = sorted(config["PORT"])[0]
    del config["PORT"][first]["lanes"]
    assert 'Mandatory node "lanes" instance does not exist' in yang.errors(config)


# --- the management plane's tables ---------------------------------------------------------

MANAGEMENT_TABLES = ("MGMT_VRF_CONFIG", "MGMT_INTERFACE", "NTP", "NTP_SERVER", "SYSLOG_SERVER", "DNS_NAMESERVER",
                     "TACPLUS", "TACPLUS_SERVER", "AAA", "SNMP", "SNMP_COMMUNITY", "SNMP_AGENT_ADDRESS_CONFIG",
                     "BANNER_MESSAGE", "GNMI", "VLAN_INTERFACE", "STATIC_ROUTE", "TELEMETRY_CLIENT")


def _managed() -> dict[str, dict[str, Any]]:
    """Every config_db.json of a SONiC fabric and oob with every management service set, streaming
    telemetry too (gNMI dial-out to two collectors)."""
    from tests.test_management_plane import _designs

    data = copy.deepcopy(dict(_designs())["prod-fabric-sonic"])
    data["management_plane"]["telemetry"] = {"gnmi_dialout": ["172.16.0.70:57000", "172.16.0.71:57000"],
                                             "otlp": ["172.16.0.73:4317"]}
    return sonic_configs(run(data))


def test_every_management_table_is_written_and_validates(sample: dict[str, Any]) -> None:
    configs = _managed()
    written = {table for config in configs.values() for table in config}
    assert written >= set(MANAGEMENT_TABLES)
    assert_all_validate(configs)


@pytest.mark.parametrize(("table", "change", "words"), [
    ("MGMT_VRF_CONFIG", None, "Try enable Management VRF"),  # services in `mgmt` need the VRF
    ("MGMT_INTERFACE", "gwaddr", "Must condition"),  # an IPv6 gateway for an IPv4 address
    ("TACPLUS", "passkey", "tacacs+"),  # tacacs+ logins need the key
    ("TELEMETRY_CLIENT", "dst_group", "Must condition"),  # a subscription to a group that is not there
    ("TELEMETRY_CLIENT", "dst_addr", "pattern"),  # a collector without its port
])
def test_a_broken_management_table_fails(sample: dict[str, Any], table: str, change: str | None, words: str) -> None:
    config = copy.deepcopy(next(config for path, config in sorted(_managed().items()) if "/leaf-" in path))
    assert yang.errors(config) == ""
    if change is None:
        del config[table]
    elif change == "gwaddr":
        key = next(iter(config[table]))
        config[table][key]["gwaddr"] = "fc00::1"
    elif change == "dst_group":
        config[table]["Subscription|GPU_FABRIC_COUNTERS"]["dst_group"] = "ELSEWHERE"
    elif change == "dst_addr":
        config[table]["DestinationGroup|COLLECTORS"]["dst_addr"] = "172.16.0.70"
    else:
        del config[table]["global"][change]
    assert words in yang.errors(config)
