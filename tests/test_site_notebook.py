"""The notebook page: a notebook rendered as Markdown at build time, the same for MkDocs and Zensical."""

from __future__ import annotations

import ast
import re
import tempfile
import threading
from pathlib import Path

import nbformat
import pytest
import yaml
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook, new_output
from site_samples import CPU, GPU, HOSTILE, record, results

from benchlib.core import paths
from benchlib.measure.build_machine import build_measurement
from benchlib.results.schema import FAILED_STATUSES, Machine, Software
from benchlib.results.store import read_results, write_results
from benchlib.site import notebook as notebook_page
from benchlib.site import sources
from benchlib.site.notebook import (
    MEASURING_NOTEBOOK,
    RESULT_COLUMNS,
    SAMPLE_METADATA,
    SAMPLE_RESULTS,
    NotebookError,
    NotebookStopsTheBuild,
    _stop,
    notebook_markdown,
    notebook_to_markdown,
    run_notebook,
)
from benchlib.site.notebook_sample import sample_run

ROOT = Path(__file__).resolve().parents[1]
PAGE = ROOT / "docs" / "notebooks" / "run-benchlib.md"
NOTEBOOK = "notebooks/run-benchlib.ipynb"
PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="
DATAFRAME = (
    "<div>\n<style scoped>\n    .dataframe tbody tr th { vertical-align: top; }\n\n</style>\n"
    '<table border="1" class="dataframe">\n  <tr><th>a</th></tr>\n\n  <tr><td>1</td></tr>\n</table>\n</div>'
)


def config() -> dict:
    """mkdocs.yml with each !ENV as its fallback and each Python name as its text."""

    class Loader(yaml.SafeLoader):
        pass

    Loader.add_constructor("!ENV", lambda loader, node: loader.construct_sequence(node)[-1])
    Loader.add_multi_constructor("tag:yaml.org,2002:python/name:", lambda loader, suffix, node: suffix)
    return yaml.load((ROOT / "mkdocs.yml").read_text(encoding="utf-8"), Loader=Loader)


def write_notebook(path: Path, *cells) -> Path:
    nb = new_notebook(cells=list(cells))
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    path.write_text(nbformat.writes(nb), encoding="utf-8")
    return path


def test_cells_and_outputs_become_the_pages_markdown_in_order():
    code = new_code_cell("print('```')", outputs=[new_output("stream", name="stdout", text="\x1b[31m```\x1b[0m\n")])
    table = new_code_cell(
        "df", outputs=[new_output("execute_result", data={"text/html": DATAFRAME, "text/plain": "a 1"})]
    )
    image = new_code_cell(
        "plot()", outputs=[new_output("display_data", data={"image/png": PNG, "text/plain": "<Figure>"})]
    )
    plain = new_code_cell("1 + 1", outputs=[new_output("execute_result", data={"text/plain": "2"})])
    nb = new_notebook(
        cells=[new_markdown_cell("# Title\n\nSome *prose*."), code, table, image, plain, new_code_cell("   ")]
    )

    markdown = notebook_to_markdown(nb, Path("docs/x.ipynb"))

    assert markdown.startswith("# Title\n\nSome *prose*.\n\n")
    # A fence longer than any run of backticks in the code or its output; colour codes left out.
    assert "````python\nprint('```')\n````\n\n" in markdown
    assert "````text\n```\n````" in markdown
    assert (
        '<div class="notebook-output" data-search-exclude>\n<div>\n<table>\n  <tr><th>a</th></tr>\n\n  <tr><td>1</td></tr>'
        in markdown
    )
    assert "dataframe" not in markdown and "<style" not in markdown
    assert f"![output](data:image/png;base64,{PNG})" in markdown
    assert "```python\n1 + 1\n```" in markdown and "```text\n2\n```" in markdown
    assert len(re.findall(r"^`{3,}python$", markdown, re.M)) == 4, "an empty code cell shows nothing"


def test_an_output_the_page_cannot_show_stops_the_build_naming_the_cell():
    widget = new_code_cell("w", outputs=[new_output("display_data", data={"application/json": {"a": 1}})])
    nb = new_notebook(cells=[new_markdown_cell("# T"), widget])
    with pytest.raises(NotebookStopsTheBuild) as stopped:
        notebook_to_markdown(nb, Path("docs/x.ipynb"))
    message = str(stopped.value)
    assert message.startswith("error: docs/x.ipynb: cell 2 has an output of kind application/json")
    assert "text/plain" in message


