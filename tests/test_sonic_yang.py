"""SONiC config_db.json against SONiC's own YANG models (tests/sonic_yang_check.py).

First the harness itself: upstream's known-good sample must load, and configs broken the way
a real mistake breaks them must fail with libyang's (or sonic_yang's) own message.
"""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest

from tests import sonic_yang_check as yang
from tests.conftest import missing_tool


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
