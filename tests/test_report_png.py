"""The report opens in Debian's headless Chromium and the diagram is visible in the PNG it renders."""

from __future__ import annotations

import os
import struct
import zlib
from pathlib import Path

import pytest

from cluster.pipeline import Valid, validate
from cluster.report_html.diagram import RAIL_COLOURS, SPINE_FILL
from cluster.report_html.networks import NETWORK_COLOURS
from cluster.report_html.page import render_report
from cluster.report_html.screenshot import chromium, layout, screenshot


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


def _need_chromium() -> None:
    if chromium() is None:
        if os.environ.get("CI") == "true":
            pytest.fail("chromium missing in CI: it is listed in .ci/apt-packages.txt")
        pytest.skip("Debian chromium is not installed (apt-get install chromium)")


def _colours(png: Path) -> set[tuple[int, int, int]]:
    _, _, rows = decode_png(png.read_bytes())
    colours: set[tuple[int, int, int]] = set()
    for row in rows:
        colours.update(zip(row[0::3], row[1::3], row[2::3], strict=True))
    return colours


@pytest.fixture(scope="module")
def prod_png(tmp_path_factory: pytest.TempPathFactory) -> Path:
    _need_chromium()
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


NETWORK_TITLES = ("GPU fabric", "storage network", "management network", "out-of-band network")


@pytest.mark.slow
@pytest.mark.parametrize("width", [1400, 1920])
@pytest.mark.parametrize("stack", ["superpod", "pods", "examples/converged/Pulumi.converged.yaml"])
def test_the_report_fits_the_window_and_draws_every_network(stack: str, width: int, tmp_path: Path) -> None:
    """At 1,400 and 1,920 px nothing scrolls sideways (the page, and no box of it), every network
    has its drawing at (nearly) 1:1, and the screenshot shows every network's colours. The 64-spine
    `pods` fabric once drew 2,220 px wide in a box that scrolled; every diagram at 1,400 px was 2 px
    wider than its box; only the GPU fabric was drawn."""
    _need_chromium()
    result = validate(stack)
    assert isinstance(result, Valid)
    html = tmp_path / "report.html"
    html.write_text(render_report(result), encoding="utf-8")
    measured = layout(html, width)
    assert measured["viewport"] == width and measured["page"] <= width, measured
    assert measured["sideways"] == [], measured["sideways"]
    shared = result.spec.fabric.shared_with if result.spec.fabric is not None else ()
    expected = [title for title in NETWORK_TITLES if title.split(" ")[0] not in shared]
    assert [svg["label"] for svg in measured["svgs"]] == [f"{result.spec.name} {title}" for title in expected]
    for svg in measured["svgs"]:  # drawn to fit, not shrunk out of legibility
        assert 0.95 * svg["width"] <= svg["drawn"] <= svg["width"], svg
    png = tmp_path / "report.png"
    screenshot(html, png, width, 3200)  # tall enough for the page down to the last diagram
    colours = _colours(png)
    wanted = [SPINE_FILL, *RAIL_COLOURS[:4], *(colour for network, colour in NETWORK_COLOURS.items()
                                              if network not in shared)]
    missing = [colour for colour in wanted if _rgb(colour) not in colours]
    assert not missing, f"{missing} not on screen at {width} px"
