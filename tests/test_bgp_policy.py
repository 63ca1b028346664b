"""BGP safeguards as the rendered switch configs state them, read from the files per dialect: the
plan's prefix filter on every session in both directions, a route limit on every neighbor above the
routes its domain holds, graceful restart on leaves (helpers elsewhere), RFC 8212 and neighbor-change
logging in FRR, and SONiC's `suppress-fib-pending`. The filter is then evaluated: every prefix any
switch of the domain announces passes it, a link /31, a default route, a wider or longer prefix and
another domain's loopback do not."""

from __future__ import annotations

import ipaddress
import re
from dataclasses import dataclass, field

import pytest

from cluster.addressing import allocate, plan_prefixes
from cluster.configs import switch_files
from cluster.topology import Topology
from tests.test_bfd import GOLDEN, IPV4, STACKS, VARIANTS, _design, designed_sessions

Entry = tuple[str, int]  # (region, the only prefix length it admits)


@dataclass
class Stated:
    """What one switch config says of its BGP safeguards."""

    lists: dict[str, set[Entry]] = field(default_factory=dict)  # prefix list -> its permit entries
    inbound: dict[str, str] = field(default_factory=dict)  # neighbor -> prefix list applied in
    outbound: dict[str, str] = field(default_factory=dict)
    limits: dict[str, int] = field(default_factory=dict)  # neighbor -> most prefixes it may send
    restarts: bool = False  # restarting speaker (graceful restart full)
    helper: bool = True  # helps its peers restart
    flags: set[str] = field(default_factory=set)  # FRR `bgp ...` lines of note


def _entry(prefix: str, low: str | None, high: str | None) -> Entry:
    length = int(prefix.split("/")[1])
    lows, highs = int(low) if low else length, int(high) if high else (32 if low else length)
    assert lows == highs, f"{prefix} admits lengths {lows}-{highs}: the plan admits one per region"
    return prefix, lows


def read_frr(text: str) -> Stated:
    stated = Stated()
    for name, prefix, low, high in re.findall(
            r"^ip prefix-list (\S+) seq \d+ permit (\S+)(?: ge (\d+))?(?: le (\d+))?$", text, re.M):
        stated.lists.setdefault(name, set()).add(_entry(prefix, low, high))
    groups = dict(re.findall(rf"^ neighbor ({IPV4}) peer-group (\S+)$", text, re.M))
    applied = {(who, way): name for who, name, way in re.findall(r"^  neighbor (\S+) prefix-list (\S+) (in|out)$", text, re.M)}
    limits = dict(re.findall(r"^  neighbor (\S+) maximum-prefix (\d+)$", text, re.M))
    for peer, group in groups.items():
        for way, target in (("in", stated.inbound), ("out", stated.outbound)):
            name = applied.get((peer, way), applied.get((group, way)))
            if name is not None:
                target[peer] = name
        if peer in limits or group in limits:
            stated.limits[peer] = int(limits.get(peer, limits.get(group, 0)))
    stated.flags = set(re.findall(r"^ ((?:no )?bgp [a-z-]+)", text, re.M))
    stated.restarts = "bgp graceful-restart" in re.findall(r"^ (bgp graceful-restart)$", text, re.M)
    stated.helper = "bgp graceful-restart-disable" not in stated.flags
    return stated


def read_nvue(text: str) -> Stated:
    stated = Stated()
    rules: dict[tuple[str, str], dict[str, str]] = {}
    for name, rule, rest in re.findall(r"^nv set router policy prefix-list (\S+) rule (\d+) (.+)$", text, re.M):
        entry = rules.setdefault((name, rule), {})
        if rest.startswith("action "):
            entry["action"] = rest.split()[1]
        else:
            _, prefix, *attribute = rest.split()
            entry["prefix"] = prefix
            if attribute:
                entry[attribute[0]] = attribute[1]
    for (name, _), entry in rules.items():
        if entry.get("action") == "permit":
            stated.lists.setdefault(name, set()).add(
                _entry(entry["prefix"], entry.get("min-prefix-len"), entry.get("max-prefix-len")))
    base = rf"^nv set vrf default router bgp neighbor ({IPV4}) address-family ipv4-unicast"
    stated.inbound = dict(re.findall(rf"{base} policy inbound prefix-list (\S+)$", text, re.M))
    stated.outbound = dict(re.findall(rf"{base} policy outbound prefix-list (\S+)$", text, re.M))
    stated.limits = {peer: int(value) for peer, value in re.findall(rf"{base} prefix-limits inbound maximum (\d+)$", text, re.M)}
    mode = re.findall(r"^nv set router bgp graceful-restart mode (\S+)$", text, re.M)
    stated.restarts = mode == ["full"]
    stated.helper = mode in (["full"], ["helper-only"])  # NVUE's default is off
    return stated


def read_eos(text: str) -> Stated:
    stated = Stated()
    for name, body in re.findall(r"^ip prefix-list (\S+)\n((?:   .*\n)*)", text, re.M):
        for prefix, length in re.findall(r"^   seq \d+ permit (\S+)(?: eq (\d+))?$", body, re.M):
            stated.lists.setdefault(name, set()).add(_entry(prefix, length or None, length or None))
    family = re.search(r"^   address-family ipv4\n((?:      .*\n)*)", text, re.M)
    lines = family[1] if family else ""
    for peer, name, way in re.findall(rf"^      neighbor ({IPV4}) prefix-list (\S+) (in|out)$", lines, re.M):
        (stated.inbound if way == "in" else stated.outbound)[peer] = name
    stated.limits = {peer: int(value) for peer, value in re.findall(rf"^   neighbor ({IPV4}) maximum-routes (\d+)$", text, re.M)}
    stated.restarts = bool(re.search(r"^   graceful-restart$", text, re.M))
    stated.helper = not re.search(r"^   no graceful-restart-helper$", text, re.M)
    return stated


