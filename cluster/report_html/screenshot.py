"""Render a report to PNG with headless Chromium (Debian `chromium`): proof that it shows.

    python -m cluster.report_html.screenshot prod docs/report-prod.png [--size 1400x1250]

Runs with a fresh profile in a temporary folder and every network-facing feature off, so the
screenshot depends on the HTML alone.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

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
