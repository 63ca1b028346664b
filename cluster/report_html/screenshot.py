"""Render a report to PNG with headless Chromium (Debian `chromium`): proof that it shows.

    python -m cluster.report_html.screenshot prod docs/report-prod.png [--size 1400x1250]

Runs with a fresh profile in a temporary folder and every network-facing feature off, so the
screenshot depends on the HTML alone. `layout` measures the page as Chromium lays it out at a
window width: whether anything scrolls sideways, and how wide each diagram is drawn.
"""

from __future__ import annotations

import argparse
import html as markup
import json
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync", "--hide-scrollbars",
         "--force-device-scale-factor=1")


def chromium() -> str | None:
    """The Chromium binary, or None when it is not installed."""
    for name in ("chromium", "chromium-browser", "google-chrome"):
        found = shutil.which(name)
        if found:
            return found
    return None


def screenshot(html: Path, png: Path, width: int = 1400, height: int = 1250, timeout: float = 120) -> None:
    """Write a PNG of `html` at width x height CSS pixels; raises RuntimeError when Chromium fails."""
    binary = chromium()
    if binary is None:
        raise RuntimeError("chromium is not installed (apt-get install chromium)")
    with tempfile.TemporaryDirectory(prefix="gpu-cluster-chromium-") as profile:
        command = [binary, *FLAGS, f"--user-data-dir={profile}", f"--screenshot={png.resolve()}",
                   f"--window-size={width},{height}", html.resolve().as_uri()]
        done = subprocess.run(command, capture_output=True, text=True, timeout=timeout, check=False)
    if done.returncode != 0 or not png.exists():
        raise RuntimeError(f"chromium exited {done.returncode}: {done.stderr.strip()[-500:]}")


# Appended to a copy of the page: after layout, the measures as JSON in one <pre> that --dump-dom prints.
MEASURE = """<script>(() => {
  const sideways = [...document.querySelectorAll("body *")]
    .filter(e => ["auto", "scroll"].includes(getComputedStyle(e).overflowX) && e.scrollWidth > e.clientWidth)
    .map(e => `${e.tagName.toLowerCase()}.${e.className}: ${e.scrollWidth} > ${e.clientWidth}`);
  const svgs = [...document.querySelectorAll("svg")].map(s => ({label: s.getAttribute("aria-label"),
    drawn: s.getBoundingClientRect().width, width: s.viewBox.baseVal.width}));
  const out = document.createElement("pre");
  out.id = "gpu-cluster-layout";
  out.textContent = JSON.stringify({viewport: innerWidth, page: document.documentElement.scrollWidth,
    sideways: sideways, svgs: svgs});
  document.body.appendChild(out);
})();</script>"""
MEASURED = re.compile(r'<pre id="gpu-cluster-layout">(.*?)</pre>', re.DOTALL)


def layout(html: Path, width: int, height: int = 900, timeout: float = 120) -> dict[str, Any]:
    """How Chromium lays out `html` in a window `width` CSS pixels wide: {"viewport", "page" (the
    document's scroll width: more than the viewport is a sideways scroll), "sideways" (boxes that
    scroll sideways), "svgs" ([{"label", "drawn" px, "width" of its viewBox}])}."""
    binary = chromium()
    if binary is None:
        raise RuntimeError("chromium is not installed (apt-get install chromium)")
    text = html.read_text(encoding="utf-8")
    with tempfile.TemporaryDirectory(prefix="gpu-cluster-chromium-") as profile:
        measured = Path(profile) / "measured.html"
        measured.write_text(text.replace("</body>", MEASURE + "</body>", 1), encoding="utf-8")
        command = [binary, *FLAGS, f"--user-data-dir={profile}/profile", "--dump-dom", f"--window-size={width},{height}",
                   measured.as_uri()]
        done = subprocess.run(command, capture_output=True, text=True, timeout=timeout, check=False)
    found = MEASURED.findall(done.stdout)
    if done.returncode != 0 or not found:
        raise RuntimeError(f"chromium exited {done.returncode}: {done.stderr.strip()[-500:]}")
    data: dict[str, Any] = json.loads(markup.unescape(found[-1]))
    return data


def main(argv: list[str] | None = None) -> int:
    from cluster.pipeline import Valid, validate
    from cluster.report_html.page import render_report

    parser = argparse.ArgumentParser(prog="python -m cluster.report_html.screenshot", description=__doc__)
    parser.add_argument("stack")
    parser.add_argument("png", type=Path)
    parser.add_argument("--size", default="1400x1250", help="WIDTHxHEIGHT in CSS pixels")
    args = parser.parse_args(argv)
    width, height = (int(part) for part in args.size.split("x"))
    result = validate(args.stack)
    if not isinstance(result, Valid):
        print(f"{args.stack}: cannot be read as a design", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory() as folder:
        html = Path(folder) / "report.html"
        html.write_text(render_report(result), encoding="utf-8")
        screenshot(html, args.png, width, height)
    print(f"wrote {args.png}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
