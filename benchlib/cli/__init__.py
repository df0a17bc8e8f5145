"""The `benchlib` command: probe, list, run, show, validate, import, schema, score, facts, fit, predict,
max-batch, launch, campaign, contribute, tables.

Exit codes: 0 all ok; 1 some workloads failed (the others are kept and reported), a file
is invalid, or the results file can't be written (a full disk); 2 usage error, with a one-line
message and no traceback.

Each command is a module of this package; `benchlib.cli.output` holds what they share. Nothing
outside this package imports it: the library never depends on its command line.
"""

from __future__ import annotations

import sys

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
for name, command in COMMANDS.items():
    app.command(name)(command)


def main() -> None:
    try:
        app()
    except KeyboardInterrupt:
        sys.exit(130)
