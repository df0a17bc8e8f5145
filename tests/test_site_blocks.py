"""benchlib.site: the chart blocks pages print, their data sources, and the methodology blocks."""

from __future__ import annotations

import html
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import markupsafe
import pytest
from glossary_text import without_tooltips
from site_samples import CPU, HOSTILE, HOSTILE_URL, REPORTED, record, results, write_samples

import benchlib
from benchlib.core.paths import REFERENCE_ENV, REPORTED_ENV, RESULTS_ENV
from benchlib.results.schema import Provenance
from benchlib.results.store import ResultsError, write_results
from benchlib.site import chart, methodology, notebook, sources
from benchlib.site.vendor import bundle_file, bundle_text

ROOT = Path(__file__).resolve().parents[1]
SAMPLED = ("matmul", "conv2d", "bandwidth")  # the charts site_samples has records for


@pytest.fixture
def results_dir(tmp_path, monkeypatch) -> Path:
    folder = write_samples(tmp_path / "results")
    monkeypatch.setenv(RESULTS_ENV, str(folder))
    monkeypatch.setenv(REPORTED_ENV, str(folder / "reported"))
    monkeypatch.delenv(sources.MEASURE_ENV, raising=False)
    return folder


def _spec(block: str) -> dict:
    match = re.search(r'<div class="bench-chart__view" [^>]*data-spec="([^"]*)"', block)
    assert match, "no spec in the chart block"
    return json.loads(html.unescape(match.group(1)))


@pytest.mark.parametrize("workload", SAMPLED)
def test_chart_block_has_view_fallback_spec_caption_and_table(results_dir, workload):
    block = chart(workload)
    assert block.startswith(f'<figure class="bench-chart" id="chart-{workload}"')
    assert '<div class="bench-chart__view" role="img" aria-label="' in block
    fallback = block.split('<div class="bench-chart__fallback"', 1)[1]
    assert fallback.split(">", 1)[1].lstrip().startswith("<svg")
    assert _spec(block)["width"] == "container"
    caption = block.split("<figcaption>", 1)[1].split("</figcaption>", 1)[0]
    assert (
        f"<strong>Measured</strong> with benchlib 0.1.0 (methodology {benchlib.METHODOLOGY_VERSION}), "
        "quick suite, torch 2.5.0, Python 3.11.7:"
    ) in caption
    assert "local · Test CPU (CPU only) (2026-11-01)" in caption
    # The data table, kept out of the search index (a build's measurements could break it).
    assert '<details class="note bench-chart__data" data-search-exclude>' in block and "<table>" in block


def test_reported_source_is_marked_linked_dated_and_escaped(results_dir):
    block = chart("matmul")
    caption = block.split("<figcaption>", 1)[1].split("</figcaption>", 1)[0]
    assert "<strong>Reported</strong> by <a href=" in caption
    assert re.search(
        r'as of 2020-02-01<span class="fg-badge fg-badge--stale"[^>]*>as of 2020-02, may be out of date</span>: Old GPU',
        caption,
    )
    assert f"<summary>The source's setting</summary><p>reported context {html.escape(HOSTILE)}</p>" in caption
    assert f'href="{html.escape(HOSTILE_URL)}"' in caption
    assert HOSTILE not in block  # neither in HTML, caption, table, SVG nor the JSON spec
    assert html.escape(HOSTILE) in block
    assert "<script" not in block
    assert any(HOSTILE in d["subject"] for d in next(iter(_spec(block)["datasets"].values())))


def test_only_http_links_become_links(results_dir):
    bad = results(
        REPORTED.model_copy(update={"id": "reported-js"}),
        [record("matmul", 1.0, dtype="fp32")],
        provenance=Provenance(kind="reported", source_url="javascript:alert(1)", as_of="2020-01-01"),
    )
    write_results(bad, results_dir / "reported" / "js.json")
    assert "javascript:" not in chart("matmul").split("<figcaption>", 1)[1]


def test_invalid_and_failed_measurements_are_noted_not_plotted(results_dir):
    block = chart("matmul")
    assert "1 invalid measurement(s) left out of the chart" in block
    assert "90 TFLOPS is 141% of the known peak 64" in block
    plotted = next(iter(_spec(block)["datasets"].values()))
    assert all(d["value"] != 90.0 for d in plotted)
    conv = chart("conv2d")
    assert "1 measurement(s) produced no number" in conv
    assert "<td>oom: conv2d: out of memory</td>" in conv


