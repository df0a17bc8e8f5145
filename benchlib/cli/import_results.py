"""`benchlib import`: file contributed results into the results folder."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table
from rich.text import Text

from benchlib.cli.output import console, usage_error

IMPORT_STYLE = {"imported": "green", "duplicate": "yellow", "invalid": "red"}


def import_results(
    files: Annotated[list[Path], typer.Argument(help="Contributed results files or folders (searched for *.json).")],
    into: Annotated[
        Path, typer.Option("--into", help="The results folder to file them in, as <machine id>/<run id>.json.")
    ] = Path("results"),
) -> None:
    """Validate contributed results files, skip duplicates, and file the rest into the results folder.

    Values no real run can produce are kept but marked invalid. Exits 1 if any file was refused.
    """
    from benchlib.results.importer import import_files

    outcomes = import_files(files, into)
    if not outcomes:
        raise usage_error("no results files found in " + ", ".join(map(str, files)))
    table = Table(title="import")
    for col in ("file", "result", "details"):
        table.add_column(col, overflow="fold")
    for o in outcomes:
        details = [f"→ {o.destination}"] if o.destination else []
        table.add_row(
            Text(str(o.source)), Text(o.outcome, style=IMPORT_STYLE[o.outcome]), Text("\n".join(details + o.reasons))
        )
    console.print(table)
    counts = {k: sum(o.outcome == k for o in outcomes) for k in IMPORT_STYLE}
    console.print(", ".join(f"{n} {k}" for k, n in counts.items()))
    if counts["invalid"]:
        raise typer.Exit(1)
