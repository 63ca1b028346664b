"""SONiC platform data and boot behaviour against SONiC's own files in ../shared/vendor/sonic:
the catalog's port maps against each SKU's port_config.ini and the platform's platform.json,
rendered PORT entries against the same files, and the routing config mode against the
docker-fpm-frr start script that decides which FRR config files survive. The vendor copy holds
the SN5600's SKUs only; every catalog SKU (SN4700 and SN5400 too) gets the checks that need no
SONiC file: names, lanes within their cages, lanes per port, the FEC text's lane rate, buffer facts."""

from __future__ import annotations

import json
import os
import re
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from cluster.artifacts import render_tree
from cluster.breakout import breakout
from cluster.catalog import load_catalog
from cluster.dialects.sonic.render import ROUTING_MODE, base_mac
from cluster.dialects.sonic.skus import sonic_platforms, sonic_sku
from cluster.pipeline import Valid, validate
from tests.conftest import missing_tool, run, stack
from tests.test_render_tools import _dryrun as dryrun

VENDOR = Path(__file__).resolve().parent.parent.parent / "shared" / "vendor" / "sonic"
PLATFORM_DIRS = {"SN5600": VENDOR / "device" / "mellanox" / "x86_64-nvidia_sn5600-r0"}
DOCKER_INIT = VENDOR / "dockers" / "docker-fpm-frr" / "docker_init.sh"


def vendor(path: Path) -> Path:
    if not path.exists():
        missing_tool(f"SONiC vendor file {path} not found")
    return path


def linked(path: Path) -> tuple[str | None, str]:
    """(link target or None, text) of a vendor file. Upstream's SKU folders link some templates to
    other folders, and the vendor copy holds those targets too (its PROVENANCE.md): a link is read
    with os.readlink, or, where the copy was laid without symlinks, from the one line holding its
    target; the text is always the target's."""
    path = vendor(path)
    if path.is_symlink():
        target = os.readlink(path)
    else:
        text = path.read_text()
        line = text.strip()
        if "\n" in line or "/" not in line or not line.endswith(f"/{path.name}"):
            return None, text
        target = line
    return target, vendor(path.parent / target).read_text()


def port_config(path: Path) -> list[list[str]]:
    return [line.split() for line in vendor(path).read_text().splitlines() if line.strip() and not line.startswith("#")]


SKUS = [(model, gbps) for model, platform in sorted(sonic_platforms().items()) for gbps in platform.skus]
# The SKUs whose files the vendor copy holds: the SN5600's only (see its PROVENANCE.md).
VENDOR_SKUS = [("SN5600", gbps) for gbps in sonic_platforms()["SN5600"].skus]


@pytest.mark.parametrize(("model", "gbps"), VENDOR_SKUS)
def test_catalog_port_map_is_the_skus_port_config(model: str, gbps: int) -> None:
    platform = sonic_platforms()[model]
    sku = platform.skus[gbps]
    assert platform.platform == PLATFORM_DIRS[model].name
    assert sku.hwsku in sku.source and platform.platform in sku.source
    rows = port_config(PLATFORM_DIRS[model] / sku.hwsku / "port_config.ini")
    at_speed = [row[:4] for row in rows if int(row[4]) == gbps * 1000]
    assert [list(port) for port in sku.port_map] == at_speed
    left_out = [row for row in rows if int(row[4]) != gbps * 1000]
    assert [row[0] for row in left_out] == ["Ethernet512"]  # only the 1 x 25G (10G) port, not a cage
    assert load_catalog().switches[model].port_modes[gbps] == len(sku.port_map)


@pytest.mark.parametrize(("model", "gbps"), VENDOR_SKUS)
def test_catalog_ports_sit_on_the_platform_cages_lanes(model: str, gbps: int) -> None:
    """platform.json: each port's lanes lie within its cage's lanes, its alias is a name of the
    cage in a breakout mode, and the cage index is the port's index."""
    cages = json.loads(vendor(PLATFORM_DIRS[model] / "platform.json").read_text())["interfaces"]
    by_index = {cage["index"].split(",")[0]: cage for cage in cages.values()}
    for port in sonic_platforms()[model].skus[gbps].port_map:
        cage = by_index[port.front_panel]
        assert set(port.lanes.split(",")) <= set(cage["lanes"].split(",")), port
        aliases = {alias for names in cage["breakout_modes"].values() for alias in names}
        assert port.alias in aliases or port.alias[:-1] + "a" in aliases, port


