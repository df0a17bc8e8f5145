"""`benchlib fit-table`: predict the "Can I run it?" table (memory, and decode speed for inference) and the published comparison, and write them.

The site reads the file this writes (``benchlib/tables/can_i_run_it.json``) instead of predicting
the whole table on every build. Run it after changing a shipped config, the published data or
the predictor, or after upgrading torch, transformers or peft; traces are cached, so a second
run only redoes what changed.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape
from rich.progress import BarColumn, Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

from benchlib.cli.output import console, err, print_error, usage_error


def fit_table(
    out: Annotated[
        Path | None, typer.Option("--out", help="Where to write the table. Default: the file the site reads.")
    ] = None,
    models: Annotated[
        str | None,
        typer.Option(
            "--models", help="Only these shipped models, comma-separated (for a quick look; the site needs them all)."
        ),
    ] = None,
) -> None:
    """Predict memory (and decode speed) for every shipped language model on the GPUs readers get, and compare with published peaks."""
    from benchlib.catalog.language_models import shipped_models
    from benchlib.core.cache import cache_folder
    from benchlib.predict.llm_table import TABLE_FILE, TASKS, predict_table, write_table

    wanted = [m.strip() for m in models.split(",")] if models else None
    unknown = [m for m in wanted or [] if m not in shipped_models()]
    if unknown:
        raise usage_error(f"--models: {', '.join(unknown)} not shipped; choose from {', '.join(shipped_models())}")
    target = out or TABLE_FILE
    if not target.parent.is_dir():
        raise usage_error(f"--out {target}: the folder {target.parent} does not exist")
    count = sum(1 for m in shipped_models().values() if m.on_page and (not wanted or m.name in wanted))
    with Progress(
        SpinnerColumn(),
        TextColumn("{task.description}"),
        BarColumn(),
        TextColumn("{task.completed}/{task.total}"),
        TimeElapsedColumn(),
        console=err,
    ) as progress:
        task = progress.add_task("predicting", total=count * len(TASKS) + 1)
        started = [False]

        def on_step(step: str) -> None:
            if started[0]:
                progress.advance(task)
            started[0] = True
            progress.update(task, description=escape(step))

        table = predict_table(cache_folder("fit-llm"), on_step, wanted)
        progress.advance(task)
    try:
        write_table(table, target)
    except OSError as exc:
        print_error(
            f"can't write {target} ({exc.strerror or exc}); free some space or choose --out, then run again "
            "(the traces are cached, so it will be quick)"
        )
        raise typer.Exit(1)
    console.print(
        f"wrote {target}: {len(table['rows'])} models x {len(TASKS)} tasks; published peaks predicted with "
        f"a median error of {table['median_abs_error']:.1%}",
        soft_wrap=True,
    )
