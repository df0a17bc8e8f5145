"""Adding a workload is one module: its chart reaches the built Results page with no other file edited.

The Contributing page's example module is put on the import path (as a contributor's own module
would be, through $BENCHLIB_WORKLOAD_MODULES), measured with `benchlib run`, and the site is built
from that results folder. Nothing in the repository is changed for it. The run and the build are
the session's shared ones (tests/site_builds.py), which the browser tests use too.
"""

from __future__ import annotations

import pytest
from site_builds import git_status

pytestmark = pytest.mark.slow


def test_the_example_workloads_chart_appears_on_the_built_results_page(site_inputs, site_build) -> None:
    run = site_inputs.example_run
    assert run.returncode == 0, run.stdout + run.stderr
    site = site_build("mkdocs")
    page = (site.folder / "benchmarks" / "results" / "index.html").read_text(encoding="utf-8")
    figure = page.split('<figure class="bench-chart" id="chart-example_add"', 1)
    assert len(figure) == 2, "no example_add chart on the Results page"
    assert "Elementwise add throughput" in figure[1].split("</figure>", 1)[0]
    assert "Data behind the elementwise add throughput chart (1 plotted" in figure[1]
    assert git_status() == site_inputs.git_status_before, "the test must not need any file in the repository edited"