def test_rendered_ports_are_the_skus_ports() -> None:
    result = validate("dev")
    assert isinstance(result, Valid)
    files = render_tree(result.spec, result.topology)
    rows = {row[0]: row for row in port_config(PLATFORM_DIRS["SN5600"] / "Mellanox-SN5600-O128" / "port_config.ini")}
    configs = [json.loads(text) for path, text in sorted(files.items()) if path.endswith("config_db.json")]
    assert len(configs) >= 9
    for config in configs:
        metadata = config["DEVICE_METADATA"]["localhost"]
        assert (metadata["hwsku"], metadata["platform"]) == ("Mellanox-SN5600-O128", "x86_64-nvidia_sn5600-r0")
        assert "platform_model" not in metadata
        for name, port in config["PORT"].items():
            assert [name, port["lanes"], port["alias"], port["index"]] == rows[name][:4]
            assert port["speed"] == rows[name][4] and port["fec"] == "rs"


def test_base_mac_is_deterministic_unicast_and_locally_administered() -> None:
    macs = {base_mac("prod", f"leaf-{index:03d}-r0") for index in range(1, 2001)}
    assert len(macs) == 2000  # distinct per name
    assert base_mac("prod", "leaf-001-r0") == base_mac("prod", "leaf-001-r0")
    for mac in macs:
        first = int(mac[:2], 16)
        assert re.fullmatch(r"([0-9a-f]{2}:){5}[0-9a-f]{2}", mac) and first & 0b10 and not first & 0b01


def test_two_clusters_on_one_site_share_no_chassis_mac() -> None:
    """Switch names repeat from cluster to cluster (every design has a leaf-001-r0): the base MAC,
    which SONiC uses as the LLDP chassis id and router MAC, differs with the cluster's name, and a
    cluster's own MACs stay what they were on every render."""
    def macs(name: str) -> dict[str, str]:
        result = run(stack(name=name, fabric={"leaf": {"switch": "SN5600", "ports": 32, "port_gbps": 400, "os": "sonic"},
                                              "spine": {"switch": "SN5600", "ports": 32, "port_gbps": 400, "os": "sonic"}}))
        assert isinstance(result, Valid), [str(f) for f in result.findings]
        return {path: json.loads(text)["DEVICE_METADATA"]["localhost"]["mac"]
                for path, text in render_tree(result.spec, result.topology).items() if path.endswith("config_db.json")}

    first, second = macs("hall-a"), macs("hall-b")
    assert first.keys() == second.keys() and len(first) >= 3
    assert not set(first.values()) & set(second.values())
    assert macs("hall-a") == first


# --- no SKU data: a SCHEMA error, not made-up lanes ------------------------------------------

@pytest.mark.parametrize(("fabric", "path", "instead"), [
    ({"leaf": {"switch": "SN5600", "port_gbps": 800, "os": "sonic"}}, "fabric.leaf.os", "os: nvue"),
    ({"leaf": {"switch": "SN5400", "port_gbps": 200, "os": "sonic"}}, "fabric.leaf.os", "os: nvue"),
    ({"leaf": {"switch": "SN5400", "port_gbps": 100, "os": "sonic"}}, "fabric.leaf.os", "os: nvue"),
    ({"leaf": {"ports": 32, "port_gbps": 400, "os": "sonic"}}, "fabric.leaf.os", "os: eos or nvue"),
    ({"leaf": {"switch": "TH5-64x800", "port_gbps": 400}}, "fabric.leaf.switch", "(TH5-64x800 runs no other dialect)"),
])
def test_sonic_without_a_sku_port_map_is_a_schema_error(fabric: dict[str, Any], path: str, instead: str) -> None:
    """The hint names the other dialects the model runs (an SN5600 runs no EOS)."""
    result = run(stack(fabric=fabric))
    errors = [f for f in result.findings if f.rule == "SCHEMA"]
    assert [f.path for f in errors] == [path], [str(f) for f in result.findings]
    assert "SONiC needs the SKU port map" in errors[0].message and "SN5600 at 400G, 200G, 100G" in errors[0].message
    assert "SN4700 at 400G, 200G, 100G" in errors[0].message and "SN5400 at 400G;" in errors[0].message
    assert errors[0].hint.endswith(instead)
    assert result.exit_code == 2


