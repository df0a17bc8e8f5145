"""A Jupyter notebook as a site page, rendered at build time from a markdown-exec block.

Both site builders run it: MkDocs (with Material) and Zensical, which has no mkdocs-jupyter. The
page's Markdown holds one block (``idprefix=""`` keeps the notebook's heading ids plain)::

    ```python exec="true" idprefix=""
    from benchlib.site.notebook import notebook_markdown; print(notebook_markdown("docs/notebooks/x.ipynb"))
    ```

Markdown cells become the page's Markdown (so their headings are in the page's table of contents),
code cells fenced code, outputs text, images or the HTML the notebook produced (a pandas table,
rich's output).

A build runs no notebook for its page: the page shows the notebook's cells as a reader opens them.
Under the cell that shows a run's results (cell metadata ``{"benchlib": {"sample": "results"}}``)
it shows the table that cell makes from a committed run, the run a reader makes: measured on a
GPU (`benchlib.site.notebook_sample.sample_run`), labelled with its machine, date and versions.
It is never the build machine's run, a CPU in a temporary folder.

The notebook that measures a machine (`MEASURING_NOTEBOOK`, which runs the quick suite) is how the
build measures its own machine when ``BENCHLIB_MEASURE=quick`` asks for that: `this_machine` runs
it once, top to bottom in a temporary folder with its results going to the cache folder. The suite
runs once per build, and not again until the machine, the notebook or the benchlib version changes.
A cell that raises ends the build.
"""

from __future__ import annotations

import hashlib
import os
import re
import tempfile
import threading
from pathlib import Path
from typing import NoReturn

from benchlib.core.paths import project_root
from benchlib.core.version import __version__
from benchlib.derive import results_files
from benchlib.site.render import render

# The notebook that measures a machine, from the project's root, and the suite it runs.
MEASURING_NOTEBOOK = "docs/notebooks/run-benchlib.ipynb"
NOTEBOOK_SUITE = "quick"
# Where the build's measurement through the notebook is kept: one folder per notebook version.
CACHE = "build-measurement"
# A code cell's metadata names the sample output it gets: {"benchlib": {"sample": "results"}}.
SAMPLE_METADATA = "benchlib"
SAMPLE_RESULTS = "results"
# The columns the results cell selects from `benchlib.load_results` (a test holds the cell to them).
RESULT_COLUMNS = ("workload", "device_name", "dtype", "value", "unit", "efficiency", "noisy", "status")
# The versions the sample's label names, from its machine's software record.
SAMPLE_SOFTWARE = (("benchlib", "benchlib"), ("Python", "python"), ("PyTorch", "torch"), ("CUDA", "torch_cuda"))

# The first kind a notebook output has, in this order, is what the page shows.
SHOWN_KINDS = ("text/html", "image/svg+xml", "image/png", "image/jpeg", "text/markdown", "text/plain")
# A pandas table in an output, less its border and class (and the <style> for that class), is
# styled like every other table of the site.
_DATAFRAME_TABLE = '<table border="1" class="dataframe">'
_DATAFRAME_STYLE = re.compile(r"<style scoped>.*?</style>\s*", re.DOTALL)


class NotebookError(RuntimeError):
    """A notebook that can't be shown: it failed to run, or has an output the page can't show."""


class NotebookStopsTheBuild(SystemExit):
    """Ends a site build with the notebook's one-line error.

    markdown-exec catches every Exception a block raises and logs it; `zensical build --strict`
    then builds on and ships the traceback as the page. A SystemExit ends both builders' runs.
    """


def _stop(message: str) -> NoReturn:
    # `mkdocs serve` renders in a worker thread, which a SystemExit would end silently; there the
    # error is shown on the page (markdown-exec exports MKDOCS_CONFIG_DIR only under MkDocs).
    if os.environ.get("MKDOCS_CONFIG_DIR") and threading.current_thread() is not threading.main_thread():
        raise NotebookError(message)
    raise NotebookStopsTheBuild(message)


def notebook_digest(notebook: Path) -> str:
    """A short hash of the notebook's bytes and benchlib's version: what its run depends on besides the machine."""
    return hashlib.sha256(notebook.read_bytes() + f"\0benchlib {__version__}".encode()).hexdigest()[:16]


