"""The report opens in Debian's headless Chromium and the diagram is visible in the PNG it renders."""

from __future__ import annotations

import os
import struct
import zlib
from pathlib import Path

import pytest

from cluster.pipeline import validate
from cluster.report_html.diagram import RAIL_COLOURS, SPINE_FILL
from cluster.report_html.page import render_report
from cluster.report_html.screenshot import chromium, screenshot


def _paeth(left: int, up: int, corner: int) -> int:
    guess = left + up - corner
    to_left, to_up, to_corner = abs(guess - left), abs(guess - up), abs(guess - corner)
    if to_left <= to_up and to_left <= to_corner:
        return left
    return up if to_up <= to_corner else corner


def decode_png(data: bytes) -> tuple[int, int, list[bytes]]:
    """(width, height, rows of RGB(A) bytes) of an 8-bit, non-interlaced RGB or RGBA PNG."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    position, chunks, header = 8, [], b""
    while position < len(data):
        (length,) = struct.unpack(">I", data[position:position + 4])
        kind, body = data[position + 4:position + 8], data[position + 8:position + 8 + length]
        position += 12 + length
        if kind == b"IHDR":
            header = body
        elif kind == b"IDAT":
            chunks.append(body)
    width, height, depth, colour, _, _, interlace = struct.unpack(">IIBBBBB", header)
    assert depth == 8 and colour in (2, 6) and interlace == 0, (depth, colour, interlace)
    channels = 3 if colour == 2 else 4
    stride = width * channels
    raw = zlib.decompress(b"".join(chunks))
    rows: list[bytes] = []
    previous = bytearray(stride)
    for y in range(height):
        start = y * (stride + 1)
        kind, line = raw[start], bytearray(raw[start + 1:start + 1 + stride])
        if kind == 1:
            for i in range(channels, stride):
                line[i] = (line[i] + line[i - channels]) & 0xFF
        elif kind == 2:
            line = bytearray((a + b) & 0xFF for a, b in zip(line, previous, strict=True))
        elif kind == 3:
            for i in range(stride):
                left = line[i - channels] if i >= channels else 0
                line[i] = (line[i] + ((left + previous[i]) >> 1)) & 0xFF
        elif kind == 4:
            for i in range(stride):
                left = line[i - channels] if i >= channels else 0
                corner = previous[i - channels] if i >= channels else 0
                line[i] = (line[i] + _paeth(left, previous[i], corner)) & 0xFF
        rows.append(bytes(line))
        previous = line
    return width, height, [bytes(row) for row in rows] if channels == 3 else [
        bytes(value for index, value in enumerate(row) if index % 4 != 3) for row in rows]


def _rgb(hex_colour: str) -> tuple[int, int, int]:
    value = int(hex_colour.lstrip("#"), 16)
    return value >> 16, (value >> 8) & 0xFF, value & 0xFF


@pytest.fixture(scope="module")
def prod_png(tmp_path_factory: pytest.TempPathFactory) -> Path:
    if chromium() is None:
        if os.environ.get("CI") == "true":
            pytest.fail("chromium missing in CI: it is listed in .ci/apt-packages.txt")
        pytest.skip("Debian chromium is not installed (apt-get install chromium)")
    folder = tmp_path_factory.mktemp("report")
    result = validate("prod")
    html, png = folder / "prod.html", folder / "prod.png"
    html.write_text(render_report(result), encoding="utf-8")
    screenshot(html, png, 1400, 900)
    return png


@pytest.mark.slow
def test_chromium_renders_the_report_with_a_visible_diagram(prod_png: Path) -> None:
    width, height, rows = decode_png(prod_png.read_bytes())
    assert (width, height) == (1400, 900)
    assert rows[0][:3] == bytes(_rgb("#f8f9fa"))  # the page background, top left
    colours: set[tuple[int, int, int]] = set()
    for row in rows:
        colours.update(zip(row[0::3], row[1::3], row[2::3], strict=True))
    assert len(colours) > 50, f"only {len(colours)} colours: a blank page?"
    # Leaf boxes are solid rail colours and spines solid grey: seen only if the SVG was drawn.
    for colour in (*RAIL_COLOURS, SPINE_FILL):
        assert _rgb(colour) in colours, f"{colour} not on screen: the diagram is not visible"


def test_png_decoder_reads_a_known_image() -> None:
    """A 2 x 2 RGB image written by hand with Sub and Up filters decodes to its pixels."""
    pixels = [bytes([255, 0, 0, 0, 255, 0]), bytes([0, 0, 255, 255, 255, 255])]
    sub = bytes([1, 255, 0, 0, (0 - 255) & 0xFF, 255, 0])
    up = bytes([2, *(((b - a) & 0xFF) for a, b in zip(pixels[0], pixels[1], strict=True))])

    def chunk(kind: bytes, body: bytes) -> bytes:
        return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))

    data = (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", 2, 2, 8, 2, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(sub + up)) + chunk(b"IEND", b""))
    assert decode_png(data) == (2, 2, pixels)