def test_sonic_on_a_sku_speed_is_accepted() -> None:
    for model, gbps, mode in (("SN5600", 400, "lossless"), ("SN5600", 200, "lossless"), ("SN5600", 100, "lossy"),
                              ("SN4700", 400, "lossless"), ("SN4700", 200, "lossless"), ("SN4700", 100, "lossless"),
                              ("SN5400", 400, "lossless")):
        result = run(stack(fabric={"leaf": {"switch": model, "port_gbps": gbps, "os": "sonic"},
                                   "spine": {"switch": model, "port_gbps": gbps, "os": "sonic"}},
                           qos={"mode": mode}))
        assert "SCHEMA" not in {f.rule for f in result.findings}, (model, gbps, [str(f) for f in result.findings])


@pytest.mark.parametrize(("model", "gbps"), [("SN4700", 400), ("SN4700", 200), ("SN4700", 100), ("SN5400", 400)])
def test_a_switch_of_a_new_sku_renders_its_ports_and_buffers(model: str, gbps: int) -> None:
    sku = sonic_platforms()[model].skus[gbps]
    fabric = {"leaf": {"switch": model, "port_gbps": gbps, "os": "sonic"},
              "spine": {"switch": model, "port_gbps": gbps, "os": "sonic"}}
    # the 400G NICs on 100G or 200G ports fall short of the GPU bandwidth rules: not what this checks
    result = run(stack(fabric=fabric, policy={"suppress": ["FAB-GPU-NIC", "FAB-LINK-SPEED"]}))
    assert result.ok and isinstance(result, Valid), [str(f) for f in result.findings]
    config = json.loads(render_tree(result.spec, result.topology)["switches/leaf-001-r0/config_db.json"])
    metadata = config["DEVICE_METADATA"]["localhost"]
    assert (metadata["hwsku"], metadata["platform"]) == (sku.hwsku, sonic_platforms()[model].platform)
    ports = {port.name: port for port in sku.port_map}
    assert config["PORT"]
    for name, entry in config["PORT"].items():
        assert (entry["lanes"], entry["alias"], entry["index"]) == ports[name][1:], name
        assert entry["speed"] == str(gbps * 1000) and entry["fec"] == "rs"
    assert config["BUFFER_POOL"]["egress_lossless_pool"]["size"] == str(sku.buffers.egress_lossless_pool_bytes)
    assert ("ingress_lossy_pool" in config["BUFFER_POOL"]) == sku.buffers.ingress_lossy_pool
    assert metadata["create_only_config_db_buffers"] == "true"


# --- every catalog SKU: what holds without SONiC's files ---------------------------------------------

# (cages, lanes per cage) of each SONiC platform, from its platform.json at the commit the catalog
# names: on these Mellanox platforms cage i (a port's `index`) owns lanes 8(i-1)..8(i-1)+7.
PLATFORM_CAGES = {"x86_64-nvidia_sn5600-r0": (64, 8), "x86_64-nvidia_sn5400-r0": (64, 8), "x86_64-mlnx_msn4700-r0": (32, 8)}
CATALOG_HEADER = (Path(__file__).resolve().parent.parent / "cluster" / "dialects" / "sonic" / "sonic_ports.yaml"
                  ).read_text()[:1000]


@pytest.mark.parametrize(("model", "gbps"), SKUS)
def test_every_sku_names_each_port_once(model: str, gbps: int) -> None:
    ports = sonic_platforms()[model].skus[gbps].port_map
    assert all(re.fullmatch(r"Ethernet\d+", port.name) for port in ports)
    assert len({port.name for port in ports}) == len(ports)
    assert len({port.alias for port in ports}) == len(ports)
    assert load_catalog().switches[model].port_modes[gbps] == len(ports)


@pytest.mark.parametrize(("model", "gbps"), SKUS)
def test_every_skus_lanes_lie_in_their_cage_and_split_it_evenly(model: str, gbps: int) -> None:
    """No lane serves two ports, each port's lanes are its own cage's, and a cage split k ways gives
    each port lanes / k of them (C256S1: 8 x 1 lane on each odd cage; O32: 1 x 8)."""
    platform = sonic_platforms()[model]
    count, lanes = PLATFORM_CAGES[platform.platform]
    cages = load_catalog().switches[model].cages
    assert cages is None or (cages.count, cages.lanes) == (count, lanes)
    ports = platform.skus[gbps].port_map
    all_lanes = [int(lane) for port in ports for lane in port.lanes.split(",")]
    assert len(all_lanes) == len(set(all_lanes))
    per_cage = Counter(port.front_panel for port in ports)
    for port in ports:
        cage = int(port.front_panel)
        assert 1 <= cage <= count, port
        own = range(lanes * (cage - 1), lanes * cage)
        assert all(int(lane) in own for lane in port.lanes.split(",")), port
        assert lanes % per_cage[port.front_panel] == 0, port
        assert len(port.lanes.split(",")) == lanes // per_cage[port.front_panel], port