def _first_line(source: str) -> str:
    return next((line.strip() for line in source.splitlines() if line.strip()), "(empty)")


def read_notebook(notebook: Path):  # -> nbformat.NotebookNode (nbformat is a docs extra)
    import nbformat

    try:
        return nbformat.reads(notebook.read_text(encoding="utf-8"), as_version=4)
    except (OSError, ValueError) as exc:
        _stop(f"error: {notebook} is not a notebook that can be read ({exc}); open it in Jupyter and save it again.")


def run_notebook(notebook: Path, env: dict[str, str] | None = None, cwd: Path | None = None):  # -> NotebookNode
    """``notebook`` with its outputs, run now top to bottom in ``cwd``, else its own folder.

    Its kernel sees ``env``, else this process's environment.
    """
    from jupyter_client.kernelspec import NoSuchKernel
    from nbclient import NotebookClient
    from nbclient.exceptions import CellExecutionError

    nb = read_notebook(notebook)
    client = NotebookClient(nb, resources={"metadata": {"path": str(cwd or notebook.parent)}})
    try:
        client.execute(env=env if env is not None else dict(os.environ))
    except NoSuchKernel as exc:
        _stop(
            f"error: {notebook} asks for the Jupyter kernel {exc.name!r}, which is not installed here; "
            "install ipykernel (it is in benchlib's [docs] extra)."
        )
    except CellExecutionError as exc:
        index, cell = next(
            (i, c) for i, c in enumerate(nb.cells) if any(o.get("output_type") == "error" for o in c.get("outputs", []))
        )
        _stop(
            f"error: {notebook}: cell {index + 1} ({_first_line(cell.source)}) raised {exc.ename}: {exc.evalue}. "
            "Run the notebook in Jupyter to see the traceback, fix it, then build again."
        )
    return nb


def _measuring_notebook() -> Path:
    return project_root() / MEASURING_NOTEBOOK


def measure_with_notebook(suite: str, out: Path) -> Path:
    """Measure this machine by running the measuring notebook, its results file going to ``out/<machine id>/``.

    The notebook writes where ``$BENCHLIB_RESULTS_DIR`` says.
    """
    import shutil

    from benchlib.results.store import ResultsError, read_results

    # Runs of earlier versions of the notebook are no use to this one.
    for stale in out.parent.parent.glob("notebook-*"):
        if stale != out.parent:
            shutil.rmtree(stale, ignore_errors=True)
    notebook = _measuring_notebook()
    # Its kernel works in the temporary folder, so nothing the cells write lands in the checkout.
    run_notebook(notebook, {**os.environ, "BENCHLIB_RESULTS_DIR": str(out)}, cwd=Path(tempfile.gettempdir()))
    written = []
    for path in out.glob("*/*.json"):
        try:
            results = read_results(path)
        except ResultsError:
            continue
        if results.complete and results.suite == suite:
            written.append(path)
    if not written:
        _stop(
            f"error: {notebook} ran, but wrote no complete {suite} results file into {out}; its run cell must "
            "write where $BENCHLIB_RESULTS_DIR says."
        )
    return max(written, key=lambda p: p.stat().st_mtime_ns)


def this_machine(suite: str) -> Path:
    """The build's measurement of this machine with ``suite``, made once: by the measuring notebook
    where it runs that suite (so a build checks that its cells run), else in this process."""
    notebook = _measuring_notebook()
    if suite != NOTEBOOK_SUITE or not notebook.is_file():
        return results_files.this_machine(suite)
    return results_files.this_machine(suite, measure_with_notebook, f"{CACHE}/notebook-{notebook_digest(notebook)}")


def _fence(text: str, language: str) -> str:
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    ticks = "`" * max(3, longest + 1)
    return f"{ticks}{language}\n{text.rstrip()}\n{ticks}"


def _text(value: str | list[str]) -> str:
    return "".join(value) if isinstance(value, list) else value