@pytest.mark.parametrize("make_dir", [False, True], ids=["missing", "empty"])
def test_no_results_gives_a_no_measurements_block(tmp_path, monkeypatch, make_dir):
    folder = tmp_path / "results"
    if make_dir:
        folder.mkdir()
    monkeypatch.setenv(RESULTS_ENV, str(folder))
    monkeypatch.setenv(REPORTED_ENV, str(folder / "reported"))
    monkeypatch.setenv(REFERENCE_ENV, str(folder / "reference"))  # nor the score's reference run
    monkeypatch.delenv(sources.MEASURE_ENV, raising=False)
    for workload in SAMPLED:
        block = chart(workload)
        assert "No measurements yet" in block and "bench-chart--empty" in block
        assert "benchlib run --suite quick" in block and "BENCHLIB_MEASURE=quick" in block
        assert "<figure" not in block


def test_invalid_results_file_raises_naming_the_file(results_dir, monkeypatch):
    monkeypatch.delenv("MKDOCS_CONFIG_DIR", raising=False)
    broken = results_dir / CPU.id / "broken.json"
    broken.write_text(json.dumps({"run_id": "x"}), encoding="utf-8")
    with pytest.raises(ResultsError) as info:
        chart("matmul")
    assert str(broken) in str(info.value) and "field 'created'" in str(info.value)


def test_in_a_build_an_invalid_results_file_stops_it_with_one_message(results_dir, monkeypatch, tmp_path):
    """A SystemExit gets past markdown-exec, which would log a traceback for every block."""
    from benchlib.site.buying_guide import measured_results

    monkeypatch.setenv("MKDOCS_CONFIG_DIR", str(tmp_path))  # what markdown-exec sets while MkDocs builds
    broken = results_dir / CPU.id / "broken.json"
    broken.write_text(json.dumps({"run_id": "x"}), encoding="utf-8")
    for block in (lambda: chart("matmul"), measured_results):
        with pytest.raises(SystemExit) as info:
            block()
        assert not isinstance(info.value, Exception), "markdown-exec catches every Exception"
        message = str(info.value)
        assert message.startswith(f"error: {broken} is not a valid results file: field 'created'")
        assert "move it out of the results folder" in message


def test_build_machine_rows_are_highlighted(results_dir, monkeypatch):
    build_file = results_dir / CPU.id / "cpu-run.json"
    fresh = results_dir.parent / "cache" / "fresh.json"
    fresh.parent.mkdir()
    build_file.rename(fresh)
    monkeypatch.setenv(sources.MEASURE_ENV, "quick")
    monkeypatch.setattr(notebook, "this_machine", lambda suite: fresh)
    block = chart("matmul")
    assert "★ local · Test CPU (CPU only) (built this site)" in block
    assert "★ local · Test CPU (CPU only) (built this site) (2026-11-01, while this site was built)" in block
    assert "★ marks the machine that built this site" in block


def test_measure_env_rejects_unknown_suites(monkeypatch):
    monkeypatch.setenv(sources.MEASURE_ENV, "fast")
    with pytest.raises(ValueError, match="BENCHLIB_MEASURE='fast': expected one of quick, standard, full"):
        sources.requested_suite()
    monkeypatch.setenv(sources.MEASURE_ENV, "off")
    assert sources.requested_suite() is None


def test_build_measurement_is_cached_per_machine_and_version(tmp_path, monkeypatch):
    import benchlib.measure.runner
    import benchlib.probe
    from benchlib.measure import build_machine

    calls = []

    def fake_run_suite(workloads, *, suite, device, machine, out_dir, **options):
        calls.append(suite)
        data = results(machine, [record("matmul", 1.0, "cpu", dtype="fp32")])
        path = write_results(data, out_dir / machine.id / "run.json")
        return benchlib.measure.runner.RunOutcome(path=path, results=results(machine, []), wall_s=0.0)

    monkeypatch.setattr(benchlib.probe, "probe_machine", lambda results_dir=None: CPU)
    monkeypatch.setattr(benchlib.measure.runner, "run_suite", fake_run_suite)
    monkeypatch.setattr(benchlib.measure.runner, "select_workloads", lambda suite: [])
    build_machine.build_measurement.cache_clear()
    first = build_machine.build_measurement("quick", tmp_path)
    assert first.parent == tmp_path / build_machine.cache_key("quick") / CPU.id
    key = f"benchlib-{benchlib.__version__}-methodology-{benchlib.METHODOLOGY_VERSION}-quick"
    assert build_machine.cache_key("quick") == key
    build_machine.build_measurement.cache_clear()  # a new process (mkdocs serve restarted) finds the file

    def no_full_probe(results_dir=None):
        raise AssertionError("a rebuild on known hardware must not probe (and import torch) again")

    monkeypatch.setattr(benchlib.probe, "probe_machine", no_full_probe)
    assert build_machine.build_measurement("quick", tmp_path) == first
    assert calls == ["quick"]
    build_machine.build_measurement.cache_clear()


