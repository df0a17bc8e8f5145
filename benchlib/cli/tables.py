"""`benchlib tables`: compute the tables the site reads, or check that the committed ones are current.

The site build only reads: fit's predictions for the buying guide and the "Can I run it?" page,
the speed check and the predictions beside measured searches are computed here into
``benchlib/tables/*.json`` (one file per table, with the digests of its inputs and the versions
it was computed with), and committed. Run it after changing the specs, a shipped config, the
published or reported data, the results folder's searches, a predictor, or the locked torch,
torchvision, transformers or peft. Traces are cached, and the formulas of a model and setup whose
inputs are unchanged are copied from the committed table, so a second run only redoes what changed.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.markup import escape
from rich.text import Text

from benchlib.cli.output import Wrapped, console, err, print_error, progress_bar, usage_error

if TYPE_CHECKING:
    from benchlib.tables import Table


def tables(
    only: Annotated[
        list[str] | None,
        typer.Option(
            "--only",
            metavar="NAME",
            help="Only this table (repeat for more; `benchlib tables --check` names them all). Default: every table.",
            show_default=False,
        ),
    ] = None,
    check: Annotated[
        bool,
        typer.Option(
            "--check",
            help="Compute nothing: compare each committed table's input digests and versions with the inputs "
            "now, name every stale table and exit 1 if any is.",
        ),
    ] = False,
    fresh: Annotated[
        bool,
        typer.Option(
            "--fresh",
            help="Compute every value again. Default: a table whose values are computed one by one (the "
            "formulas, a model and setup at a time) copies those of its committed file whose inputs are unchanged.",
        ),
    ] = False,
    out: Annotated[
        Path | None,
        typer.Option(
            "--out",
            metavar="DIR",
            help="Write the tables into DIR instead of benchlib/tables/ (to look before committing).",
            show_default=False,
        ),
    ] = None,
) -> None:
    """Compute the tables the site reads (fit's predictions, the speed check, published comparisons)
    and write each atomically with the digests of its inputs (a file that already holds the same
    values is kept as it is, date included); --check only says which are stale.

    Exit codes: 0 all written or kept (or all current); 1 a table is stale (--check) or can't be written; 2 bad options.
    """
    from benchlib import tables as registry
    from benchlib.derive import formula_assets

    known = registry.all_tables()
    unknown = [name for name in only or [] if name not in known]
    if unknown:
        raise usage_error(f"--only: {', '.join(unknown)} is not a table; choose from {', '.join(known)}")
    # A table computed from another's file comes after it (can_i_run_it evaluates llm_formulas).
    chosen = registry.in_order(known[name] for name in dict.fromkeys(only or known))
    if check:
        _check(chosen)
        return
    if out is not None and not out.is_dir():
        raise usage_error(f"--out {out}: the folder {out} does not exist")
    registry.forget_written()
    registry.reuse_committed(not fresh)
    for table in chosen:
        try:
            contents = _compute(table)
        except registry.TableMissing as exc:
            print_error(str(exc))
            raise typer.Exit(1)
        target = (out / table.path.name) if out is not None else table.path
        if registry.holds(target, contents):
            # Idempotent: a second run leaves the files, and their dates, as they were.
            registry.wrote(table.name, target)
            console.print(f"kept {escape(str(target))}, unchanged: {escape(table.summary(contents))}", soft_wrap=True)
        else:
            _write(table, contents, target)
        if table.name == formula_assets.TABLE:
            _write_formula_assets(table, contents, out / "formulas" if out is not None else None)


def _write(table: Table, contents: dict[str, Any], target: Path) -> None:
    from benchlib import tables as registry

    try:
        registry.write(table, contents, target)
    except OSError as exc:
        print_error(
            f"can't write {target} ({exc.strerror or exc}); free some space or choose --out, then run "
            f"`{table.refresh}` again"
        )
        raise typer.Exit(1)
    registry.wrote(table.name, target)
    console.print(f"wrote {escape(str(target))}: {escape(table.summary(contents))}", soft_wrap=True)


def _write_formula_assets(table: Table, contents: dict[str, Any], folder: Path | None) -> None:
    """The picker's copy of the formulas, a file per model, beside the table (`benchlib.derive.formula_assets`)."""
    from benchlib.derive import formula_assets

    folder = folder or formula_assets.assets_folder()
    try:
        written = formula_assets.write_assets(contents, folder)
    except OSError as exc:
        print_error(
            f"can't write the formulas into {folder} ({exc.strerror or exc}); free some space, then run "
            f"`{table.refresh}` again"
        )
        raise typer.Exit(1)
    models = len(contents["models"])
    if not written:
        said = f"kept {folder}: the {models} models' formulas are unchanged"
    elif len(written) < models:
        said = f"wrote {len(written)} of {models} models' formulas into {folder} (the others are unchanged)"
    else:
        said = f"wrote {models} models' formulas into {folder}"
    console.print(escape(said), soft_wrap=True)


def _compute(table: Table) -> dict[str, Any]:
    """The table's file contents, computed under a progress bar of its steps."""
    from benchlib import tables as registry

    with progress_bar() as progress:
        total = table.steps()
        task = progress.add_task(f"{table.name}: inputs", total=total)
        started = [False]

        def on_step(step: str) -> None:
            if started[0]:
                progress.advance(task)
            started[0] = True
            progress.update(task, description=escape(f"{table.name}: {step}"))

        contents = registry.compute(table, on_step)
        progress.update(task, completed=total)
    return contents


def _check(chosen: list[Table]) -> None:
    """Name each stale table and why, and exit 1 if any is; compute nothing."""
    from benchlib import tables as registry

    stale = {table.name: registry.stale_reasons(table) for table in chosen}
    for table in chosen:
        reasons = stale[table.name]
        if not reasons:
            console.print(f"{escape(table.name)}: current", soft_wrap=True)
            continue
        # A reason a line: a table stale for ten reasons still reads at 80 columns.
        print_error(f"{table.path} is stale:")
        for reason in reasons:
            err.print(Wrapped(Text(f"- {reason}"), indent=2, hanging=2))
        err.print(Wrapped(Text(f"Refresh it with `{table.refresh}`."), indent=2))
    names = [name for name, reasons in stale.items() if reasons]
    if names:
        every = set(names) == set(registry.all_tables())
        command = registry.REFRESH if every else f"{registry.REFRESH} --only {' --only '.join(names)}"
        # The command on a line of its own, unbroken, to copy.
        err.print(f"{len(names)} stale table{'s' if len(names) > 1 else ''}; refresh with:", highlight=False)
        err.print(Text(f"  {command}"), soft_wrap=True)
        raise typer.Exit(1)
