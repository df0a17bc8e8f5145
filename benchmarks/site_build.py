"""How long the site takes to build, against its two targets, and what its Results page costs a reader to load.

Measured in one run and printed as ratios to their targets (below 1 meets it):

1. a cold ``mkdocs build --strict`` without a measurement, from the committed results (or
   ``--results DIR``), with an empty benchlib cache: target 45 s. The build only reads; what takes
   longer to compute is in the committed tables (`benchlib tables`);
2. README command 1 (install from the lock, then ``BENCHLIB_MEASURE=quick mkdocs build --strict``)
   in a fresh ``git clone`` of this repository's HEAD, with empty package caches (uv's, pip's and
   benchlib's): target 180 s, the quick measurement included. Skip it with ``--no-clone``.

Then it serves the first build on 127.0.0.1, loads the Results page in Debian's Chromium and
prints the bytes the page transfers (every response's headers and body), largest first; then the
same total for the home page, which has no chart. Run it on an idle machine: the targets are for
the 2-core machines CI uses.

    .venv/bin/python benchmarks/site_build.py [--results DIR] [--no-clone]
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
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import urljoin, urlparse

from timed_run import timed_run

ROOT = Path(__file__).resolve().parents[1]
PAGE = "benchmarks/results/"
COLD_BUILD_TARGET_S = 45.0
COMMAND_1_TARGET_S = 180.0
MEASURED_BUILD = "BENCHLIB_MEASURE=quick"
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


def build(site_dir: Path, origin: str, results: str | None, cache: Path) -> float:
    """A cold ``mkdocs build --strict`` without a measurement: benchlib's cache is the empty ``cache``."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("BENCHLIB_")}
    env |= {"SITE_URL": origin, "NO_MKDOCS_2_WARNING": "1", "BENCHLIB_CACHE_DIR": str(cache)}
    if results:
        env["BENCHLIB_RESULTS_DIR"] = results
    command = [sys.executable, "-m", "mkdocs", "build", "--strict", "-d", str(site_dir)]
    wall, _ = timed_run(command, cwd=ROOT, env=env, what="mkdocs build --strict")
    return wall


def command_1() -> tuple[str, str]:
    """README command 1, as the README states it, split into its install and its measured build."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    lines = readme.split("```bash\n", 1)[1].split("```", 1)[0].splitlines()
    command = lines[next(i for i, line in enumerate(lines) if line.startswith("# 1.")) + 1]
    install, separator, rest = command.partition(f" && {MEASURED_BUILD} ")
    if not separator or "mkdocs build --strict" not in rest:
        sys.exit(f"README command 1 no longer ends with `{MEASURED_BUILD} ... mkdocs build --strict`: {command}")
    return install, f"{MEASURED_BUILD} {rest}"


def fresh_clone_command_1(tmp: Path) -> tuple[float, float, str]:
    """(install seconds, build seconds, commit) for README command 1 in a fresh clone with empty caches."""
    clone = tmp / "clone"
    subprocess.run(["git", "clone", "--quiet", str(ROOT), str(clone)], check=True)
    commit = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"], cwd=clone, capture_output=True, text=True, check=True
    ).stdout.strip()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("BENCHLIB_", "UV_", "PIP_", "VIRTUAL_ENV"))}
    env |= {
        "UV_CACHE_DIR": str(tmp / "uv-cache"),
        "PIP_CACHE_DIR": str(tmp / "pip-cache"),
        "BENCHLIB_CACHE_DIR": str(tmp / "benchlib-cache"),
        "NO_MKDOCS_2_WARNING": "1",
    }
    seconds = [
        timed_run(["bash", "-c", part], cwd=clone, env=env, what=f"README command 1 at `{part}`")[0]
        for part in command_1()
    ]
    return seconds[0], seconds[1], commit


def ratio(seconds: float, target: float) -> str:
    verdict = "meets" if seconds <= target else "misses"
    return f"{seconds:.1f} s / {target:.0f} s target = {seconds / target:.2f} ({verdict} it)"


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
    parser.add_argument("--results", help="results folder for the cold build (default: the committed results/)")
    parser.add_argument("--no-clone", action="store_true", help="skip README command 1 in a fresh clone")
    args = parser.parse_args()

    with tempfile.TemporaryDirectory() as tmp:
        site_dir = Path(tmp) / "site"
        server = ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(_QuietHandler, directory=str(site_dir)))
        origin = f"http://127.0.0.1:{server.server_port}/"
        wall = build(site_dir, origin, args.results, Path(tmp) / "benchlib-cache")
        command = None if args.no_clone else fresh_clone_command_1(Path(tmp))
        threading.Thread(target=server.serve_forever, daemon=True).start()
        try:
            sizes, charts = page_transfer(urljoin(origin, PAGE))
            home, _ = page_transfer(origin)
        finally:
            server.shutdown()
            server.server_close()

    total = sum(size for _, size, _ in sizes)
    zipped = sum(z for _, _, z in sizes)
    print("site build")
    print(f"  results: {args.results or 'committed results/'}")
    print(f"  cold mkdocs build --strict, no measurement, empty cache: {ratio(wall, COLD_BUILD_TARGET_S)}")
    if command is None:
        print("  README command 1 in a fresh clone: skipped (--no-clone)")
    else:
        install, build_s, commit = command
        print(
            f"  README command 1 in a fresh clone of {commit}, empty package caches: "
            f"{ratio(install + build_s, COMMAND_1_TARGET_S)}"
        )
        print(f"    install from the lock {install:.1f} s, {MEASURED_BUILD} mkdocs build --strict {build_s:.1f} s")
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
