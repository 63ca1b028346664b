"""Registries of folders: a package whose sub-packages each define one record (a switch dialect's
`PLATFORM`, a cloud's `CLOUD`), found by scanning the package, so adding one is adding a folder."""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Iterable, Mapping
from types import MappingProxyType
from typing import Protocol, TypeVar


class Named(Protocol):
    @property
    def name(self) -> str: ...


Record = TypeVar("Record", bound=Named)


def registered(package: str, path: Iterable[str], attribute: str, kind: type[Record]) -> Mapping[str, Record]:
    """{record.name: record}, sorted by name, of every sub-package of `package` (its `__path__`
    `path`) whose `attribute` is a `kind`."""
    found: dict[str, Record] = {}
    for module in pkgutil.iter_modules(path):
        candidate = getattr(importlib.import_module(f"{package}.{module.name}"), attribute, None)
        if module.ispkg and isinstance(candidate, kind):
            found[candidate.name] = candidate
    return MappingProxyType(dict(sorted(found.items())))