@pytest.mark.parametrize(("model", "gbps"), SKUS)
def test_every_skus_fec_text_names_its_lane_rate(model: str, gbps: int) -> None:
    """The FEC reasoning rests on the lane rate it names: every port's lanes x that rate is the speed."""
    sku = sonic_platforms()[model].skus[gbps]
    rate = re.search(r"(\d+)G-per-lane PAM4", sku.fec_source)
    assert rate is not None and sku.fec == "rs" and "RS(544,514)" in sku.fec_source
    assert {len(port.lanes.split(",")) * int(rate[1]) for port in sku.port_map} == {gbps}


@pytest.mark.parametrize(("model", "gbps"), SKUS)
def test_every_skus_buffer_facts_are_there_with_their_upstream_files(model: str, gbps: int) -> None:
    """Each fact is stated in the source beside the upstream file it was read from, at the commit the
    catalog's header names (the importer writes both; a hand edit of one shows here)."""
    platform = sonic_platforms()[model]
    sku = platform.skus[gbps]
    commit = re.search(r"commit ([0-9a-f]{40})", CATALOG_HEADER)
    assert commit is not None
    upstream = f"sonic-net/sonic-buildimage@{commit[1][:12]}"
    folder = f"device/mellanox/{platform.platform}/{sku.hwsku}/"
    assert sku.source.startswith(f"{upstream}:{folder}port_config.ini")
    facts = sku.buffers
    assert facts.source.startswith(f"{upstream}: objects {folder}buffers_defaults_objects.j2")
    assert facts.objects and f"/{facts.objects}/buffers_defaults_objects.j2" in facts.source
    size = facts.egress_lossless_pool_bytes
    assert size > 0 and f"egress_lossless_pool_size {size} in {folder}buffers_defaults_t" in facts.source
    assert ("lossless PG and queue profiles" in facts.source) == facts.lossless
    assert ("an ingress_lossy_pool" in facts.source) == facts.ingress_lossy_pool
    assert "create_only_config_db_buffers.json" in facts.source
    assert ("sets the flag if either exists" in facts.source) == facts.create_only_config_db_buffers


# --- routing mode against docker_init.sh ---------------------------------------------------

def modes_running_our_frr_conf(script: str) -> set[str]:
    """Modes whose branch of docker_init.sh keeps /etc/frr/frr.conf as written (no `rm` of it, no
    sonic-cfggen template writing it) and tells vtysh to use it (`service integrated-vtysh-config`)."""
    branches = re.split(r'\n(?:el)?if \[ [^\n]*?"\$CONFIG_TYPE" == "([a-z-]+)" \]; then\n', "\n" + script)
    modes: dict[str, str] = {}
    for index in range(1, len(branches), 2):
        body = branches[index + 1].split("\nfi\n", 1)[0]
        modes[branches[index]] = body
    assert {"separated", "split", "split-unified", "unified"} <= set(modes), sorted(modes)
    keeping = set()
    for mode, body in modes.items():
        removed = any("/etc/frr/frr.conf" in line for line in body.splitlines() if line.strip().startswith("rm "))
        generated = ",/etc/frr/frr.conf" in body
        integrated = re.search(r'^\s*echo "service integrated-vtysh-config"', body, re.M) is not None
        if not removed and not generated and integrated:
            keeping.add(mode)
    return keeping


def test_the_routing_mode_keeps_and_runs_the_rendered_frr_conf() -> None:
    keeping = modes_running_our_frr_conf(vendor(DOCKER_INIT).read_text())
    assert "split" not in keeping and "unified" not in keeping  # the parse sees rm and regeneration
    assert ROUTING_MODE in keeping


