"""`benchlib import`: file contributed results into the results folder."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.text import Text

from benchlib.cli.output import console, usage_error

IMPORT_STYLE = {"imported": "green", "duplicate": "yellow", "invalid": "red"}


def import_results(
    files: Annotated[list[Path], typer.Argument(help="Contributed results files or folders (searched for *.json).")],
    into: Annotated[
        Path, typer.Option("--into", metavar="INTO", help="The results folder: a folder per machine, a file per run.")
    ] = Path("results"),
) -> None:
    """Validate contributed results files, skip duplicates, and file the rest in the results folder.

    Each run of a file goes to `INTO/<machine id>/<run id>.json`, a machine's runs in one folder.
    Each file is checked whole before any of its runs is written, and is filed or refused as one;
    one line says which, and why. Values no real run can produce are kept but marked invalid.
    Exits 1 if any file was refused.
    """
    from benchlib.results.importer import import_files
    from benchlib.results.store import printable

    existing = next(p for p in (into, *into.parents) if p.exists())
    if not existing.is_dir():
        raise usage_error(
            f"--into {printable(str(into))}: {printable(str(existing))} is a file, not a folder; give the results folder"
        )
    outcomes = import_files(files, into)
    if not outcomes:
        raise usage_error("no results files found in " + ", ".join(printable(str(f)) for f in files))
    for o in outcomes:
        details = ([f"→ {', '.join(map(str, o.destinations))}"] if o.destinations else []) + o.reasons
        line = Text.assemble((o.outcome, IMPORT_STYLE[o.outcome]), " ", printable(str(o.source)))
        if details:
            line.append(": " + printable("; ".join(details)))
        console.print(line, soft_wrap=True)
    counts = {k: sum(o.outcome == k for o in outcomes) for k in IMPORT_STYLE}
    console.print(", ".join(f"{n} {k}" for k, n in counts.items()))
    if counts["invalid"]:
        raise typer.Exit(1)