def test_under_mkdocs_serve_an_error_is_shown_rather_than_ending_the_rebuild_thread(monkeypatch):
    monkeypatch.setenv("MKDOCS_CONFIG_DIR", str(ROOT))
    raised: list[BaseException] = []

    def render() -> None:
        try:
            _stop("error: x")
        except BaseException as exc:  # noqa: BLE001 - the test records what a thread would see
            raised.append(exc)

    thread = threading.Thread(target=render)
    thread.start()
    thread.join()
    assert type(raised[0]) is NotebookError
    with pytest.raises(NotebookStopsTheBuild):  # a build's main thread
        _stop("error: x")


# A measuring notebook in miniature: it records each run and the folder it ran in (in the project's
# root), and writes a complete results file where $BENCHLIB_RESULTS_DIR says, as the real one's run cell does.
MEASURING_CELL = """import os
from datetime import datetime, timezone
from pathlib import Path
from benchlib.results.schema import Machine, ResultsFile, Software
from benchlib.results.store import write_results
open(Path(os.environ['MKDOCS_CONFIG_DIR']) / 'runs.txt', 'a').write(os.getcwd() + '\\n')
print('the build machine ran this')
out = Path(os.environ['BENCHLIB_RESULTS_DIR']) / 'test-machine' / 'run.json'
write_results(ResultsFile(run_id='run', created=datetime.now(timezone.utc), benchlib_version='0.1.0',
    methodology_version='1', suite='quick', complete=True, machine=Machine(id='test-machine', label='Test',
    software=Software(python='3.11', benchlib='0.1.0'))), out)
"""


@pytest.fixture
def project(tmp_path, monkeypatch) -> Path:
    """A project root of its own (its measuring notebook under docs/notebooks/, an empty results
    folder), with a cache of its own."""
    (tmp_path / "docs" / "notebooks").mkdir(parents=True)
    (tmp_path / "results").mkdir()
    monkeypatch.setenv("MKDOCS_CONFIG_DIR", str(tmp_path))
    monkeypatch.setenv("BENCHLIB_CACHE_DIR", str(tmp_path / "cache"))
    for variable in (paths.RESULTS_ENV, paths.REPORTED_ENV, sources.MEASURE_ENV):
        monkeypatch.delenv(variable, raising=False)
    build_measurement.cache_clear()
    yield tmp_path
    build_measurement.cache_clear()


def results_cell(source: str = "df = load(outcome.path)\ndf[['workload']]"):
    return new_code_cell(source, metadata={SAMPLE_METADATA: {"sample": SAMPLE_RESULTS}})


@pytest.mark.slow
def test_the_notebook_measures_this_machine_in_the_temporary_folder_once_until_it_changes(project, monkeypatch):
    notebook = write_notebook(project / MEASURING_NOTEBOOK, new_code_cell(MEASURING_CELL))
    runs = project / "runs.txt"

    first = notebook_page.this_machine("quick")
    assert read_results(first).suite == "quick"
    # The kernel worked in the temporary folder: nothing the cells write lands in the checkout.
    assert runs.read_text() == f"{tempfile.gettempdir()}\n"
    build_measurement.cache_clear()  # a new build process finds the run
    assert notebook_page.this_machine("quick") == first
    assert len(runs.read_text().splitlines()) == 1, "the second build used the cached run"

    write_notebook(notebook, new_code_cell(MEASURING_CELL), new_markdown_cell("Changed."))
    build_measurement.cache_clear()
    notebook_page.this_machine("quick")
    assert len(runs.read_text().splitlines()) == 2
    kept = list((project / "cache" / "build-measurement").glob("notebook-*"))
    assert len(kept) == 1, "the run of the old notebook was dropped"