def test_the_rendered_switch_has_that_mode_and_one_frr_conf() -> None:
    result = validate("dev")
    assert isinstance(result, Valid)
    files = render_tree(result.spec, result.topology)
    config = json.loads(files["switches/leaf-001-r0/config_db.json"])
    assert config["DEVICE_METADATA"]["localhost"]["docker_routing_config_mode"] == ROUTING_MODE
    frr = [path for path in files if path.startswith("switches/leaf-001-r0/") and path.endswith(".conf")]
    assert frr == ["switches/leaf-001-r0/frr.conf"]
    assert "service integrated-vtysh-config" in files[frr[0]]


# --- buffers: every lossless priority of the plan gets headroom --------------------------------

def sonic_leaf(qos: dict[str, Any] | None = None) -> dict[str, Any]:
    changes: dict[str, Any] = {"fabric": {"leaf": {"switch": "SN5600", "port_gbps": 400, "os": "sonic"},
                                          "spine": {"switch": "SN5600", "port_gbps": 400, "os": "sonic"}}}
    if qos is not None:
        changes["qos"] = qos
    result = run(stack(**changes))
    assert result.ok and isinstance(result, Valid), [str(f) for f in result.findings]
    files = render_tree(result.spec, result.topology)
    config: dict[str, Any] = json.loads(files["switches/leaf-001-r0/config_db.json"])
    return config


def lossless_pgs(config: dict[str, Any], port: str) -> set[int]:
    found: set[int] = set()
    for key, entry in config["BUFFER_PG"].items():
        name, pgs = key.split("|")
        if name == port and entry["profile"] == "NULL":
            first, _, last = pgs.partition("-")
            found |= set(range(int(first), int(last or first) + 1))
    return found


@pytest.mark.parametrize(("qos", "lossless"), [
    (None, {3}),
    ({"roce": {"dscp": 26, "priority": 2}, "pfc_priorities": [2]}, {2}),
    ({"roce": {"dscp": 26, "priority": 4}, "pfc_priorities": [4]}, {4}),
])
def test_every_pfc_priority_has_a_lossless_priority_group_and_queue(qos: dict[str, Any] | None,
                                                                      lossless: set[int]) -> None:
    config = sonic_leaf(qos)
    pg_map = config["TC_TO_PRIORITY_GROUP_MAP"]["ROCE"]
    assert config["PORT_QOS_MAP"]
    for port, entry in config["PORT_QOS_MAP"].items():
        if port == "global":
            continue
        pfc = {int(priority) for priority in entry["pfc_enable"].split(",")}
        assert pfc == lossless
        assert lossless_pgs(config, port) == {int(pg_map[str(priority)]) for priority in pfc}
        assert config["BUFFER_PG"][f"{port}|0"] == {"profile": "ingress_lossy_profile"}
        for priority in pfc:
            assert config["BUFFER_QUEUE"][f"{port}|{priority}"] == {"profile": "egress_lossless_profile"}
        assert config["BUFFER_PORT_INGRESS_PROFILE_LIST"][port] and config["BUFFER_PORT_EGRESS_PROFILE_LIST"][port]
    assert config["DEVICE_METADATA"]["localhost"]["buffer_model"] == "dynamic"


def queues_of(config: dict[str, Any], port: str, profile: str) -> set[int]:
    found: set[int] = set()
    for key, entry in config["BUFFER_QUEUE"].items():
        name, queues = key.split("|")
        if name == port and entry["profile"] == profile:
            first, _, last = queues.partition("-")
            found |= set(range(int(first), int(last or first) + 1))
    return found


@pytest.mark.parametrize("gbps", [400, 200, 100])
def test_a_lossy_storage_leaf_buffers_every_port_lossy(gbps: int) -> None:
    """A storage leaf of a lossy storage plan (storage.lossless: false, the default): its ports take
    the plan's maps with no PFC, every port still gets buffers, the lossy profiles on PG 0 and
    queues 0-6 (as the SKU's templates give a port without PFC), no lossless PG, and only profiles
    the SKU's template family defines (the 100G SKU, C256S1, has no lossless ones)."""
    result = run(stack(storage={"leaf": {"switch": "SN5600", "ports": 16, "port_gbps": gbps, "os": "sonic"}},
                       node_pools=[{"name": "h200", "nodes": 4, "gpu": "H200",
                                    "storage_nics": {"count": 2, "gbps": gbps}}]))
    assert result.ok and isinstance(result, Valid), [str(f) for f in result.findings]
    config: dict[str, Any] = json.loads(render_tree(result.spec, result.topology)["switches/stor-leaf-001/config_db.json"])
    sku = sonic_sku("SN5600", gbps)
    assert sku is not None
    assert config["DEVICE_METADATA"]["localhost"]["buffer_model"] == "dynamic"
    assert config["PORT"] and set(config["PORT_QOS_MAP"]) - {"global"} == set(config["PORT"])
    assert all(config["PORT_QOS_MAP"][port]["pfc_enable"] == "" for port in config["PORT"])
    for port in config["PORT"]:
        assert config["BUFFER_PG"][f"{port}|0"] == {"profile": "ingress_lossy_profile"}
        assert lossless_pgs(config, port) == set()
        assert queues_of(config, port, "q_lossy_profile") == set(range(7))
        for table in ("BUFFER_PORT_INGRESS_PROFILE_LIST", "BUFFER_PORT_EGRESS_PROFILE_LIST"):
            for profile in config[table][port]["profile_list"].split(","):
                assert profile in config["BUFFER_PROFILE"], (table, profile)
    assert ("egress_lossless_profile" in config["BUFFER_PROFILE"]) == sku.buffers.lossless


