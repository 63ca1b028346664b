"""A host's rendered netplan file as the lab runs it: the addresses, MTUs, routes and routing
rules that `netplan apply` (networkd backend) gives each port, as the `ip` commands that leave the
host's namespace in that state. netplan itself needs systemd-networkd, which a namespace does not
run; `netplan generate` checks the file where it is rendered. Any key the translation does not know
is refused, so an edit it does not understand never passes silently.

Semantics kept (netplan reference, *Properties for all device types*: `addresses`, `mtu`,
`routes` with `to`/`via`/`table`/`metric`, `routing-policy` with `from`/`to`/`table`/`priority`):
a route without `table` is in the main table; `to: default` is 0.0.0.0/0; a port without `mtu`
keeps Linux's 1500.
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass
from ipaddress import ip_address, ip_interface, ip_network
from typing import Any

import yaml

from cluster.dialects import RenderedFiles

ETHERNET_KEYS = frozenset({"dhcp4", "optional", "mtu", "addresses", "routes", "routing-policy"})
ROUTE_KEYS = frozenset({"to", "via", "table", "metric"})
POLICY_KEYS = frozenset({"from", "to", "table", "priority"})
DEFAULT_MTU = 1500


@dataclass(frozen=True)
class HostPorts:
    """What a host's netplan file gives its ports: {netdev: (address a.b.c.d/len or None, MTU)},
    and the `ip` commands (one per line, for `ip -batch`) that set their addresses, routes and rules."""

    ports: dict[str, tuple[str | None, int]]
    commands: tuple[str, ...]


def translate(path: str, tree: RenderedFiles, netdevs: list[str]) -> HostPorts | None:
    """The ports `netdevs` as the netplan file at `path` configures them (None: it cannot say;
    each problem reported at `path`)."""
    text = tree.text(path, "the host's netplan file (its management and storage ports)")
    if text is None:
        return None
    problems: list[str] = []
    try:
        document = yaml.safe_load(text)
    except yaml.YAMLError as error:
        tree.problem(path, f"is not YAML ({str(error).splitlines()[0]})", tree.again)
        return None
    ethernets = _dig(document, ("network", "ethernets"))
    if not isinstance(ethernets, dict):
        tree.problem(path, "has no network.ethernets mapping", tree.again)
        return None
    ports: dict[str, tuple[str | None, int]] = {}
    addresses: list[str] = []
    routes: list[str] = []
    rules: list[str] = []
    for name, settings in sorted(ethernets.items()):
        where = f"network.ethernets.{name}"
        if name not in netdevs:
            problems.append(f"{where}: {name!r} is no port the design gives this host ({', '.join(netdevs)})")
            continue
        if not isinstance(settings, dict):
            problems.append(f"{where} is not a mapping")
            continue
        unknown = sorted(set(map(str, settings)) - ETHERNET_KEYS)
        if unknown:
            problems.append(f"{where}: {', '.join(unknown)} is a setting the lab does not translate")
            continue
        if settings.get("dhcp4") not in (None, False):
            problems.append(f"{where}.dhcp4: the lab runs planned static addresses only")
            continue
        own = [str(address) for address in settings.get("addresses") or []]
        if not all(_interface(address) for address in own) or len(own) > 1:
            problems.append(f"{where}.addresses: {own!r} is not one a.b.c.d/len address")
            continue
        mtu = settings.get("mtu", DEFAULT_MTU)
        if not isinstance(mtu, int) or isinstance(mtu, bool) or not 68 <= mtu <= 65535:
            problems.append(f"{where}.mtu: {mtu!r} is not an MTU")
            continue
        ports[name] = (own[0] if own else None, mtu)
        addresses += [f"address add {address} dev {name}" for address in own]
        for index, route in enumerate(settings.get("routes") or []):
            line = _route(route, name)
            if line is None:
                problems.append(f"{where}.routes[{index}]: {route!r} is not a route the lab translates "
                                f"({', '.join(sorted(ROUTE_KEYS))}: an address or prefix, `default`, numbers)")
            else:
                routes.append(line)
        for index, policy in enumerate(settings.get("routing-policy") or []):
            line = _rule(policy)
            if line is None:
                problems.append(f"{where}.routing-policy[{index}]: {policy!r} is not a rule the lab translates "
                                f"({', '.join(sorted(POLICY_KEYS))})")
            else:
                rules.append(line)
    for problem in problems:
        tree.problem(path, problem, f"correct it, or {tree.again}")
    if problems:
        return None
    return HostPorts(ports, (*addresses, *routes, *rules))


def _dig(document: Any, keys: tuple[str, ...]) -> Any:
    for key in keys:
        if not isinstance(document, dict):
            return None
        document = document.get(key)
    return document


def _interface(text: str) -> bool:
    try:
        return "/" in text and ip_interface(text).version == 4
    except ValueError:
        return False


def _prefix(text: object) -> str | None:
    """A route's `to` (or a rule's `from`/`to`) as `ip` takes it."""
    if text == "default":
        return "default"
    try:
        return str(ip_network(str(text), strict=False)) if "/" in str(text) else str(ip_address(str(text)))
    except ValueError:
        return None


def _number(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and 0 <= value < 2**32


def _route(route: object, device: str) -> str | None:
    if not isinstance(route, dict) or set(map(str, route)) - ROUTE_KEYS or "to" not in route:
        return None
    to = _prefix(route["to"])
    via = _prefix(route["via"]) if "via" in route else None
    if to is None or ("via" in route and (via is None or "/" in via or via == "default")):
        return None
    if not all(_number(route[key]) for key in ("table", "metric") if key in route):
        return None
    words = ["route", "add", to, *(["via", via] if via else []), "dev", device]
    words += [*(["metric", str(route["metric"])] if "metric" in route else []),
              *(["table", str(route["table"])] if "table" in route else [])]
    return shlex.join(words)


def _rule(policy: object) -> str | None:
    if not isinstance(policy, dict) or set(map(str, policy)) - POLICY_KEYS or "table" not in policy:
        return None
    selectors = {key: _prefix(policy[key]) for key in ("from", "to") if key in policy}
    if not selectors or any(value in (None, "default") for value in selectors.values()):
        return None
    if not all(_number(policy[key]) for key in ("table", "priority") if key in policy):
        return None
    words = ["rule", "add", *[word for key, value in selectors.items() for word in (key, str(value))],
             "table", str(policy["table"]), *(["priority", str(policy["priority"])] if "priority" in policy else [])]
    return shlex.join(words)
