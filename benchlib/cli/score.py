"""`benchlib score`: the score of saved runs side by side with the reference and the committed machines' runs."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.padding import Padding
from rich.text import Text

from benchlib.cli.output import console, err, usage_error
from benchlib.derive.score_report import NoReference, ScoreColumn, compare_scores, comparison_table
from benchlib.measure.conditions import disturbed_line
from benchlib.results.store import iter_result_paths


def score_command(
    paths: Annotated[
        list[Path], typer.Argument(help="Results files or folders (searched recursively).", show_default=False)
    ],
) -> None:
    """Print the score of saved runs side by side, with the reference machine and the committed machines' runs.

    The score is 100 x the geometric mean of reference time / measured time over the standard
    suite's score tests (see the Methodology page). A run missing a test is incomplete; a run
    that other work on the machine disturbed is marked so. Exits 1 if a file is invalid or
    none of the files is a measured standard-suite run, 2 if a path doesn't exist.
    """
    for path in paths:
        if not path.exists():
            raise usage_error(f"{path}: no such results file or folder")
    if not any(True for _ in iter_result_paths(paths)):
        raise usage_error("no results files found in " + ", ".join(map(str, paths)))
    try:
        comparison = compare_scores(paths)
    except NoReference as exc:
        err.print(Text.assemble(("no reference: ", "bold red"), str(exc)), soft_wrap=True)
        raise typer.Exit(1)
    for note in comparison.notes:
        err.print(note, soft_wrap=True)
    if not comparison.columns:
        err.print(
            Text("nothing to score: no measured standard-suite run among " + ", ".join(map(str, paths))), soft_wrap=True
        )
        raise typer.Exit(1)
    print_comparison(comparison.columns)
    if comparison.invalid:
        raise typer.Exit(1)


def print_comparison(columns: list[ScoreColumn]) -> None:
    """The table, what the scores are relative to, then each run's file and what it lacks or what disturbed it."""
    console.print(comparison_table(columns))
    console.print(Text(f"Scores are {columns[0].score.relative_to}."), soft_wrap=True)
    for c in columns:
        console.print(Text(f"{c.role}: {_shown(c.path)}", style="dim"), soft_wrap=True)
        if not c.score.complete:
            console.print(Padding(Text(f"incomplete: missing {c.score.missing_text()}", style="yellow"), (0, 0, 0, 2)))
        disturbed = disturbed_line(c.results)
        if disturbed:
            console.print(Padding(Text(disturbed, style="yellow"), (0, 0, 0, 2)))


def _shown(path: Path) -> Path:
    """``path`` relative to the working folder where it is inside it: shorter, and still copyable."""
    try:
        return path.resolve().relative_to(Path.cwd())
    except ValueError:
        return path
