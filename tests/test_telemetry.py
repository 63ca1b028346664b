"""Streaming telemetry (`management_plane.telemetry`), read back from the rendered files: SONiC's
gNMI dial-out in config_db (TELEMETRY_CLIENT, validated by SONiC's YANG in tests/test_sonic_yang.py),
EOS' gRPC tunnels under `management api gnmi`, Cumulus Linux's OTLP export; a switch that pushes
nothing (InfiniBand, a Spectrum-1 box) is told of; a bad collector is a SCHEMA error at its path."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from cluster.artifacts import render_tree
from cluster.pipeline import Valid, validate_mapping
from tests.conftest import ROOT
from tests.test_bad_input import GOOD, verdict, write

TELEMETRY = {"interval_s": 15, "gnmi_dialout": ["172.16.0.70:57000", "172.16.0.71:57000"],
             "grpc_tunnel": ["172.16.0.72:57400"], "otlp": ["172.16.0.73:4317"]}


def _golden(name: str) -> dict[str, Any]:
    data: dict[str, Any] = yaml.safe_load((ROOT / "tests/golden/stacks" / f"{name}.yaml").read_text())["config"][
        "gpu-cluster:cluster"]
    return data


def _render(data: dict[str, Any], telemetry: dict[str, Any]) -> tuple[Valid, dict[str, str]]:
    data = copy.deepcopy(data)
    data["management_plane"] = {**data.get("management_plane", {}), "telemetry": telemetry}
    result = validate_mapping("t", data)
    assert isinstance(result, Valid) and result.ok, [str(f) for f in result.findings]
    return result, render_tree(result.spec, result.topology)


def _switch_files(files: dict[str, str], suffix: str) -> dict[str, str]:
    return {path: text for path, text in files.items() if path.startswith("switches/") and path.endswith(suffix)}


def test_sonic_dials_out_the_fabric_counters_from_its_management_address() -> None:
    result, files = _render(_golden("sonic"), TELEMETRY)
    configs = _switch_files(files, "config_db.json")
    assert configs
    for path, text in configs.items():
        db = json.loads(text)
        client = db["TELEMETRY_CLIENT"]
        [address] = [key.split("|")[1].split("/")[0] for key in db["MGMT_INTERFACE"]]
        assert client["Global"] == {"encoding": "JSON_IETF", "retry_interval": "30", "src_ip": address,
                                    "unidirectional": "true"}, path
        assert client["DestinationGroup|COLLECTORS"] == {"dst_addr": "172.16.0.70:57000,172.16.0.71:57000"}
        subscription = client["Subscription|GPU_FABRIC_COUNTERS"]
        assert subscription["dst_group"] == "COLLECTORS" and subscription["path_target"] == "COUNTERS_DB"
        assert subscription["paths"].split(",") == ["COUNTERS/Ethernet*", "COUNTERS/Ethernet*/Queues",
                                                    "COUNTERS_PORT_NAME_MAP"]
        assert (subscription["report_type"], subscription["report_interval"]) == ("periodic", "15000")
    # the oob leaf of this design runs NVUE: it exports OTLP, and no collector list goes unused but grpc_tunnel
    ignored = {f.path for f in result.findings if f.rule == "SPEC-IGNORED"}
    assert "management_plane.telemetry.grpc_tunnel" in ignored
    assert "management_plane.telemetry.gnmi_dialout" not in ignored


def test_eos_opens_a_grpc_tunnel_to_each_collector_from_the_management_vrf() -> None:
    """AVD eos_cli_config_gen management-api-gnmi.j2: `transport grpc-tunnel <name>`, `no shutdown`,
    `vrf`, `destination <ip> port <port>`, `target <id>`; the dial-in transport stays."""
    telemetry = {"grpc_tunnel": ["172.16.0.72:57400", "172.16.0.74:57400"]}
    result, files = _render(_golden("eos"), telemetry)
    configs = _switch_files(files, "eos.cfg")
    assert configs
    for path, text in configs.items():
        name = path.split("/")[1]
        block = text[text.index("management api gnmi\n"):]
        block = block[:block.index("\n!\n")].splitlines()
        vrf = ["      vrf MGMT"] if "\nvrf instance MGMT\n" in text else []
        expected = ["management api gnmi", f"   transport grpc {'MGMT' if vrf else 'default'}", *vrf]
        for number, address in ((1, "172.16.0.72"), (2, "172.16.0.74")):
            expected += ["   !", f"   transport grpc-tunnel COLLECTOR-{number}", "      no shutdown", *vrf,
                         f"      destination {address} port 57400", f"      target {name}"]
        assert block == expected, path
    assert not [f for f in result.findings if f.path.startswith("management_plane.telemetry")]


def test_eos_without_the_management_api_still_opens_its_tunnels() -> None:
    data = copy.deepcopy(_golden("eos"))
    data["management_plane"] = {"api": False}
    _, files = _render(data, {"grpc_tunnel": ["172.16.0.72:57400"]})
    for text in _switch_files(files, "eos.cfg").values():
        assert "management api http-commands" not in text and "transport grpc " not in text
        assert "management api gnmi\n   transport grpc-tunnel COLLECTOR-1\n      no shutdown\n" in text


def test_nvue_exports_otlp_in_the_cumulus_5_14_forms_and_leaves_gnmi_off() -> None:
    """Cumulus Linux 5.14, Open Telemetry Export: `export otlp state enabled`, `export otlp grpc
    destination <ip> port <port>`, `insecure enabled` without a certificate, interface and buffer
    statistics with their sample interval, the per-priority counters; gNMI streaming not beside it."""
    result, files = _render(_golden("nvue"), {"interval_s": 30, "otlp": ["172.16.0.73:4317", "172.16.0.75:4317"]})
    scripts = _switch_files(files, "nvue.sh")
    assert scripts
    for path, text in scripts.items():
        lines = text.splitlines()
        vrf = "mgmt" if "nv set interface eth0 ip vrf mgmt" in lines else "default"
        for line in (f"nv set system telemetry export vrf {vrf}",
                     "nv set system telemetry export otlp grpc destination 172.16.0.73 port 4317",
                     "nv set system telemetry export otlp grpc destination 172.16.0.75 port 4317",
                     "nv set system telemetry export otlp grpc insecure enabled",
                     "nv set system telemetry export otlp state enabled",
                     "nv set system telemetry interface-stats export state enabled",
                     "nv set system telemetry interface-stats sample-interval 30",
                     "nv set system telemetry buffer-stats export state enabled",
                     "nv set system telemetry buffer-stats sample-interval 30"):
            assert line in lines, (path, line)
        assert not any(line.startswith("nv set system gnmi-server") for line in lines), path
        assert lines.index("nv set system telemetry export otlp state enabled") < lines.index("nv config apply -y")
    # the GPU fabric's leaves count PFC pauses on the lossless RoCE priority 3 and its traffic class 3
    leaf = scripts["switches/leaf-001-r0/nvue.sh"].splitlines()
    assert "nv set system telemetry interface-stats switch-priority 3" in leaf
    assert "nv set system telemetry interface-stats egress-buffer traffic-class 3" in leaf
    [api] = [f for f in result.findings if f.path == "management_plane.api"]
    assert api.rule == "SPEC-IGNORED" and "no gNMI server" in api.message


def test_a_spectrum_1_oob_leaf_exports_nothing_and_is_told() -> None:
    data = copy.deepcopy(_golden("nvue"))
    data["oob"] = {"leaf": {"switch": "SN2201"}}
    result, files = _render(data, {"otlp": ["172.16.0.73:4317"]})
    assert "telemetry" not in files["switches/oob-leaf-001/nvue.sh"]
    assert "nv set system gnmi-server" not in files["switches/oob-leaf-001/nvue.sh"]
    assert "nv set system telemetry export otlp state enabled" in files["switches/leaf-001-r0/nvue.sh"]
    [ignored] = [f for f in result.findings if f.path == "management_plane.telemetry"]
    assert ignored.rule == "SPEC-IGNORED" and "oob.leaf (Cumulus Linux NVUE, SN2201)" in ignored.message


def test_an_infiniband_fabric_pushes_nothing_and_is_told() -> None:
    result, files = _render(_golden("infiniband"), {"gnmi_dialout": ["172.16.0.70:57000"]})
    [ignored] = [f for f in result.findings if f.path == "management_plane.telemetry"]
    assert ignored.rule == "SPEC-IGNORED" and str(ignored.severity) == "warning"
    assert "fabric.leaf (InfiniBand" in ignored.message and "push no streaming telemetry" in ignored.message
    # the SONiC storage leaf still dials out
    assert "TELEMETRY_CLIENT" in json.loads(files["switches/stor-leaf-001/config_db.json"])
    assert not any("172.16.0.70" in text for path, text in files.items() if path.startswith("fabric/"))


def test_a_tier_whose_protocol_has_no_collector_is_told() -> None:
    result, _ = _render(_golden("eos"), {"otlp": ["172.16.0.73:4317"]})
    paths = {f.path: f.message for f in result.findings if f.rule == "SPEC-IGNORED"}
    assert "fabric.leaf (Arista EOS)" in paths["management_plane.telemetry.grpc_tunnel"]
    assert "no switch of the design pushes otlp" in paths["management_plane.telemetry.otlp"]


def test_without_telemetry_nothing_is_rendered() -> None:
    for name, marker in (("sonic", "TELEMETRY_CLIENT"), ("eos", "grpc-tunnel"), ("nvue", "nv set system telemetry")):
        data = _golden(name)
        del data["management_plane"]["telemetry"]  # the golden stacks set it
        result = validate_mapping("t", data)
        assert isinstance(result, Valid)
        assert not any(marker in text for text in render_tree(result.spec, result.topology).values()), name


BAD = [
    ("port above 65535", {"otlp": ["172.16.0.73:70000"]}, "management_plane.telemetry.otlp[0]"),
    ("not an address", {"otlp": ["172.16.0.300:4317"]}, "management_plane.telemetry.otlp[0]"),
    ("no port", {"grpc_tunnel": ["172.16.0.72"]}, "management_plane.telemetry.grpc_tunnel[0]"),
    ("a switch's management address", {"otlp": ["172.16.128.9:4317"]}, "management_plane.telemetry.otlp[0]"),
    ("in the loopback pool", {"gnmi_dialout": ["10.0.0.9:57000"]}, "management_plane.telemetry.gnmi_dialout[0]"),
    ("no collector", {"interval_s": 10}, "management_plane.telemetry"),
    ("a collector twice", {"otlp": ["172.16.0.73:4317", "172.16.0.73:4317"]}, "management_plane.telemetry"),
    ("interval of zero", {"interval_s": 0, "otlp": ["172.16.0.73:4317"]}, "management_plane.telemetry.interval_s"),
]


@pytest.mark.parametrize(("case", "telemetry", "path"), BAD, ids=[case for case, _, _ in BAD])
def test_a_bad_collector_is_a_schema_error_at_its_path(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                       case: str, telemetry: dict[str, Any], path: str) -> None:
    code, findings = verdict(write(tmp_path, {**GOOD, "management_plane": {"telemetry": telemetry}}), capsys)
    assert code == 2
    schema = [f for f in findings if f["rule"] == "SCHEMA"]
    assert path in {f["path"] for f in schema}, schema
    for finding in schema:
        assert finding["severity"] == "error" and finding["hint"] and finding["message"]


def test_only_the_switches_built_are_counted_and_the_report_says_what_is_pushed() -> None:
    """The default design's tiers that hold no switch (an unbuilt storage spine, a core) are not
    reported as pushing nothing; the summary names the collectors, in text and JSON."""
    from cluster.report import to_json, to_text

    result = validate_mapping("t", {**GOOD, "management_plane": {"telemetry": {"otlp": ["172.16.0.9:4317"]}}})
    assert isinstance(result, Valid) and result.ok
    assert {switch["os"] for _, switch in result.topology.switches()} == {"nvue"}
    assert not [f for f in result.findings if f.path.startswith("management_plane.telemetry")]
    assert "      telemetry pushed every 10 s to otlp 172.16.0.9:4317\n" in to_text(result)
    assert json.loads(to_json(result))["summary"]["management_plane"]["telemetry"] == {
        "interval_s": 10, "gnmi_dialout": [], "grpc_tunnel": [], "otlp": ["172.16.0.9:4317"]}
