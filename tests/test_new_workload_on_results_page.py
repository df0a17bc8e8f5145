"""Adding a workload is one module: its chart reaches the built Results page with no other file edited.

The Contributing page's example module is put on the import path (as a contributor's own module
would be, through $BENCHLIB_WORKLOAD_MODULES), measured with `benchlib run`, and the site is built
from that results folder. Nothing in the repository is changed for it.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SNIPPET = ROOT / "snippets" / "contributing" / "example_workload.py"


def test_the_example_workloads_chart_appears_on_the_built_results_page(tmp_path: Path) -> None:
    modules, results, site = tmp_path / "modules", tmp_path / "results", tmp_path / "site"
    modules.mkdir()
    shutil.copy(SNIPPET, modules / "example_workload.py")
    env = {
        **os.environ,
        "PYTHONPATH": str(modules),
        "BENCHLIB_WORKLOAD_MODULES": "example_workload",
        "BENCHLIB_RESULTS_DIR": str(results),
        "BENCHLIB_MEASURE": "0",
        "NO_MKDOCS_2_WARNING": "1",
    }
    before = subprocess.run(["git", "status", "--porcelain"], cwd=ROOT, capture_output=True, text=True).stdout
    run = subprocess.run(
        [
            str(Path(sys.executable).parent / "benchlib"),
            "run",
            "--only",
            "example_add",
            "--device",
            "cpu",
            "--out",
            str(results),
        ],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert run.returncode == 0, run.stdout + run.stderr
    build = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "-d", str(site)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert build.returncode == 0, (build.stdout + build.stderr)[-4000:]
    page = (site / "benchmarks" / "results" / "index.html").read_text(encoding="utf-8")
    figure = page.split('<figure class="bench-chart" id="chart-example_add"', 1)
    assert len(figure) == 2, "no example_add chart on the Results page"
    assert "Elementwise add throughput" in figure[1].split("</figure>", 1)[0]
    assert "Data behind the elementwise add throughput chart (1 plotted" in figure[1]
    after = subprocess.run(["git", "status", "--porcelain"], cwd=ROOT, capture_output=True, text=True).stdout
    assert after == before, "the test must not need any file in the repository edited"