@pytest.mark.slow
def test_with_a_measurement_the_page_shows_the_committed_gpu_run_not_the_builds(project, monkeypatch):
    shown = results_cell("import benchlib\ndf = benchlib.load_results(out)\ndf[['workload']]")
    write_notebook(project / MEASURING_NOTEBOOK, new_markdown_cell("# Run"), new_code_cell(MEASURING_CELL), shown)
    committed = project / "results" / GPU.id / "gpu-run.json"
    write_results(results(GPU, [record("matmul", 4.0, dtype="fp32")], suite="standard"), committed)
    monkeypatch.setenv(sources.MEASURE_ENV, "quick")
    page = notebook_markdown(MEASURING_NOTEBOOK, sample_run())
    assert "```text" not in page, "no output of the build's own run (it printed a line)"
    assert f"the standard suite on {GPU.label}, run on 2026-11-01" in page
    assert f"committed as <code>results/{GPU.id}/gpu-run.json</code>" in page
    from benchlib.site.data import site_data

    assert site_data().build_files == frozenset({str(notebook_page.this_machine("quick"))})
    assert len((project / "runs.txt").read_text().splitlines()) == 1, "the suite ran once for the build"


def test_without_a_measurement_the_page_shows_the_committed_gpu_run_and_runs_nothing(monkeypatch):
    monkeypatch.delenv(sources.MEASURE_ENV, raising=False)

    def no_run(*args, **kwargs):
        raise AssertionError("a build without BENCHLIB_MEASURE runs no notebook")

    monkeypatch.setattr(notebook_page, "run_notebook", no_run)
    page = notebook_markdown(MEASURING_NOTEBOOK, sample_run())
    assert page.startswith("# Run benchlib\n\n")
    assert "```python\nimport benchlib\nfrom benchlib.probe import machine_table, probe_machine" in page
    # One output: the results cell's table of the committed run, labelled; nothing of this machine.
    sample = read_results(sample_run())
    assert sample.machine.accelerators.nvidia, "a GPU run, as a reader makes in Colab or Kaggle"
    label = f"Sample output: the {sample.suite} suite on {sample.machine.label}, run on {sample.created:%Y-%m-%d} ("
    assert label in page and f"benchlib {sample.machine.software.benchlib}" in page
    assert page.count('<div class="notebook-output"') == 2 and "```text" not in page
    table = page.split(label, 1)[1]
    assert "<th>device_name</th>" in table and f"<td>{sample.measurements[0].device_name}</td>" in table
    assert "/tmp" not in page and "kernel" not in page


def test_the_sample_is_a_committed_gpu_run_the_notebooks_suite_first(tmp_path, monkeypatch):
    monkeypatch.setenv(paths.RESULTS_ENV, str(tmp_path))
    monkeypatch.setenv(paths.REPORTED_ENV, str(tmp_path / "reported"))
    monkeypatch.delenv(sources.MEASURE_ENV, raising=False)

    def run(name: str, machine: Machine, workloads: list[str], device: str = "cuda", **fields) -> Path:
        records = [record(w, 1.0, device, dtype="fp32") for w in workloads]
        path = tmp_path / machine.id / f"{name}.json"
        write_results(results(machine, records, run_id=name, **fields), path)
        return path

    run("cpu", CPU, ["matmul", "conv2d", "bandwidth"], "cpu", suite="standard")
    run("search", GPU, ["matmul", "conv2d", "bandwidth"], suite="max-batch")
    assert sample_run() is None, "no GPU run of a suite: the page shows the cells alone"
    run("two", GPU, ["matmul", "conv2d"], suite="standard")
    most = run("three", GPU, ["matmul", "conv2d", "bandwidth"], suite="standard")
    assert sample_run() == most
    quick = run("quick", GPU, ["matmul"], suite="quick")
    assert sample_run() == quick, "a run of the suite the notebook runs comes first"


def test_the_sample_label_and_table_are_escaped_and_name_no_local_folder(tmp_path, monkeypatch):
    hostile = Machine(id="local-hostile-gpu", label=f"Rig {HOSTILE}", software=Software(torch=HOSTILE))
    path = tmp_path / "elsewhere" / "run.json"
    write_results(results(hostile, [record("matmul", 1.0, name=f"GPU {HOSTILE}")], suite="standard"), path)
    nb = notebook_page.with_sample_output(new_notebook(cells=[results_cell(), new_code_cell("x")]), path)
    page = notebook_to_markdown(nb, Path("docs/x.ipynb"))
    assert HOSTILE not in page and "&lt;script&gt;" in page
    assert "committed as <code>run.json</code>" in page and str(tmp_path) not in page
    assert "<th>status</th>" in page and "x\n```\n" in page.split("<th>status</th>")[1], "the next cell follows"


