"""Write cluster/dialects/sonic/sonic_ports.yaml from SONiC's SKU files (a maintainer's tool, run by hand).

Reads, for each SKU below, from an unmodified sonic-buildimage tree at COMMIT whose symlinks are
symlinks (a git checkout; many SKUs link their port map or buffer templates to another SKU's):
- `port_config.ini`: the front-panel ports at the SKU's speed as `name lanes alias index` lines,
  in file order. Where the file has no speed column (the ACS-* SKUs and those linking to their
  file), a port's speed is the one its `default_brkout_mode` in the SKU's `hwsku.json` gives.
- `buffers_defaults_objects.j2` (the SKU's own, or the family it links to), every
  `buffers_defaults_t<N>.j2`, and the SKU's and the platform's `create_only_config_db_buffers.json`:
  the buffer facts config_db needs in the dynamic buffer model.
The vendor copy the tests use (../shared/vendor/sonic, the default) holds only the SN5600 SKUs and
none of the template families they link to, so pass a full tree. The product reads only the YAML
this writes; tests/test_sonic_platform.py checks it against the vendor copy and for consistency.

Usage: python scripts/import_sonic_ports.py [SONIC_TREE]
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import NamedTuple

ROOT = Path(__file__).resolve().parent.parent
COMMIT = "086b03bd70f9e211aaaf5f6aefe0790b508d2a94"
UPSTREAM = f"sonic-net/sonic-buildimage@{COMMIT[:12]}"
# The swss container's start script sets DEVICE_METADATA|localhost create_only_config_db_buffers
# when the platform folder OR the SKU folder has the file (its "Insert create_only_config_db_buffers"
# block, lines 533-564 at COMMIT; its per-ASIC folders are for multi-ASIC boxes, none here), so a SKU
# without its own file still gets the flag from its platform.
START_SCRIPT = "files/build_templates/docker_image_ctl.j2"
CREATE_ONLY = "create_only_config_db_buffers.json"
# FEC: no SKU here has a fec column (upstream took it out of the SN5600's, c251bb44f7: "FEC mode
# needs to come as part of user configuration"), so the value is the one the PHY at the lane rate
# the port map gives needs; sku_lines() checks that rate against every port's lane count.
FEC_100G_LANES = ("every speed here runs 100G-per-lane PAM4 lanes (400G on 4, 200G on 2, 100G on 1: 400GBASE-CR4, "
                  "200GBASE-CR2, 100GBASE-CR1 of IEEE 802.3ck), whose PHYs use RS(544,514) FEC; SONiC's value is `rs`")
FEC_50G_LANES = ("every speed here runs 50G-per-lane PAM4 lanes (400G on 8, 200G on 4, 100G on 2: 400GBASE-CR8/SR8, "
                 "200GBASE-CR4, 100GBASE-CR2), whose PHYs use RS(544,514) FEC; SONiC's value is `rs`")
FEC_400G_ON_50G_LANES = ("400G runs on 8 50G-per-lane PAM4 lanes (400GBASE-CR8/SR8), whose PHYs use RS(544,514) FEC; "
                         "SONiC's value is `rs`")


class Platform(NamedTuple):
    vendor: str
    platform: str
    lane_gbps: int  # the electrical lane rate every SKU speed below runs at
    fec_source: str
    skus: dict[int, str]  # port speed Gbps -> hwsku whose ports all run at it


SKUS = {
    "SN5600": Platform("mellanox", "x86_64-nvidia_sn5600-r0", 100, FEC_100G_LANES, {
        400: "Mellanox-SN5600-O128", 200: "Mellanox-SN5600-V256", 100: "Mellanox-SN5600-C256S1"}),
    # The only SN5400 SKU upstream: no 200G or 100G SKU (those are breakout modes of platform.json only).
    "SN5400": Platform("mellanox", "x86_64-nvidia_sn5400-r0", 50, FEC_400G_ON_50G_LANES, {400: "ACS-SN5400"}),
    "SN4700": Platform("mellanox", "x86_64-mlnx_msn4700-r0", 50, FEC_50G_LANES + (
        "; upstream's commit 978fb9f56c (#19681), which added Mellanox-SN4700-O32 and -V64, states 'FEC mode: RS'"), {
        400: "Mellanox-SN4700-O32", 200: "Mellanox-SN4700-V64", 100: "Mellanox-SN4700-C128"}),
}


class Buffers(NamedTuple):
    """What a SKU's buffer templates fix for config_db (cluster.dialects.sonic.skus.SonicBuffers)."""

    objects: str  # the SKU whose buffers_defaults_objects.j2 it uses
    lossless: bool
    ingress_lossy_pool: bool
    egress_lossless_pool_bytes: int
    create_only_config_db_buffers: bool
    source: str