def test_buffer_parameters_are_sonics_dynamic_mode_defaults() -> None:
    """buffers_config.j2 writes these two tables in dynamic mode; the values must be upstream's."""
    template = vendor(VENDOR / "files" / "build_templates" / "buffers_config.j2").read_text()
    config = sonic_leaf()
    default_th = re.search(r'"DEFAULT_LOSSLESS_BUFFER_PARAMETER".*?"default_dynamic_th": "(\d+)"', template, re.S)
    pattern = re.search(r'"LOSSLESS_TRAFFIC_PATTERN".*?"mtu": "(\d+)".*?"small_packet_percentage": "(\d+)"',
                        template, re.S)
    assert default_th and pattern
    assert config["DEFAULT_LOSSLESS_BUFFER_PARAMETER"] == {"AZURE": {"default_dynamic_th": default_th[1]}}
    assert config["LOSSLESS_TRAFFIC_PATTERN"] == {"AZURE": {"mtu": pattern[1], "small_packet_percentage": pattern[2]}}


@pytest.mark.parametrize(("model", "gbps"), VENDOR_SKUS)
def test_catalog_buffer_facts_follow_the_skus_templates(model: str, gbps: int) -> None:
    sku = sonic_platforms()[model].skus[gbps]
    folder = PLATFORM_DIRS[model] / sku.hwsku
    target, objects = linked(folder / "buffers_defaults_objects.j2")
    if target is not None:  # a link to another SKU's template
        assert target.endswith(f"/{sku.buffers.objects}/buffers_defaults_objects.j2")
    else:  # the SKU's own template
        assert sku.buffers.objects == sku.hwsku
    assert ('"egress_lossless_profile"' in objects) == sku.buffers.lossless
    assert ('"ingress_lossy_pool"' in objects) == sku.buffers.ingress_lossy_pool
    # SONiC sets the flag for the SKU's file or the platform's (docker_image_ctl.j2). A SKU file saying
    # true is checked here; the vendor copy has no platform-level file, so a flag the SKU's file does
    # not give must cite the platform's file as its reason.
    create_only = folder / "create_only_config_db_buffers.json"
    metadata = json.loads(create_only.read_text())["DEVICE_METADATA"]["localhost"] if create_only.is_file() else {}
    if metadata.get("create_only_config_db_buffers") == "true":
        assert sku.buffers.create_only_config_db_buffers
    elif sku.buffers.create_only_config_db_buffers:
        platform_file = (PLATFORM_DIRS[model] / "create_only_config_db_buffers.json").relative_to(VENDOR).as_posix()
        assert f"{platform_file} -> " in sku.buffers.source or f"{platform_file};" in sku.buffers.source
    _, t0 = linked(folder / "buffers_defaults_t0.j2")  # the SKU's own template or the one it links to
    sizes = dict(re.findall(r"set (\w+_pool_size) = +'(\d+)'", t0))
    assert int(sizes["egress_lossless_pool_size"]) == sku.buffers.egress_lossless_pool_bytes
    assert ("ingress_lossy_pool_size" in sizes) == sku.buffers.ingress_lossy_pool