def _output_markdown(output: dict, where: str) -> str:
    from nbconvert.filters.ansi import strip_ansi

    if output["output_type"] == "stream":
        return _kept_out_of_search(_fence(strip_ansi(_text(output["text"])), "text"))
    data = output.get("data", {})
    kind = next((k for k in SHOWN_KINDS if k in data), None)
    if kind is None:
        _stop(
            f"error: {where} has an output of kind {', '.join(sorted(data)) or '(none)'}, which the site can't "
            f"show; give it one of {', '.join(SHOWN_KINDS)} or clear it."
        )
    value = _text(data[kind])
    if kind in ("text/html", "image/svg+xml"):
        html = _DATAFRAME_STYLE.sub("", value).replace(_DATAFRAME_TABLE, "<table>")
        # One raw HTML block: Markdown leaves it as it is, whatever blank lines it holds. Out of the
        # search index, as _kept_out_of_search says.
        return f'<div class="notebook-output" data-search-exclude>\n{html.strip()}\n</div>'
    if kind in ("image/png", "image/jpeg"):
        return f"![output](data:{kind};base64,{value.strip()})"
    if kind == "text/markdown":
        return value
    return _kept_out_of_search(_fence(strip_ansi(value), "text"))


def _kept_out_of_search(markdown: str) -> str:
    """``markdown`` in a block the search index skips: a run's outputs (timings, file names) change
    from machine to machine, and some runs of digits break the index of Material's search (lunr)."""
    return f'<div class="notebook-output" data-search-exclude markdown>\n\n{markdown}\n\n</div>'


def notebook_to_markdown(nb, notebook: Path) -> str:
    """The page's Markdown for an executed notebook: its cells in order, each output after its code."""
    language = nb.metadata.get("language_info", {}).get("name", "python")
    parts = []
    for index, cell in enumerate(nb.cells):
        if cell.cell_type == "markdown":
            parts.append(cell.source)
        elif cell.cell_type == "code" and cell.source.strip():
            parts.append(_fence(cell.source, language))
            parts += [_output_markdown(o, f"{notebook}: cell {index + 1}") for o in cell.get("outputs", [])]
    return "\n\n".join(parts) + "\n"


def _shown_path(path: Path) -> str:
    """``path`` from the project's root, or its name alone where it lies elsewhere: no local folder shows."""
    try:
        return path.resolve().relative_to(project_root().resolve()).as_posix()
    except ValueError:
        return path.name


def _sample_label(path: Path) -> str:
    from benchlib.results.store import read_results

    run = read_results(path)
    software = run.machine.software
    versions = [
        f"{name} {version}"
        for name, field in SAMPLE_SOFTWARE
        if software is not None and (version := getattr(software, field, None))
    ]
    return render(
        "notebook_sample.html",
        suite=run.suite,
        machine=run.machine.label,
        day=f"{run.created:%Y-%m-%d}",
        versions=", ".join(versions),
        file=_shown_path(path),
    )


def with_sample_output(nb, path: Path):  # -> NotebookNode
    """``nb`` with the sample run at ``path`` as the output of its results cell, labelled."""
    from nbformat.v4 import new_output

    from benchlib.results.load import load_results

    table = load_results(path)[list(RESULT_COLUMNS)]
    outputs = [
        new_output("display_data", data={"text/html": _sample_label(path)}),
        new_output("execute_result", data={"text/html": table._repr_html_(), "text/plain": repr(table)}),
    ]
    for cell in nb.cells:
        if cell.get("metadata", {}).get(SAMPLE_METADATA, {}).get("sample") == SAMPLE_RESULTS:
            cell["outputs"] = outputs
    return nb


def notebook_markdown(notebook: str | Path, sample: Path | None = None) -> str:
    """The page's Markdown for ``notebook`` (a path from the project's root): its cells, and under
    its results cell the table of the committed run ``sample`` (`benchlib.site.notebook_sample.sample_run`)."""
    root = project_root()
    path = root / notebook
    if not path.is_file():
        _stop(f"error: {path} does not exist; the notebook page's block names a notebook under docs/.")
    nb = read_notebook(path)
    if sample is not None:
        nb = with_sample_output(nb, sample)
    return notebook_to_markdown(nb, Path(notebook))
