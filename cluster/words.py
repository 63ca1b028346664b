"""Counts in words, as every output writes them: `1 host pool`, `2 tiers`, `8,687 files`."""

from __future__ import annotations

#: Nouns whose plural is not the noun + "s".
IRREGULAR = {"leaf": "leaves"}


def plural(noun: str, count: int) -> str:
    """`noun` as it reads after `count`: leaf -> leaves, spine -> spines, node -> nodes."""
    if count == 1:
        return noun
    head, _, last = noun.rpartition(" ")
    word = IRREGULAR.get(last) or (last + "es" if last.endswith(("s", "sh", "ch", "x")) else last + "s")
    return f"{head} {word}" if head else word


def counted(count: int, noun: str) -> str:
    """`count` with thousands separators and the noun agreeing with it: 1 host pool, 8,687 files."""
    return f"{count:,} {plural(noun, count)}"