@pytest.mark.parametrize("laid", ["symlink", "file holding the target"])
def test_a_vendor_link_reads_as_its_target_however_it_was_laid(tmp_path: Path, laid: str) -> None:
    shared = tmp_path / "ACS-SN5600" / "buffers_defaults_t0.j2"
    shared.parent.mkdir()
    shared.write_text("{% set egress_lossless_pool_size =  '158229504' %}\n")
    link = tmp_path / "Mellanox-SN5600-O128" / "buffers_defaults_t0.j2"
    link.parent.mkdir()
    if laid == "symlink":
        link.symlink_to("../ACS-SN5600/buffers_defaults_t0.j2")
    else:
        link.write_text("../ACS-SN5600/buffers_defaults_t0.j2")
    assert linked(link) == ("../ACS-SN5600/buffers_defaults_t0.j2", shared.read_text())
    assert linked(shared) == (None, shared.read_text())


def test_rendered_buffer_pools_follow_the_sku() -> None:
    config = sonic_leaf()
    sku = sonic_platforms()["SN5600"].skus[400]
    pools = config["BUFFER_POOL"]
    assert pools["egress_lossless_pool"]["size"] == str(sku.buffers.egress_lossless_pool_bytes)
    assert ("ingress_lossy_pool" in pools) == sku.buffers.ingress_lossy_pool
    assert all(pool["mode"] == "dynamic" for pool in pools.values())
    profile_pools = {profile["pool"] for profile in config["BUFFER_PROFILE"].values()}
    assert profile_pools == set(pools)
    # the SKU creates only the buffers config_db lists: every configured port has its PG and queues
    assert config["DEVICE_METADATA"]["localhost"]["create_only_config_db_buffers"] == "true"
    for port in config["PORT"]:
        assert f"{port}|0" in config["BUFFER_PG"] and port in config["BUFFER_PORT_INGRESS_PROFILE_LIST"]


def test_a_lossless_plan_on_a_lossy_only_sku_is_a_schema_error() -> None:
    fabric = {"leaf": {"switch": "SN5600", "port_gbps": 100, "os": "sonic"},
              "spine": {"switch": "SN5600", "port_gbps": 100, "os": "sonic"}}
    result = run(stack(fabric=fabric))
    errors = [f for f in result.findings if f.rule == "SCHEMA"]
    assert {f.path for f in errors} == {"fabric.leaf.port_gbps", "fabric.spine.port_gbps"}, [str(f) for f in errors]
    assert "Mellanox-SN5600-C256S1" in errors[0].message and "lossy only" in errors[0].message
    assert "qos.mode: lossy" in errors[0].hint
    lossy = run(stack(fabric=fabric, qos={"mode": "lossy"}))
    assert "SCHEMA" not in {f.rule for f in lossy.findings}, [str(f) for f in lossy.findings]


def test_frr_accepts_the_rendered_config_as_split_unified_leaves_it(tmp_path: Path) -> None:
    """In split-unified, docker_init.sh appends its default zebra lines to frr.conf: FRR must
    still accept the file as SONiC will run it."""
    script = vendor(DOCKER_INIT).read_text()
    function = re.search(r"write_default_zebra_config\(\)\n\{\n(.*?)\n\}", script, re.S)
    assert function is not None
    appended = re.findall(r'echo "([^"]+)" >> \$FILE_NAME', function[1])
    assert appended and any(line.startswith("fpm address") for line in appended)
    result = validate("dev")
    assert isinstance(result, Valid)
    text = render_tree(result.spec, result.topology)["switches/spine-001/frr.conf"]
    path = tmp_path / "frr.conf"
    path.write_text(text + "".join(f"{line}\n" for line in appended))
    run_frr = dryrun(path)
    assert run_frr.returncode == 0, (run_frr.stdout, run_frr.stderr)


# --- which OS a model runs -----------------------------------------------------------------------

@pytest.mark.parametrize(("fabric", "os", "runs"), [
    ({"leaf": {"switch": "SN5600", "port_gbps": 400, "os": "eos"}}, "eos", "nvue or sonic"),
    ({"leaf": {"switch": "7808R3", "port_gbps": 400, "os": "nvue"}}, "nvue", "eos"),
    ({"leaf": {"switch": "7060X6", "port_gbps": 400, "os": "sonic"}}, "sonic", "eos"),
])
def test_an_os_the_model_does_not_run_is_a_schema_error(fabric: dict[str, Any], os: str, runs: str) -> None:
    result = run(stack(fabric=fabric))
    errors = [f for f in result.findings if f.rule == "SCHEMA"]
    assert [f.path for f in errors] == ["fabric.leaf.os"], [str(f) for f in result.findings]
    model = fabric["leaf"]["switch"]
    assert errors[0].message.startswith(f"{model} does not run {os}: it runs {runs} (")
    assert errors[0].hint.startswith(f"set os to {runs}")
    assert result.exit_code == 2