READERS = {"frr.conf": read_frr, "nvue.sh": read_nvue, "eos.cfg": read_eos}


def admits(entries: set[Entry], prefix: str) -> bool:
    network = ipaddress.IPv4Network(prefix)
    return any(network.subnet_of(ipaddress.IPv4Network(region)) and network.prefixlen == length  # type: ignore[arg-type]
               for region, length in entries)


def policy_problems(source: str) -> list[str]:
    spec, topology = _design(source)
    if spec.target != "onprem":
        pytest.skip(f"{source} is a cloud stack: no switch configs")
    addresses = allocate(spec, topology)
    files, inventory = switch_files(spec, topology, addresses)
    plans = plan_prefixes(spec)
    announced: dict[str, set[str]] = {}  # domain -> every prefix a switch of it announces
    configs = []
    for path, text in sorted(files.items()):
        _, switch, name = path.split("/")
        if name in READERS and switch in addresses.asns:
            network = str(inventory[switch]["network"])
            configs.append((switch, name, network, READERS[name](text), text))
            announced.setdefault(network, set()).update(_networks(name, text))
    sessions = designed_sessions(spec, topology)
    problems: list[str] = []
    for switch, name, network, stated, text in configs:
        problems += [f"{switch}: {problem}" for problem in _switch_problems(
            topology, switch, name, network, stated, text, plans, announced, sessions.get(switch, set()))]
    return problems


def _networks(name: str, text: str) -> set[str]:
    forms = {"frr.conf": r"^  network (\S+)$", "eos.cfg": r"^   network (\S+)$",
             "nvue.sh": r"^nv set vrf default router bgp address-family ipv4-unicast network (\S+)$"}
    return set(re.findall(forms[name], text, re.M))


def _switch_problems(topology: Topology, switch: str, name: str, network: str, stated: Stated, text: str,
                     plans: dict[str, tuple[Entry, ...]], announced: dict[str, set[str]], peers: set[str]) -> list[str]:
    problems = []
    if len(stated.lists) != 1:
        return [f"{len(stated.lists)} prefix lists"]
    (list_name, entries), = stated.lists.items()
    if entries != set(plans[network]):
        problems.append(f"prefix list {sorted(entries)}, the plan's {sorted(plans[network])}")
    for peer in sorted(peers):
        if stated.inbound.get(peer) != list_name or stated.outbound.get(peer) != list_name:
            problems.append(f"neighbor {peer} without the prefix list both ways")
        if stated.limits.get(peer, 0) < len(announced[network]):
            problems.append(f"neighbor {peer} may send {stated.limits.get(peer)} prefixes, the domain holds "
                            f"{len(announced[network])}")
    tier = topology.switch(switch)["tier"]
    if stated.restarts != (tier == "leaf") or not stated.helper:
        problems.append(f"graceful restart {'full' if stated.restarts else 'helper' if stated.helper else 'off'} on a {tier}")
    if name == "frr.conf":
        wanted = {"bgp log-neighbor-changes", "bgp ebgp-requires-policy", "bgp suppress-fib-pending"}
        problems += [f"no `{flag}`" for flag in sorted(wanted - stated.flags)]
        if "no bgp ebgp-requires-policy" in stated.flags:
            problems.append("`no bgp ebgp-requires-policy`: sessions without a policy would carry routes")
    for prefix in sorted(announced[network]):
        if not admits(entries, prefix):
            problems.append(f"the filter drops {prefix}, which the domain announces")
    links = [ipaddress.IPv4Interface(address).network for address in re.findall(rf"ip address ({IPV4}/31)", text)]
    foreign = [prefix for other, prefixes in announced.items() if other != network for prefix in prefixes]
    for prefix in ["0.0.0.0/0", *map(str, links), *foreign[:3]]:
        if admits(entries, prefix) and prefix not in announced[network]:
            problems.append(f"the filter admits {prefix}, which is no prefix of the domain")
    for prefix, length in entries:
        region = ipaddress.IPv4Network(prefix)
        shorter = ipaddress.IPv4Network((region.network_address, max(length - 8, region.prefixlen)))
        if shorter.prefixlen != length and admits(entries, str(shorter)):
            problems.append(f"the filter admits {shorter}, an aggregate of the region")
    return problems


@pytest.mark.parametrize("source", [*STACKS, *GOLDEN, *VARIANTS])
def test_every_bgp_session_carries_the_plan_only(source: str) -> None:
    assert policy_problems(source) == []


def test_the_check_fails_on_a_config_without_safeguards(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each reader sees a session left open: the FRR filter applied inbound only, and an EOS
    neighbor's outbound line gone."""
    source = "contract-eos"
    original = switch_files

    def dropped(*args: object, **kwargs: object) -> object:
        files, inventory = original(*args, **kwargs)  # type: ignore[arg-type]
        return {path: re.sub(r"^      neighbor (\S+) prefix-list PLAN out\n", "", text, count=1, flags=re.M)
                for path, text in files.items()}, inventory

    monkeypatch.setattr(f"{__name__}.switch_files", dropped)
    problems = policy_problems(source)
    assert any("without the prefix list both ways" in problem for problem in problems), problems
    frr = "ip prefix-list PLAN seq 10 permit 10.0.0.0/17 ge 32\n router bgp 1\n neighbor 10.64.0.1 peer-group FABRIC\n" \
          "  neighbor FABRIC prefix-list PLAN in\n"
    stated = read_frr(frr)
    assert stated.inbound == {"10.64.0.1": "PLAN"} and stated.outbound == {}
