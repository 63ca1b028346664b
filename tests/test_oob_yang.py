"""The SONiC tables of the oob network (VLAN, VLAN_MEMBER, PORTCHANNEL, PORTCHANNEL_MEMBER, STP,
STP_VLAN, STP_PORT) loaded by SONiC's own `sonic_yang` against SONiC's YANG models
(`../shared/vendor/sonic`, unmodified upstream copies), for one and for two oob spines.

Upstream's loader asks libyang 3 to read every JSON value as text (`json_string_datatypes`);
PyPI's libyang 2 lacks that flag, so here the translated tree is handed over with integer and
boolean texts as JSON numbers and booleans (every such value in the oob tables is typed so; the
QoS maps, whose DSCP and TC values are YANG strings, are left to the full config_db check). PORT
entries are reduced to what the leafrefs need; the port tables themselves are checked elsewhere.
"""

from __future__ import annotations

import json
import re
import sys
from typing import Any

import pytest

from cluster.configs import render_configs
from cluster.pipeline import Valid, validate_mapping
from tests.conftest import ROOT, missing_tool
from tests.test_oob import _oob_designs

VENDOR = ROOT.parent / "shared" / "vendor" / "sonic" / "src"
TABLES = ("VLAN", "VLAN_MEMBER", "PORTCHANNEL", "PORTCHANNEL_MEMBER", "STP", "STP_VLAN", "STP_PORT")


def _typed(value: Any) -> Any:
    if isinstance(value, dict):
        return {key: _typed(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_typed(item) for item in value]
    if isinstance(value, str) and re.fullmatch(r"-?\d+", value):
        return int(value)
    if value in ("true", "false"):
        return value == "true"
    return value


@pytest.fixture(scope="module")
def loader() -> Any:
    if not (VENDOR / "sonic-yang-mgmt" / "sonic_yang.py").exists():
        missing_tool(f"SONiC's YANG models and loader are not at {VENDOR}")
    try:
        import libyang
    except ImportError:
        missing_tool("libyang (PyPI, built against Debian's libyang2-dev) is not installed")
    original = libyang.Context.parse_data_mem

    def parse_data_mem(self: Any, data: str, fmt: str, **options: Any) -> Any:
        options.pop("json_string_datatypes", None)
        return original(self, json.dumps(_typed(json.loads(data))), fmt, **options)

    sys.path.insert(0, str(VENDOR / "sonic-yang-mgmt"))
    try:
        import sonic_yang  # type: ignore[import-not-found]
    finally:
        sys.path.pop(0)
    libyang.Context.parse_data_mem = parse_data_mem
    try:
        model = sonic_yang.SonicYang(str(VENDOR / "sonic-yang-models" / "yang-models"), print_log_enabled=False)
        model.loadYangModel()
        yield model
    finally:
        libyang.Context.parse_data_mem = original


def _subset(db: dict[str, Any]) -> dict[str, Any]:
    tables = {table: db[table] for table in TABLES if table in db}
    tables["PORT"] = {name: {"lanes": ",".join(str(index * 8 + lane) for lane in range(8)), "admin_status": "up",
                             "mtu": entry["mtu"], "speed": entry["speed"]}
                      for index, (name, entry) in enumerate(db["PORT"].items())}
    return tables


def _load(loader: Any, tables: dict[str, Any]) -> None:
    loader.loadData(tables)
    loader.validate_data_tree()


def _sonic_dbs() -> dict[str, dict[str, Any]]:
    dbs = {}
    for name, data in _oob_designs():
        if not name.endswith("sonic"):
            continue
        result = validate_mapping("t", data)
        assert isinstance(result, Valid)
        for path, text in render_configs(result.spec, result.topology).items():
            if path.endswith("config_db.json") and "/oob-" in path:
                dbs[f"{name}:{path}"] = json.loads(text)
    return dbs


def test_the_oob_tables_load_in_sonic_yang(loader: Any) -> None:
    dbs = _sonic_dbs()
    assert any("oob-spine-002" in name for name in dbs)
    for name, db in sorted(dbs.items()):
        try:
            _load(loader, _subset(db))
        except Exception as error:  # sonic_yang raises its own exception type
            pytest.fail(f"{name}: {error}")


def test_the_harness_rejects_a_broken_table(loader: Any) -> None:
    db = next(db for name, db in sorted(_sonic_dbs().items()) if "oob-leaf-001" in name)
    broken = _subset(db)
    broken["VLAN"]["Vlan100"]["vlanid"] = "101"  # must match the name (sonic-vlan.yang)
    with pytest.raises(Exception, match="Data Loading Failed"):
        _load(loader, broken)
    member = next(iter(broken["PORTCHANNEL_MEMBER"]))
    fresh = _subset(db)
    fresh["PORTCHANNEL_MEMBER"][member.replace("PortChannel1", "PortChannel9")] = {}  # no such port-channel
    with pytest.raises(Exception, match="Data Loading Failed"):
        _load(loader, fresh)
