"""`benchlib validate`: check results files against the schema."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.text import Text

from benchlib.cli.output import console, err, usage_error


def validate(
    paths: Annotated[
        list[Path], typer.Argument(help="Results files, contributions or folders (searched recursively).")
    ],
) -> None:
    """Check results files and contributions against the schema; report every bad file and exit 1 if any.

    A contribution must also carry nothing a contribution doesn't keep (each such field is named),
    no file path, only ids that can name its files, and a check that agrees with its runs.

    Values no real run can produce (above the device's peak, zero times, ...) are listed as
    implausible: they don't fail validation, but every reader marks them invalid.
    """
    from benchlib.results.contribution import read_runs, validate_paths
    from benchlib.results.plausibility import findings
    from benchlib.results.store import printable

    good, bad = validate_paths(paths)
    for path in good:
        # Not an error: such values are kept and marked invalid wherever the file is read.
        for problem in (p for run in read_runs(path, mark_implausible=False) for p in findings(run)):
            err.print(Text.assemble(("implausible ", "yellow"), printable(f"{path}: {problem}")), soft_wrap=True)
    for exc in bad:
        # One line per problem, each naming the file: CI's log is searched line by line.
        for problem in exc.problems:
            err.print(Text.assemble(("invalid ", "red"), printable(f"{exc.path}: {problem}")), soft_wrap=True)
    if not good and not bad:
        raise usage_error("no results files found in " + ", ".join(printable(str(p)) for p in paths))
    console.print(f"{len(good)} valid, {len(bad)} invalid")
    if bad:
        raise typer.Exit(1)