def test_methodology_blocks_come_from_the_code():
    from benchlib.core.timing import NOISE_THRESHOLD
    from benchlib.results.plausibility import PEAK_TOLERANCE
    from benchlib.workloads import all_workloads

    assert f"methodology version <strong>{benchlib.METHODOLOGY_VERSION}</strong>" in methodology.versions()
    checks = methodology.check_thresholds()
    assert f"{NOISE_THRESHOLD:.0%}" in checks and f"{PEAK_TOLERANCE - 1:.0%}" in checks
    table = methodology.timer_table()
    assert "<td><code>noise_threshold</code></td>" in table and "<td><code>warmup_s</code></td>" in table
    workloads = without_tooltips(methodology.workloads_table())
    params = methodology.suite_params_table()
    for name, w in all_workloads().items():
        assert (
            f"<td><code>{name}</code></td><td>{w.framework}</td><td>{markupsafe.escape(w.description)}</td>"
            in workloads
        )
        for suite in w.suites:
            assert f"<td><code>{name}</code></td><td><code>{suite}</code></td>" in params
    sizes = ", ".join(map(str, all_workloads()["matmul"].params("quick")["sizes"]))
    quick = params.split("<td><code>matmul</code></td><td><code>quick</code></td>", 1)[1].split("</tr>", 1)[0]
    assert f"<code>sizes</code> {sizes}" in quick


def test_methodology_blocks_escape_what_they_show():
    line = methodology.params_line({"shape": "<script>alert(1)</script>", "timer": {"max_time_s": 2.0}})
    assert "<script>" not in line and "&lt;script&gt;alert(1)&lt;/script&gt;" in line
    assert "<code>max_time_s</code> 2.0 s" in line


def test_vendored_vega_bundle_matches_installed_vl_convert():
    assert bundle_file().read_text(encoding="utf-8") == bundle_text(), "run: python -m benchlib.site.vendor"


def test_notebook_installs_only_where_benchlib_is_missing_and_has_no_outputs():
    nb = json.loads((ROOT / "docs" / "notebooks" / "run-benchlib.ipynb").read_text(encoding="utf-8"))
    code = ["".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "code"]
    install = next(c for c in code if "%pip install" in c)
    assert install.startswith('import importlib.util\n\nif importlib.util.find_spec("benchlib") is None:\n')
    assert all(not c.get("outputs") for c in nb["cells"] if c["cell_type"] == "code")
    assert any('select_workloads("quick")' in c and "run_suite(" in c for c in code)


@pytest.mark.slow
def test_strict_build_fails_on_an_invalid_results_file_and_names_it(tmp_path):
    broken = tmp_path / "results" / "m" / "broken.json"
    broken.parent.mkdir(parents=True)
    broken.write_text("{not json", encoding="utf-8")
    env = {**os.environ, RESULTS_ENV: str(broken.parent.parent), "NO_MKDOCS_2_WARNING": "1"}
    env.pop(sources.MEASURE_ENV, None)
    run = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "-d", str(tmp_path / "site")],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert run.returncode != 0
    output = run.stdout + run.stderr
    assert f"error: {broken} is not a valid results file: not valid JSON" in output
    assert output.count(str(broken)) == 2, "one message (which names the file twice), not one per block"
    assert "Traceback" not in output


def test_a_control_character_in_a_label_does_not_abort_the_build():
    """vl-convert aborts the process on U+0004 in text; labels from results files are cleaned first."""
    import altair as alt
    import pandas as pd

    from benchlib.site.figures import static_svg

    frame = pd.DataFrame({"machine": ["Colab · T4 \x04 \x1b[31m"], "value": [1.0]})
    spec = alt.Chart(frame).mark_bar().encode(x="value:Q", y="machine:N").to_dict(validate=True)
    html = static_svg(spec)
    assert "<svg" in html and "Colab · T4" in html
