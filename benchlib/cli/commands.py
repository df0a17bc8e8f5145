"""The `benchlib` app: every command, each a module of this package, registered in the order `--help`
lists them, and each ending a Ctrl-C with one line.

A command's module is imported when an app is made with it: `benchlib predict` makes an app of
`predict` alone (`app_for`), so it doesn't import what `run` or `campaign` need (half a second
of pydantic schemas and more, cold). ``app`` has them all, for ``--help`` and the tests.
"""

from __future__ import annotations

import functools
import importlib
from collections.abc import Callable, Iterable
from typing import Any

import typer

from benchlib.cli.output import err

HELP = (
    "Honest deep-learning hardware benchmarks. Probe a machine, run workloads, and write "
    "results files that the GPU Field Guide turns into charts."
)

# In the order `benchlib --help` lists them: each command's module of this package and function.
COMMANDS = {
    "probe": ("probe", "probe"),
    "list": ("list_workloads", "list_workloads"),
    "run": ("run", "run"),
    "show": ("show", "show"),
    "validate": ("validate", "validate"),
    "import": ("import_results", "import_results"),
    "schema": ("schema", "schema"),
    "facts": ("facts", "facts"),
    "launch": ("launch", "launch"),
    "score": ("score", "score_command"),
    "max-batch": ("max_batch", "max_batch"),
    "fit": ("fit", "fit"),
    "predict": ("predict", "predict"),
    "campaign": ("campaign", "campaign"),
    "contribute": ("contribute", "contribute"),
    "tables": ("tables", "tables"),
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


def make_app(names: Iterable[str]) -> typer.Typer:
    """An app of the commands ``names`` (keys of `COMMANDS`), in `COMMANDS`' order."""
    app = typer.Typer(
        help=HELP,
        no_args_is_help=True,
        add_completion=False,
        pretty_exceptions_enable=False,
        # Help text is Markdown: a docstring's paragraphs reflow to the terminal's width.
        rich_markup_mode="markdown",
    )
    # A group even of one command, so that `benchlib predict` still takes its command's name.
    app.callback()(lambda: None)
    wanted = set(names)
    for name, (module, function) in COMMANDS.items():
        if name in wanted:
            command = getattr(importlib.import_module(f"benchlib.cli.{module}"), function)
            app.command(name)(interruptible(command))
    return app


def app_for(arguments: list[str]) -> typer.Typer:
    """The app that answers ``arguments`` (the command line after ``benchlib``): one of the named
    command alone, else of every command (``--help``, a mistyped name)."""
    named = arguments[0] if arguments else None
    return make_app([named] if named in COMMANDS else COMMANDS)


@functools.cache
def _every_command() -> typer.Typer:
    return make_app(COMMANDS)


def __getattr__(name: str) -> Any:
    """``app``: every command, made on first use."""
    if name == "app":
        return _every_command()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