def test_the_notebooks_results_cell_is_marked_and_shows_the_columns_the_sample_has():
    nb = nbformat.reads((ROOT / MEASURING_NOTEBOOK).read_text(encoding="utf-8"), as_version=4)
    marked = [c for c in nb.cells if c.metadata.get(SAMPLE_METADATA, {}).get("sample") == SAMPLE_RESULTS]
    assert len(marked) == 1
    shown = ast.parse(marked[0].source).body[-1].value  # the cell's last line: df[[...]]
    assert ast.unparse(shown.value) == "df" and tuple(ast.literal_eval(shown.slice)) == RESULT_COLUMNS
    assert "df = benchlib.load_results(outcome.path)" in marked[0].source


@pytest.mark.slow
def test_a_failing_cell_stops_the_build_naming_notebook_cell_and_error(project):
    notebook = write_notebook(
        project / MEASURING_NOTEBOOK,
        new_markdown_cell("# T"),
        new_code_cell("x = 1"),
        new_code_cell("\n# check the GPU\nraise ValueError('no GPU here')"),
    )
    with pytest.raises(NotebookStopsTheBuild) as stopped:
        notebook_page.this_machine("quick")
    assert str(stopped.value).startswith(
        f"error: {notebook}: cell 3 (# check the GPU) raised ValueError: no GPU here. Run the notebook in Jupyter"
    )
    kept = [p for p in (project / "cache").rglob("*") if p.is_file()]
    assert not kept, f"a failed run is not cached: {kept}"
    with pytest.raises(NotebookStopsTheBuild):
        run_notebook(notebook)


def test_a_missing_notebook_is_named(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("MKDOCS_CONFIG_DIR", raising=False)
    with pytest.raises(NotebookStopsTheBuild, match=re.escape(f"error: {tmp_path / 'docs/gone.ipynb'} does not exist")):
        notebook_markdown("docs/gone.ipynb")


def test_the_nav_page_renders_the_notebook_its_front_matter_links_and_both_builders_watch_it():
    text = PAGE.read_text(encoding="utf-8")
    front_matter = yaml.safe_load(text.split("---\n")[1])
    assert front_matter["notebook"] == NOTEBOOK
    assert f'notebook_markdown("docs/{NOTEBOOK}", sample_run())' in text
    site = config()
    benchmarks = next(item["Benchmarks"] for item in site["nav"] if isinstance(item, dict) and "Benchmarks" in item)
    assert {"Notebook": "notebooks/run-benchlib.md"} in benchmarks
    assert f"docs/{NOTEBOOK}" in site["watch"]
    assert sorted(p.relative_to(ROOT / "docs").as_posix() for p in (ROOT / "docs").rglob("*.ipynb")) == [NOTEBOOK]


def test_the_variables_the_blocks_read_are_in_the_config_zensical_compares():
    """Zensical reuses a rendered page while mkdocs.yml is unchanged: the variables must be in it."""
    text = (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    block_inputs = text.split("\n  block_inputs:\n", 1)[1].split("\n\n", 1)[0]
    variables = {value for module in (paths, sources) for name, value in vars(module).items() if name.endswith("_ENV")}
    assert {"BENCHLIB_RESULTS_DIR", "BENCHLIB_MEASURE"} <= variables
    for variable in sorted(variables):
        assert f"!ENV [{variable}, " in block_inputs, f"{variable} is not under extra: block_inputs: in mkdocs.yml"


@pytest.mark.slow
def test_the_builds_measurement_is_the_real_quick_suite_with_nothing_failed(measurement_cache):
    """The shared builds' measurement (an artefact, made by the measuring notebook) is the whole
    real quick suite on this CPU; the snippet tests that run a suite use the stand-in instead."""
    (path,) = measurement_cache.glob("build-measurement/notebook-*/*-quick/*/*.json")
    run = read_results(path)
    assert run.complete
    assert {m.workload for m in run.measurements} >= {"matmul", "conv2d", "bandwidth"}
    # "skipped" is a finished outcome (an SDPA backend this CPU lacks); nothing may have failed.
    failed = [m for m in run.measurements if m.status in FAILED_STATUSES]
    assert not failed, [m.message for m in failed]
