"""The `benchlib` app: every command, each a module of this package, registered in the order `--help`
lists them, and each ending a Ctrl-C with one line."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import typer

from benchlib.cli import (
    campaign,
    contribute,
    facts,
    fit,
    import_results,
    launch,
    list_workloads,
    max_batch,
    predict,
    probe,
    run,
    schema,
    score,
    show,
    tables,
    validate,
)
from benchlib.cli.output import err

app = typer.Typer(
    help="Honest deep-learning hardware benchmarks. Probe a machine, run workloads, and write "
    "results files that the GPU Field Guide turns into charts.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    # Help text is Markdown: a docstring's paragraphs reflow to the terminal's width.
    rich_markup_mode="markdown",
)

# In the order `benchlib --help` lists them.
COMMANDS = {
    "probe": probe.probe,
    "list": list_workloads.list_workloads,
    "run": run.run,
    "show": show.show,
    "validate": validate.validate,
    "import": import_results.import_results,
    "schema": schema.schema,
    "facts": facts.facts,
    "launch": launch.launch,
    "score": score.score_command,
    "max-batch": max_batch.max_batch,
    "fit": fit.fit,
    "predict": predict.predict,
    "campaign": campaign.campaign,
    "contribute": contribute.contribute,
    "tables": tables.tables,
}


def interruptible(command: Callable[..., None]) -> Callable[..., None]:
    """The command, whose Ctrl-C ends it with one line and exit code 130 wherever it comes: typer would
    end it silently. A command that says more (what was saved, how to resume) catches it first."""

    @functools.wraps(command)
    def run(*args: Any, **kwargs: Any) -> None:
        try:
            command(*args, **kwargs)
        except KeyboardInterrupt:
            err.print("[yellow]interrupted[/]")
            raise typer.Exit(130)

    return run


for name, command in COMMANDS.items():
    app.command(name)(interruptible(command))
