"""How long the site takes to build, and what its Results page costs a reader to load.

Builds the site with `mkdocs build --strict` from the committed results (or ``--results DIR``)
into a temporary folder, serves it on 127.0.0.1, loads the Results page in Debian's Chromium and
prints a report: the build's wall time, and the bytes the page transfers (every response's headers
and body), largest first; then the same total for the home page, which has no chart.

    .venv/bin/python benchmarks/site_build.py [--results DIR] [--measure quick]
"""

from __future__ import annotations

import argparse
import functools
import gzip
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import urljoin, urlparse

ROOT = Path(__file__).resolve().parents[1]
PAGE = "benchmarks/results/"
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-quic",
]


class _QuietHandler(SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:
        pass


def build(site_dir: Path, origin: str, results: str | None, measure: str | None) -> tuple[float, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("BENCHLIB_")}
    env |= {"SITE_URL": origin, "NO_MKDOCS_2_WARNING": "1"}
    if results:
        env["BENCHLIB_RESULTS_DIR"] = results
    if measure:
        env["BENCHLIB_MEASURE"] = measure
    started = time.perf_counter()
    run = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "-d", str(site_dir)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
    )
    wall = time.perf_counter() - started
    if run.returncode != 0:
        sys.exit(f"mkdocs build --strict failed:\n{(run.stdout + run.stderr)[-4000:]}")
    return wall, run.stdout + run.stderr


def page_transfer(url: str) -> tuple[list[tuple[str, int, int]], int]:
    """(url, bytes, gzipped body bytes) per response while loading ``url``, and the number of charts.

    The test server sends bodies uncompressed; the gzip column estimates a host that compresses.
    """
    from playwright.sync_api import sync_playwright

    chromium = shutil.which("chromium")
    if chromium is None:
        sys.exit("Chromium is not installed: apt-get install -y chromium")
    responses = []
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium, args=CHROMIUM_ARGS)
        page = browser.new_page()
        page.on("requestfinished", lambda request: responses.append(request))
        page.goto(url, wait_until="networkidle")
        page.wait_for_function(
            "() => [...document.querySelectorAll('figure.bench-chart')]"
            ".every(f => f.classList.contains('bench-chart--live'))"
        )
        charts = page.locator("figure.bench-chart").count()
        sizes = []
        for r in responses:
            body = r.response().body()
            sizes.append((r.url, r.sizes()["responseHeadersSize"] + len(body), len(gzip.compress(body))))
        browser.close()
    return sorted(sizes, key=lambda s: -s[1]), charts


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--results", help="results folder to build from (default: the committed results/)")
    parser.add_argument(
        "--measure", choices=["quick", "standard", "full"], help="also measure this machine, as BENCHLIB_MEASURE does"
    )
    args = parser.parse_args()

    with tempfile.TemporaryDirectory() as tmp:
        site_dir = Path(tmp) / "site"
        server = ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(_QuietHandler, directory=str(site_dir)))
        origin = f"http://127.0.0.1:{server.server_port}/"
        wall, log = build(site_dir, origin, args.results, args.measure)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        try:
            sizes, charts = page_transfer(urljoin(origin, PAGE))
            home, _ = page_transfer(origin)
        finally:
            server.shutdown()
            server.server_close()

    notebook = "executed" if "Converting notebook (execute=True)" in log else "from mkdocs-jupyter's cache"
    total = sum(size for _, size, _ in sizes)
    zipped = sum(z for _, _, z in sizes)
    print("site build")
    measured = f" + this machine ({args.measure})" if args.measure else ""
    print(f"  results:               {args.results or 'committed results/'}{measured}")
    print(f"  mkdocs build --strict: {wall:.1f} s (notebook: {notebook})")
    print(
        f"{PAGE} in Chromium: {charts} chart(s), {len(sizes)} responses, {total:,} bytes "
        f"({total / 2**20:.2f} MiB); bodies gzipped: {zipped:,} bytes"
    )
    print(f"  {'bytes':>10}  {'gzipped':>10}  path")
    for url, size, z in sizes:
        print(f"  {size:>10,}  {z:>10,}  {urlparse(url).path}")
    # For comparison: a page without charts never fetches the Vega bundle.
    print(
        f"home page in Chromium: {len(home)} responses, {sum(s for _, s, _ in home):,} bytes; "
        f"bodies gzipped: {sum(z for _, _, z in home):,} bytes"
    )


if __name__ == "__main__":
    main()