class TreeError(Exception):
    """The tree is not one this importer can read faithfully."""


def real(tree: Path, path: Path) -> Path:
    """`path` with upstream's symlinks followed. A copy that keeps a link as a file of its target's
    path (as ../shared/vendor/sonic does) would pass for a template of the SKU's own: refused."""
    if not path.exists():
        raise TreeError(f"{path} not found: pass a full sonic-buildimage tree at {COMMIT}")
    target = path.resolve()
    text = target.read_text()
    if text.startswith("../") and "\n" not in text.strip():
        raise TreeError(f"{path} holds the link text {text.strip()!r}: pass a tree that keeps symlinks")
    return target


def named(tree: Path, path: Path) -> str:
    """The upstream path of `path`, with the file it links to."""
    shown = path.relative_to(tree).as_posix()
    target = real(tree, path).relative_to(tree.resolve()).as_posix()
    return shown if target == shown else f"{shown} -> {target}"


def port_rows(path: Path) -> list[list[str]]:
    """[name, lanes, alias, index, speed, ...] per port line of a port_config.ini."""
    return [line.split() for line in path.read_text().splitlines() if line.strip() and not line.startswith("#")]


def breakout_gbps(hwsku: Path) -> dict[str, int]:
    """Port name -> speed in Gbps from hwsku.json's `default_brkout_mode` ("2x200G[100G,...]": 200)."""
    interfaces = json.loads(hwsku.read_text())["interfaces"]
    speeds = {}
    for name, entry in interfaces.items():
        mode = re.match(r"(\d+)x(\d+)G\b", entry["default_brkout_mode"])
        if mode is None:
            raise TreeError(f"{hwsku}: {name}: no speed in {entry['default_brkout_mode']!r}")
        speeds[name] = int(mode[2])
    return speeds


def ports_at(tree: Path, folder: Path, gbps: int) -> tuple[list[list[str]], str]:
    """The SKU's ports at `gbps`, in file order, and where their speeds come from."""
    config = folder / "port_config.ini"
    rows = port_rows(real(tree, config))
    if all(len(row) > 4 for row in rows):
        return [row for row in rows if int(row[4]) == gbps * 1000], f"{UPSTREAM}:{named(tree, config)}"
    # no speed column: the speed DPB's default breakout mode gives each port
    hwsku = folder / "hwsku.json"
    speeds = breakout_gbps(real(tree, hwsku))
    missing = [row[0] for row in rows if row[0] not in speeds]
    if missing:
        raise TreeError(f"{hwsku} has no default_brkout_mode for {', '.join(missing)}")
    source = (f"{UPSTREAM}:{named(tree, config)} (no speed column: the speed of each port from "
              f"{hwsku.relative_to(tree).as_posix()} default_brkout_mode)")
    return [row for row in rows if speeds[row[0]] == gbps], source


def table_keys(template: str, table: str) -> set[str]:
    """The entries a buffers_defaults_objects.j2 defines in `table` (BUFFER_POOL or BUFFER_PROFILE)."""
    if f'"{table}": {{' not in template:
        return set()
    body = template.split(f'"{table}": {{', 1)[1]
    body = re.split(r'"BUFFER_\w+": \{|endmacro', body, maxsplit=1)[0]
    return set(re.findall(r'^\s*"(\w+)"\s*:\s*\{', body, re.M))


def egress_lossless_pool(tree: Path, folder: Path) -> tuple[int, str]:
    """The egress lossless pool size every buffers_defaults_t<N>.j2 of the SKU sets (one value, or
    the topologies would disagree on a size config_db gives once)."""
    templates = sorted(folder.glob("buffers_defaults_t[0-9].j2"))
    sizes = {int(size) for path in templates
             for size in re.findall(r"set egress_lossless_pool_size\s*=\s*'(\d+)'", real(tree, path).read_text())}
    if not templates or len(sizes) != 1:
        raise TreeError(f"{folder}: egress_lossless_pool_size {sorted(sizes)} across {len(templates)} templates")
    size = sizes.pop()
    return size, f"egress_lossless_pool_size {size} in {', '.join(named(tree, path) for path in templates)}"


def create_only(tree: Path, platform: Path, folder: Path) -> tuple[bool, str]:
    """Whether SONiC sets create_only_config_db_buffers, as START_SCRIPT decides it: a file in the
    platform or the SKU folder. A file there saying anything but "true" would make the flag's
    meaning differ from the file's, so it stops the import instead."""
    found = [path for path in (folder / CREATE_ONLY, platform / CREATE_ONLY) if path.exists()]
    for path in found:
        value = json.loads(real(tree, path).read_text())["DEVICE_METADATA"]["localhost"].get("create_only_config_db_buffers")
        if value != "true":
            raise TreeError(f"{path} says {value!r}, yet {START_SCRIPT} sets the flag because the file exists")
    if not found:
        return False, f"no {CREATE_ONLY} in the SKU or the platform folder ({START_SCRIPT})"
    return True, f"{'; '.join(named(tree, path) for path in found)} ({START_SCRIPT} sets the flag if either exists)"


