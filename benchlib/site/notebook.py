"""A Jupyter notebook as a site page, rendered at build time from a markdown-exec block.

Both site builders run it: MkDocs (with Material) and Zensical, which has no mkdocs-jupyter. The
page's Markdown holds one block (``idprefix=""`` keeps the notebook's heading ids plain)::

    ```python exec="true" idprefix=""
    from benchlib.site.notebook import notebook_markdown; print(notebook_markdown("docs/notebooks/x.ipynb"))
    ```

Markdown cells become the page's Markdown (so their headings are in the page's table of contents),
code cells fenced code, outputs text, images or the HTML the notebook produced (a pandas table,
rich's output).

A build runs no notebook on its own: the page shows the notebook's cells as a reader opens them.
The notebook that measures a machine (`MEASURING_NOTEBOOK`, which runs the quick suite) is how the
build measures its own machine when ``BENCHLIB_MEASURE=quick`` asks for that: `this_machine` runs
it once, top to bottom in its own folder with its results going to the cache folder, keeps the
executed copy beside the results file it wrote, and the notebook page shows that copy, outputs
and all. The suite runs once per build, and not again until the machine, the notebook or the
benchlib version changes. A cell that raises ends the build.
"""

from __future__ import annotations

import hashlib
import os
import re
import tempfile
import threading
from pathlib import Path
from typing import NoReturn

from benchlib.core.files import write_atomically
from benchlib.core.paths import project_root
from benchlib.core.version import __version__
from benchlib.derive import results_files
from benchlib.site.sources import requested_suite

# The notebook that measures a machine, from the project's root, and the suite it runs.
MEASURING_NOTEBOOK = "docs/notebooks/run-benchlib.ipynb"
NOTEBOOK_SUITE = "quick"
# Where the build's measurement through the notebook is kept: one folder per notebook version.
CACHE = "build-measurement"
# How the page shows that folder (the notebook prints the results file's path): as the folder a
# reader's own run of the notebook writes to.
RESULTS_SHOWN_AS = "~/benchlib-results"

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

    The notebook writes where ``$BENCHLIB_RESULTS_DIR`` says; its executed copy is kept beside the
    results file, for the notebook page.
    """
    import shutil

    import nbformat

    from benchlib.results.store import ResultsError, read_results

    # Runs of earlier versions of the notebook are no use to this one.
    for stale in out.parent.parent.glob("notebook-*"):
        if stale != out.parent:
            shutil.rmtree(stale, ignore_errors=True)
    notebook = _measuring_notebook()
    # The page shows this run's outputs: its kernel works in the temporary folder, not the checkout,
    # so the probe's disk row names no folder of the machine that built the site.
    nb = run_notebook(notebook, {**os.environ, "BENCHLIB_RESULTS_DIR": str(out)}, cwd=Path(tempfile.gettempdir()))
    _hide_folder(nb, out, RESULTS_SHOWN_AS)
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
    path = max(written, key=lambda p: p.stat().st_mtime_ns)
    write_atomically(path.with_suffix(".ipynb"), nbformat.writes(nb))
    return path


def _hide_folder(nb, folder: Path, shown_as: str) -> None:
    """Write ``shown_as`` for ``folder`` in every output of ``nb``: its text, HTML and streams."""

    def hide(value):
        if isinstance(value, str):
            return value.replace(str(folder), shown_as)
        if isinstance(value, list):
            return [hide(v) for v in value]
        return value

    for cell in nb.cells:
        for output in cell.get("outputs", []):
            if "text" in output:
                output["text"] = hide(output["text"])
            for kind, value in output.get("data", {}).items():
                output["data"][kind] = hide(value)


def this_machine(suite: str) -> Path:
    """The build's measurement of this machine with ``suite``, made once: by the measuring notebook
    where it runs that suite, so its page shows that very run, else in this process."""
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


def notebook_markdown(notebook: str | Path) -> str:
    """The page's Markdown for ``notebook`` (a path from the project's root): its cells, and, where
    the build measured this machine with it, the outputs of that run."""
    root = project_root()
    path = root / notebook
    if not path.is_file():
        _stop(f"error: {path} does not exist; the notebook page's block names a notebook under docs/.")
    suite = requested_suite()
    if suite == NOTEBOOK_SUITE and path.resolve() == _measuring_notebook().resolve():
        executed = this_machine(suite).with_suffix(".ipynb")
        if executed.is_file():
            return notebook_to_markdown(read_notebook(executed), Path(notebook))
    return notebook_to_markdown(read_notebook(path), Path(notebook))
