"""`benchlib fit` run as a reader runs it, for the tests of its language-model answers."""

from __future__ import annotations

import typer
from click.testing import Result
from typer.testing import CliRunner

from benchlib.cli.fit import fit


def command() -> typer.Typer:
    app = typer.Typer()
    app.command("fit")(fit)
    app.command("unused")(lambda: None)  # two commands, so the first argument names the command
    return app


def invoke(*args: str) -> Result:
    return CliRunner().invoke(command(), ["fit", *args])