def buffers(tree: Path, platform: Path, hwsku: str) -> Buffers:
    folder = platform / hwsku
    objects_path = folder / "buffers_defaults_objects.j2"
    objects = real(tree, objects_path)
    pools = table_keys(objects.read_text(), "BUFFER_POOL")
    profiles = table_keys(objects.read_text(), "BUFFER_PROFILE")
    if "egress_lossless_pool" not in pools:
        raise TreeError(f"{objects}: no egress_lossless_pool in {sorted(pools)}")
    # PFC needs both: the ingress one in each port's list (lossless PGs draw on its pool), the egress one on the queues
    lossless = {"ingress_lossless_profile", "egress_lossless_profile"} <= profiles
    lossy_pool = "ingress_lossy_pool" in pools
    size, size_source = egress_lossless_pool(tree, folder)
    create, create_source = create_only(tree, platform, folder)
    source = (f"{UPSTREAM}: objects {named(tree, objects_path)} ("
              f"{'lossless PG and queue profiles' if lossless else 'lossy profiles only'}, "
              f"{'an' if lossy_pool else 'no'} ingress_lossy_pool); {size_source}; {create_source}")
    return Buffers(objects.parent.name, lossless, lossy_pool, size, create, source)


def sku_lines(tree: Path, model: Platform, gbps: int, hwsku: str) -> list[str]:
    platform = tree / "device" / model.vendor / model.platform
    rows, source = ports_at(tree, platform / hwsku, gbps)
    wrong = [row[0] for row in rows if len(row[1].split(",")) * model.lane_gbps != gbps]
    if not rows or wrong:
        raise TreeError(f"{hwsku}: {len(rows)} ports at {gbps}G; not on {model.lane_gbps}G lanes: {wrong}")
    facts = buffers(tree, platform, hwsku)
    lines = [f"    {gbps}:", f"      hwsku: {hwsku}", "      fec: rs",
             f"      fec_source: {json.dumps(model.fec_source)}",
             f"      source: {json.dumps(source)}",
             "      buffers:", f"        objects: {facts.objects}",
             f"        lossless: {'true' if facts.lossless else 'false'}",
             f"        ingress_lossy_pool: {'true' if facts.ingress_lossy_pool else 'false'}",
             f"        egress_lossless_pool_bytes: {facts.egress_lossless_pool_bytes}",
             f"        create_only_config_db_buffers: {'true' if facts.create_only_config_db_buffers else 'false'}",
             f"        source: {json.dumps(facts.source)}", "      ports:"]
    return lines + [f"        - {' '.join(row[:4])}" for row in rows]


def check_commit(tree: Path) -> None:
    """A git checkout must be at COMMIT, or the YAML's header would name the wrong one; any other
    tree is taken as a copy of COMMIT (the caller vouches for it)."""
    if not (tree / ".git").exists():
        return
    head = subprocess.run(["git", "-C", str(tree), "rev-parse", "HEAD"], capture_output=True, text=True, check=True)
    if head.stdout.strip() != COMMIT:
        raise TreeError(f"{tree} is at {head.stdout.strip()}, not {COMMIT}")


def main(argv: list[str]) -> int:
    tree = Path(argv[0]) if argv else ROOT.parent / "shared" / "vendor" / "sonic"
    out = ["# SONiC port maps per switch model and port speed, generated by scripts/import_sonic_ports.py",
           "# from a sonic-net/sonic-buildimage tree at commit " + COMMIT + ": each SKU's",
           "# port_config.ini, the front-panel ports at the SKU's speed as `name lanes alias index`, in file",
           "# order (the speed from its speed column or, where it has none, from the SKU's hwsku.json",
           "# default_brkout_mode; the ports at other speeds, e.g. the SN5600's 1 x 25G port, are left out),",
           "# and the buffer facts of the SKU's templates. Do not edit by hand.", ""]
    try:
        check_commit(tree)
        for model, platform in SKUS.items():
            out += [f"{model}:", f"  platform: {platform.platform}", "  skus:"]
            for gbps, hwsku in sorted(platform.skus.items(), reverse=True):
                out += sku_lines(tree, platform, gbps, hwsku)
    except TreeError as error:
        print(f"import_sonic_ports: {error}", file=sys.stderr)
        return 2
    (ROOT / "cluster" / "dialects" / "sonic" / "sonic_ports.yaml").write_text("\n".join(out) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
