"""The `benchlib` command: probe, list, run, show, validate, import, schema, score, facts, fit, predict,
max-batch, launch, campaign, contribute, tables.

Exit codes: 0 all ok; 1 some workloads failed (the others are kept and reported), a file
is invalid, or the results file can't be written (a full disk); 2 usage error, with a one-line
message and no traceback; 130 interrupted (Ctrl-C), with one line saying so.

Each command is a module of this package, `benchlib.cli.commands` makes them one app, and
`benchlib.cli.output` holds what they share. Nothing outside this package imports it: the library
never depends on its command line.

Importing this package imports nothing else: `main` imports the command it runs (typer, rich and
the command's modules) where it handles Ctrl-C, which would otherwise print the traceback of an
import.
"""

from __future__ import annotations

import sys
from typing import Any


def main() -> None:
    try:
        from benchlib.cli.commands import app_for

        app_for(sys.argv[1:])()
    except KeyboardInterrupt:
        sys.stderr.write("interrupted\n")  # rich may not be imported yet
        sys.exit(130)


def __getattr__(name: str) -> Any:
    """``app`` (every command) and ``COMMANDS`` (`benchlib.cli.commands`), imported on first use."""
    if name in ("app", "COMMANDS"):
        from benchlib.cli import commands

        return getattr(commands, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
