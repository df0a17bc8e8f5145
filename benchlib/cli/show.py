"""`benchlib show`: a results file as a table."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape
from rich.text import Text

from benchlib.cli.output import Wrapped, console, err, records_table


def show(file: Annotated[Path, typer.Argument(help="A results file.")]) -> None:
    """Print a results file as a table."""
    from benchlib.measure.conditions import disturbed_line
    from benchlib.results.store import ResultsError, read_results

    try:
        results = read_results(file)
    except ResultsError as exc:
        err.print(f"[bold red]invalid:[/] {escape(str(exc))}")
        raise typer.Exit(1)
    p = results.provenance
    origin = "measured by benchlib" if p.kind == "measured" else f"reported by {p.source_url} (as of {p.as_of})"
    console.print(
        Wrapped(
            Text.assemble(
                (results.machine.label, "bold"),
                f" · run {results.run_id} · {results.created:%Y-%m-%d %H:%M} UTC · {origin}",
            )
        )
    )
    if not results.complete:
        console.print("[yellow]this run did not finish; the measurements below are the ones it completed[/]")
    disturbed = disturbed_line(results)
    if disturbed:
        console.print(Text(disturbed, style="yellow"))
    console.print(records_table(results.measurements, f"suite {results.suite or '—'}"))
