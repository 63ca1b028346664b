"""Message sizes: `8GiB`, `256MB`, `1.5GB`, `4096` (bytes)."""

from __future__ import annotations

import re

_UNITS = {
    "": 1, "B": 1,
    "KB": 10**3, "MB": 10**6, "GB": 10**9, "TB": 10**12,
    "KIB": 2**10, "MIB": 2**20, "GIB": 2**30, "TIB": 2**40,
    "K": 2**10, "M": 2**20, "G": 2**30,
}
_SIZE = re.compile(r"^\s*(\d+(?:\.\d+)?(?:[eE]\d+)?)\s*([A-Za-z]*)\s*$")
MAX_BYTES = 2**50  # 1 PiB: anything larger is a typo, not a message


def parse_size(text: str) -> int:
    """Bytes in `text`. SI units are powers of ten (MB = 10^6), IEC units powers of two
    (MiB = 2^20); bare K/M/G follow nccl-tests (`-b 8M` means 2^20 x 8). Raises ValueError
    with a message that says what is accepted."""
    match = _SIZE.match(text)
    unit = match.group(2).upper() if match else ""
    if match is None or unit not in _UNITS:
        raise ValueError(f"size {text!r} is not a size: use bytes (4096) or a unit: 256MB, 8GiB, 1.5GB, 64M")
    value = float(match.group(1)) * _UNITS[unit]
    if not 1 <= value <= MAX_BYTES:  # also nan and 1e400 (inf)
        raise ValueError(f"size {text!r} must be between 1 byte and 1 PiB")
    return int(value)


def format_size(size: int) -> str:
    """Shortest exact IEC or SI name for a size, for tables (8GiB, 256MB, 1000B)."""
    for unit, factor in (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10), ("GB", 10**9), ("MB", 10**6), ("KB", 10**3)):
        if size >= factor and size % factor == 0:
            return f"{size // factor}{unit}"
    return f"{size}B"
