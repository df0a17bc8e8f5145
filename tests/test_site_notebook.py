"""The notebook page: a notebook rendered as Markdown at build time, the same for MkDocs and Zensical."""

from __future__ import annotations

import re
import tempfile
import threading
from pathlib import Path

import nbformat
import pytest
import yaml
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook, new_output

from benchlib.core import paths
from benchlib.measure.build_machine import build_measurement
from benchlib.results.schema import FAILED_STATUSES
from benchlib.results.store import read_results
from benchlib.site import notebook as notebook_page
from benchlib.site import sources
from benchlib.site.notebook import (
    MEASURING_NOTEBOOK,
    NotebookError,
    NotebookStopsTheBuild,
    _stop,
    notebook_markdown,
    notebook_to_markdown,
    run_notebook,
)

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


# A measuring notebook in miniature: it records each run (in the project's root), prints where it runs,
# and writes a complete results file where $BENCHLIB_RESULTS_DIR says, as the real one's run cell does.
MEASURING_CELL = """import os
from datetime import datetime, timezone
from pathlib import Path
from benchlib.results.schema import Machine, ResultsFile, Software
from benchlib.results.store import write_results
open(Path(os.environ['MKDOCS_CONFIG_DIR']) / 'runs.txt', 'a').write('run\\n')
print(os.getcwd())
print(os.environ['BENCHLIB_RESULTS_DIR'])
out = Path(os.environ['BENCHLIB_RESULTS_DIR']) / 'test-machine' / 'run.json'
write_results(ResultsFile(run_id='run', created=datetime.now(timezone.utc), benchlib_version='0.1.0',
    methodology_version='1', suite='quick', complete=True, machine=Machine(id='test-machine', label='Test',
    software=Software(python='3.11', benchlib='0.1.0'))), out)
"""


@pytest.fixture
def project(tmp_path, monkeypatch) -> Path:
    """A project root of its own (its measuring notebook under docs/notebooks/), with a cache of its own."""
    (tmp_path / "docs" / "notebooks").mkdir(parents=True)
    monkeypatch.setenv("MKDOCS_CONFIG_DIR", str(tmp_path))
    monkeypatch.setenv("BENCHLIB_CACHE_DIR", str(tmp_path / "cache"))
    build_measurement.cache_clear()
    yield tmp_path
    build_measurement.cache_clear()


@pytest.mark.slow
def test_the_notebook_measures_this_machine_in_the_temporary_folder_once_until_it_changes(project, monkeypatch):
    notebook = write_notebook(project / MEASURING_NOTEBOOK, new_code_cell(MEASURING_CELL))
    folder = project

    first = notebook_page.this_machine("quick")
    executed = first.with_suffix(".ipynb")
    # The page shows no folder of the machine that built it: the kernel worked in the temporary
    # folder, and the results folder is shown as a reader's own run writes it.
    where, results = nbformat.reads(executed.read_text(), as_version=4).cells[0].outputs[0]["text"].split()
    assert where == tempfile.gettempdir()
    assert results == notebook_page.RESULTS_SHOWN_AS
    build_measurement.cache_clear()  # a new build process finds the run
    assert notebook_page.this_machine("quick") == first
    assert (folder / "runs.txt").read_text() == "run\n", "the second build used the cached run"

    write_notebook(notebook, new_code_cell(MEASURING_CELL), new_markdown_cell("Changed."))
    build_measurement.cache_clear()
    notebook_page.this_machine("quick")
    assert (folder / "runs.txt").read_text() == "run\nrun\n"
    runs = list((project / "cache" / "build-measurement").glob("notebook-*"))
    assert len(runs) == 1, "the run of the old notebook was dropped"


@pytest.mark.slow
def test_with_a_measurement_the_page_shows_the_notebooks_own_run_and_measures_once(project, monkeypatch):
    write_notebook(project / MEASURING_NOTEBOOK, new_markdown_cell("# Run"), new_code_cell(MEASURING_CELL))
    monkeypatch.setenv(sources.MEASURE_ENV, "quick")
    page = notebook_markdown(MEASURING_NOTEBOOK)
    assert page.startswith("# Run\n\n```python\nimport os")
    shown = f"```text\n{tempfile.gettempdir()}\n{notebook_page.RESULTS_SHOWN_AS}\n```"
    assert shown in page, "the output of the build's own run, with no folder of the machine that built it"
    from benchlib.site.data import site_data

    assert site_data().build_files == frozenset({str(notebook_page.this_machine("quick"))})
    assert (project / "runs.txt").read_text() == "run\n", "the suite ran once for the build"


def test_without_a_measurement_the_page_shows_the_cells_and_runs_nothing(monkeypatch):
    monkeypatch.delenv(sources.MEASURE_ENV, raising=False)

    def no_run(*args, **kwargs):
        raise AssertionError("a build without BENCHLIB_MEASURE runs no notebook")

    monkeypatch.setattr(notebook_page, "run_notebook", no_run)
    page = notebook_markdown(MEASURING_NOTEBOOK)
    assert page.startswith("# Run benchlib\n\n")
    assert "```python\nimport benchlib\nfrom benchlib.probe import machine_table, probe_machine" in page
    assert "```text" not in page and "notebook-output" not in page, "no outputs: nothing ran"


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
    assert f'notebook_markdown("docs/{NOTEBOOK}")' in text
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