def test_every_catalog_model_runs_its_default_os_and_says_where_that_is_stated() -> None:
    for name, entry in load_catalog().switches.items():
        assert entry.os in entry.runs, name
        assert entry.runs_source, name
        if entry.transport == "infiniband":
            assert entry.runs == ("opensm",), name
    assert "eos" not in load_catalog().switches["SN5600"].runs
    assert load_catalog().switches["7808R3"].runs == ("eos",)


# --- NVUE and EOS names from the same cage data ----------------------------------------------------

def rendered_switch(fabric: dict[str, Any], name: str, file: str) -> str:
    result = run(stack(fabric=fabric))
    assert result.ok and isinstance(result, Valid), [str(f) for f in result.findings]
    return render_tree(result.spec, result.topology)[f"switches/{name}/{file}"]


def test_sn5600_cage_data_is_the_platform_json() -> None:
    cages = json.loads(vendor(PLATFORM_DIRS["SN5600"] / "platform.json").read_text())["interfaces"]
    osfp = {name: cage for name, cage in cages.items() if len(cage["lanes"].split(",")) > 1}
    entry = load_catalog().switches["SN5600"]
    assert entry.cages is not None
    assert len(osfp) == entry.cages.count
    assert {len(cage["lanes"].split(",")) for cage in osfp.values()} == {entry.cages.lanes}
    for gbps in entry.port_modes:
        split = breakout("SN5600", gbps)
        assert split is not None
        if split.step == 2:
            # upstream took the 8-way split out of platform.json (070d488e9d: DPB "not fully supported
            # yet"); the SKU at that speed, when there is one, is the platform's word for it
            sku = sonic_sku("SN5600", gbps)
            if sku is not None:
                rows = port_config(vendor(PLATFORM_DIRS["SN5600"] / sku.hwsku / "port_config.ini"))
                cages = Counter(int(row[3]) for row in rows if int(row[4]) == gbps * 1000)
                assert set(cages.values()) == {split.ports} and all(cage % 2 for cage in cages), cages
            continue
        # platform.json names a breakout mode `kxSG[other speeds]`: k ports per cage at S or a bracketed speed
        modes = {mode for cage in osfp.values() for mode in cage["breakout_modes"]
                 if mode.startswith(f"{split.ports}x") and re.search(rf"(x|\[|,){gbps}G", mode)}
        assert modes, (gbps, split.ports)


def test_nvue_names_the_subports_of_each_broken_out_cage() -> None:
    fabric = {"leaf": {"switch": "SN5600", "port_gbps": 400}, "spine": {"switch": "SN5600", "port_gbps": 400}}
    nvue = rendered_switch(fabric, "spine-001", "nvue.sh")
    names = re.findall(r"^nv set interface (swp\S+) link mtu", nvue, re.M)
    assert names and all(re.fullmatch(r"swp([1-9]|[1-5][0-9]|6[0-4])s[01]", name) for name in names), names
    assert len(names) == len(set(names))
    cages = sorted({int(name[3:].split("s")[0]) for name in names})
    assert re.findall(r"^nv set interface (swp\d+) link breakout 2x$", nvue, re.M) == [f"swp{cage}" for cage in cages]
    first_config = nvue.index("link breakout")
    assert all(nvue.index(f"nv set interface {name} ") > first_config for name in names)


def test_eos_names_the_first_lane_of_each_port_and_its_lane_count() -> None:
    for gbps, lanes, speed in ((400, ("1", "5"), "400g-4"), (200, ("1", "3", "5", "7"), "200g-2")):
        fabric = {"leaf": {"switch": "7060X6", "port_gbps": gbps}, "spine": {"switch": "7060X6", "port_gbps": gbps}}
        eos = rendered_switch(fabric, "spine-001", "eos.cfg")
        ports = re.findall(r"^interface (Ethernet\d+/\d+)\n(?:   .*\n)*?   speed (\S+)", eos, re.M)
        assert ports
        for name, port_speed in ports:
            cage, lane = name[len("Ethernet"):].split("/")
            assert 1 <= int(cage) <= 64 and lane in lanes, name
            assert port_speed == speed, (name, port_speed)
