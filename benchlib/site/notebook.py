"""A Jupyter notebook as a site page, rendered at build time from a markdown-exec block.

Both site builders run it: MkDocs (with Material) and Zensical, which has no mkdocs-jupyter. The
page's Markdown holds one block (``idprefix=""`` keeps the notebook's heading ids plain)::

    ```python exec="true" idprefix=""
    from benchlib.site.notebook import notebook_markdown; print(notebook_markdown("docs/notebooks/x.ipynb"))
    ```

The notebook runs top to bottom in its own folder, as mkdocs-jupyter's ``execute: true`` did, and a
cell that raises ends the build. The executed copy is kept in the cache folder (`benchlib.core.cache`) and reused
until the notebook or the benchlib version changes. Markdown cells become the page's Markdown (so
their headings are in the page's table of contents), code cells fenced code, outputs text, images
or the HTML the notebook produced (a pandas table, rich's output).
"""

from __future__ import annotations

import hashlib
import os
import re
import tempfile
import threading
from pathlib import Path
from typing import NoReturn

import benchlib
from benchlib.core.cache import cache_folder
from benchlib.core.files import write_atomically
from benchlib.core.paths import project_root

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


def cache_path(notebook: Path, cache_dir: Path) -> Path:
    """Where the executed copy of ``notebook`` is kept: named by its bytes and benchlib's version."""
    digest = hashlib.sha256(notebook.read_bytes() + f"\0benchlib {benchlib.__version__}".encode()).hexdigest()
    return cache_dir / f"{notebook.stem}-{digest[:16]}.ipynb"


def _first_line(source: str) -> str:
    return next((line.strip() for line in source.splitlines() if line.strip()), "(empty)")


def executed_notebook(notebook: Path, cache_dir: Path):  # -> nbformat.NotebookNode (nbformat is a docs extra)
    """``notebook`` with its outputs: from the cache, or run now in its own folder."""
    import nbformat
    from jupyter_client.kernelspec import NoSuchKernel
    from nbclient import NotebookClient
    from nbclient.exceptions import CellExecutionError

    cached = cache_path(notebook, cache_dir)
    if cached.is_file():
        return nbformat.reads(cached.read_text(encoding="utf-8"), as_version=4)
    try:
        nb = nbformat.reads(notebook.read_text(encoding="utf-8"), as_version=4)
    except (OSError, ValueError) as exc:
        _stop(f"error: {notebook} is not a notebook that can be read ({exc}); open it in Jupyter and save it again.")
    client = NotebookClient(nb, resources={"metadata": {"path": str(notebook.parent)}})
    try:
        client.execute()
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
    for stale in cache_dir.glob(f"{notebook.stem}-*.ipynb"):
        stale.unlink()
    write_atomically(cached, nbformat.writes(nb))
    return nb


def _fence(text: str, language: str) -> str:
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    ticks = "`" * max(3, longest + 1)
    return f"{ticks}{language}\n{text.rstrip()}\n{ticks}"


def _text(value: str | list[str]) -> str:
    return "".join(value) if isinstance(value, list) else value


def _output_markdown(output: dict, where: str) -> str:
    from nbconvert.filters.ansi import strip_ansi

    if output["output_type"] == "stream":
        return _fence(strip_ansi(_text(output["text"])), "text")
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
        # One raw HTML block: Markdown leaves it as it is, whatever blank lines it holds.
        return f'<div class="notebook-output">\n{html.strip()}\n</div>'
    if kind in ("image/png", "image/jpeg"):
        return f"![output](data:{kind};base64,{value.strip()})"
    if kind == "text/markdown":
        return value
    return _fence(strip_ansi(value), "text")


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
    """Run ``notebook`` (a path from the project's root), or reuse its last run, and return its page's Markdown."""
    root = project_root()
    path = root / notebook
    if not path.is_file():
        _stop(f"error: {path} does not exist; the notebook page's block names a notebook under docs/.")
    # Without a writable cache the notebook runs into a folder of this build's own.
    cache = cache_folder("notebooks") or Path(tempfile.mkdtemp(prefix="benchlib-notebook-"))
    return notebook_to_markdown(executed_notebook(path, cache), Path(notebook))
