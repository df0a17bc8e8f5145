"""The `benchlib` command: probe, list, run, show, validate, import, score.

Exit codes: 0 all ok; 1 some workloads failed (the others are kept and reported), a file
is invalid, or the results file can't be written (a full disk); 2 usage error, with a one-line
message and no traceback.

Every string that comes from a results file is printed as plain text (`Text`, `escape`), never
as rich markup: a device name like "[/]" must neither style the output nor crash it.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from typing import Annotated, Optional

import typer
from rich.console import Console, ConsoleOptions, Group, RenderableType, RenderResult
from rich.markup import escape
from rich.progress import BarColumn, Progress, SpinnerColumn, TextColumn, TimeElapsedColumn
from rich.table import Table
from rich.text import Text

app = typer.Typer(
    help="Honest deep-learning hardware benchmarks. Probe a machine, run workloads, and write "
    "results files that the GPU Field Guide turns into charts.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)
console = Console()
err = Console(stderr=True)

STATUS_STYLE = {"ok": "green", "skipped": "yellow", "oom": "red", "error": "red", "invalid": "magenta"}


def usage_error(message: str) -> typer.Exit:
    # Plain text: messages quote file names and user input; soft wrap keeps paths copyable.
    err.print(Text.assemble(("error:", "bold red"), " ", message), soft_wrap=True)
    return typer.Exit(2)


@app.command()
def probe(
    as_json: Annotated[bool, typer.Option("--json", help="Print the machine record as JSON.")] = False,
    results_dir: Annotated[Path, typer.Option("--out", help="Where results would be written (its disk is reported).")] = Path("results"),
) -> None:
    """Describe this machine: platform, CPU, memory, disk, /dev/shm, GPUs, TPU and software."""
    from benchlib.probe import machine_table, probe_machine

    machine = probe_machine(results_dir=str(results_dir))
    if as_json:
        print(machine.model_dump_json(indent=2))
    else:
        console.print(machine_table(machine))


DETAIL_INDENT = 4


class Wrapped:
    """Text wrapped to the console's width, indented (continuation lines by ``hanging`` more), none
    padded or ending in spaces.

    `list` and the run tables put long text (descriptions, parameters, messages) on lines of its
    own, indented under a line of short fields: a table column per field wrapped it one word per
    line at 80 columns or in a notebook cell. Nor is any line padded to the full width: a notebook
    cell narrower than that would wrap the padding.
    """

    def __init__(self, text: Text, indent: int = 0, hanging: int = 0) -> None:
        self.text = text
        self.indent = indent
        self.hanging = hanging

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        width = max(options.max_width - self.indent, 20)
        first = self.text.wrap(console, width, justify="default")[0]
        rest = self.text[len(first.plain):]
        rest = rest[len(rest.plain) - len(rest.plain.lstrip()):]  # the space the line broke at
        more = rest.wrap(console, max(width - self.hanging, 20), justify="default") if rest.plain else []
        for line, indent in [(first, self.indent), *((m, self.indent + self.hanging) for m in more)]:
            line.rstrip()
            yield Text(" " * indent) + line


@app.command("list")
def list_workloads() -> None:
    """List the registered workloads, their framework and the suites they belong to."""
    from benchlib.workloads import all_workloads

    lines: list[RenderableType] = [Text("name  framework · metric (unit) · suites", style="dim")]
    for w in all_workloads().values():
        suites = ", ".join(w.suites) or "in no suite; run it with --only"
        facts = f"  {w.framework} · {w.metric.name} ({w.metric.unit}) · {suites}"
        lines.append(Wrapped(Text.assemble((w.name, "bold"), facts), hanging=len(w.name) + 2))
        lines.append(Wrapped(Text(w.description), indent=DETAIL_INDENT))
    console.print(Group(*lines))


def records_table(measurements: list, title: str) -> Group:
    """The measurements as aligned lines of short fields, each with its parameters and message under it."""
    devices = {m.device_name or m.device for m in measurements}
    heading = Text(title, style="bold")
    if len(devices) == 1:
        heading.append(f" · device: {next(iter(devices))}")
    rows: list[tuple[list[Text], list[Text]]] = []
    for m in measurements:
        value = f"{m.value:.4g} {m.metric.unit}" if m.value is not None else "—"
        if m.efficiency is not None:
            value += f" ({m.efficiency:.0%} of peak)"
        noise = f"±{m.stats.iqr / m.stats.median:.0%}" if m.stats and m.stats.median else ""
        if m.stats and m.stats.noisy:
            noise += " noisy"
        status = Text(m.status, style=STATUS_STYLE.get(m.status, "white"))
        params = " ".join(f"{k}={v}" for k, v in m.params.items() if not isinstance(v, (list, dict)))
        device = (m.device_name or m.device) if len(devices) > 1 else ""
        details = [Text(" · ".join(filter(None, (device, params))), style="dim"), Text(m.message or "")]
        cells = [Text(m.workload), Text(m.dtype or ""), Text(value), Text(noise), status]
        rows.append((cells, [d for d in details if d.plain]))
    header = [Text(name, style="bold") for name in ("workload", "dtype", "value", "noise", "status")]
    widths = [max(row[i].cell_len for row in [header] + [cells for cells, _ in rows]) for i in range(len(header))]

    def line(cells: list[Text]) -> Text:
        padded = [cell.copy() for cell in cells]
        for cell, width in zip(padded[:-1], widths):
            cell.pad_right(width - cell.cell_len)
        return Text("  ").join(padded)

    out: list[RenderableType] = [Wrapped(heading)]
    if not rows:
        out.append(Text("no measurements", style="dim"))
        return Group(*out)
    out.append(Wrapped(line(header)))
    for cells, details in rows:
        out.append(Wrapped(line(cells)))
        out.extend(Wrapped(d, indent=DETAIL_INDENT) for d in details)
    return Group(*out)


RESUME_HELP = (
    "Finish a run that was killed or cut short by --budget: give its results file, or a folder (such as "
    "your --out folder) holding exactly one unfinished run of this machine. Only the workloads not yet "
    "finished run, into the same file; --suite, --only and --device come from that file."
)


@app.command()
def run(
    suite: Annotated[Optional[str], typer.Option(help="quick (seconds on a CPU), standard (minutes on a free T4) or full. [default: quick]", show_default=False)] = None,
    only: Annotated[Optional[list[str]], typer.Option("--only", help="Run only this workload (repeatable).")] = None,
    device: Annotated[Optional[str], typer.Option(help="auto, cpu, cuda or mps. auto picks the best available. [default: auto]", show_default=False)] = None,
    out: Annotated[Path, typer.Option(help="Results folder; the file goes to OUT/<machine id>/<run id>.json. A Drive folder works: each workload costs one atomic rename.")] = Path("results"),
    resume: Annotated[Optional[Path], typer.Option("--resume", metavar="FILE_OR_FOLDER", help=RESUME_HELP)] = None,
    budget: Annotated[Optional[float], typer.Option("--budget", metavar="SECONDS", min=0, help="Start no workload that isn't expected to finish within this many seconds from now (estimates come from this machine's earlier runs, else the workload's own); the rest are recorded as skipped, to finish later with --resume.")] = None,
    isolate: Annotated[bool, typer.Option("--isolate/--no-isolate", help="Run each workload in its own process, so one that crashes Python (segfault, OOM killer) is recorded as an error and the run goes on.")] = True,
    devices: Annotated[Optional[int], typer.Option("--devices", min=1, metavar="N", help="Data-parallel training on 1 and on N devices instead of the suite; the same as `benchlib launch --nproc N`.")] = None,
) -> None:
    """Run a suite of workloads and write a results file after every workload.

    A run killed at any point (Ctrl-C, SIGKILL, a Colab disconnect) leaves a valid file with
    everything finished so far; `benchlib run --resume` finishes it.
    """
    from benchlib.backends import DeviceUnavailable
    from benchlib.isolation import prestart
    from benchlib.probe import probe_machine
    from benchlib.results.schema import MeasurementRecord
    from benchlib.results.store import ResultsError
    from benchlib.runner import (
        SUITES,
        NothingToResume,
        ResumeError,
        SaveError,
        find_resumable,
        preload_modules,
        resolve_device,
        resumable,
        resume_run,
        run_suite,
        select_workloads,
        unfinished,
    )
    from benchlib.score_report import run_summary
    from benchlib.workloads import UnknownWorkload, Workload

    if devices is not None:
        if only or resume is not None:
            raise usage_error("--devices runs the data-parallel workload; drop --only and --resume")
        from benchlib.distributed.cli import launch as launch_scaling

        return launch_scaling(nproc=devices, size=suite or "quick", device=device or "auto", out=out)
    called = time.perf_counter()
    if resume is not None:
        given = [name for name, value in (("--suite", suite), ("--only", only), ("--device", device)) if value]
        if given:
            raise usage_error(f"--resume continues a run as it was planned; drop {', '.join(given)}")
    suite = suite or "quick"
    device = device or "auto"
    if suite not in SUITES:
        raise usage_error(f"unknown suite {suite!r}; choose one of {', '.join(SUITES)}")
    if device not in ("auto", "cpu", "cuda", "mps"):
        raise usage_error(f"unknown device {device!r}; choose auto, cpu, cuda or mps")
    try:
        workloads = select_workloads(suite, only) if resume is None else []
        resolve_device(device)
    except UnknownWorkload as exc:
        raise usage_error(f"{exc} (see `benchlib list`)")
    except DeviceUnavailable as exc:
        raise usage_error(f"{exc}; use --device auto or cpu")
    if isolate and workloads:
        # The children's process server imports the frameworks while this process probes the machine.
        prestart(preload_modules(workloads))

    where = out if resume is None else resume if resume.is_dir() else resume.parent
    machine = probe_machine(results_dir=str(where))
    err.print(f"machine: [bold]{escape(machine.label)}[/] ({escape(machine.id)})")
    path = None
    if resume is not None:
        try:
            path = find_resumable(resume, machine.id)
            previous = resumable(path, machine)
        except NothingToResume as done:
            # Resuming is idempotent: a run that finished (say, within its --budget) is not an error.
            err.print(Text(str(done)), soft_wrap=True)
            return
        except (ResumeError, ResultsError) as exc:
            raise usage_error(str(exc))
        suite = previous.plan.size if previous.plan else suite
        left = unfinished(previous)
        planned = len(previous.plan.workloads) if previous.plan else 0
        err.print(Text(f"resuming {path}: {planned - len(left)} of {planned} workloads finished; to run: {', '.join(left)}"))
    with Progress(
        SpinnerColumn(), TextColumn("{task.description}"), BarColumn(), TextColumn("{task.completed}/{task.total}"),
        TimeElapsedColumn(), console=err, transient=False,
    ) as progress:
        task = progress.add_task(escape(f"{suite} suite"), total=len(left) if path is not None else len(workloads))

        def on_start(w: Workload) -> None:
            progress.update(task, description=escape(f"{suite} suite: {w.name}"))

        def on_done(w: Workload, records: list[MeasurementRecord]) -> None:
            bad = [r for r in records if r.status != "ok"]
            line = Text(f"  {w.name}: {len(records)} measurement(s)")
            if bad:
                line.append(f" {len(bad)} not ok", style="yellow")
                if bad[0].skip_reason == "budget" or bad[0].crash is not None:
                    line.append(f" ({bad[0].message})", style="dim")
            progress.console.print(line)
            progress.advance(task)

        def on_output(w: Workload, output: str) -> None:
            progress.console.print(Text(output.rstrip("\n"), style="dim"))

        hooks = dict(on_start=on_start, on_done=on_done, on_output=on_output)
        again = path if path is not None else out
        # The budget counts from when the command started, probing included.
        budget = None if budget is None else max(budget - (time.perf_counter() - called), 0.0)
        try:
            if path is not None:
                outcome = resume_run(path, machine=machine, budget_s=budget, isolate=isolate, **hooks)
            else:
                outcome = run_suite(workloads, suite=suite, device=device, machine=machine, out_dir=out,
                                    budget_s=budget, isolate=isolate, **hooks)
        except (ResumeError, ResultsError) as exc:
            raise usage_error(str(exc))
        except UnknownWorkload as exc:
            raise usage_error(f"{path}: {exc}; the run needs the same workloads installed to resume")
        except DeviceUnavailable as exc:
            raise usage_error(f"{path}: {exc}; this run can only be finished on a machine with that device")
        except SaveError as exc:
            # A full disk or a read-only folder is no bug of benchlib's: one message, no traceback.
            progress.stop()
            err.print(Text.assemble(("error:", "bold red"), " ", str(exc)), soft_wrap=True)
            raise typer.Exit(1)
        except KeyboardInterrupt:
            progress.stop()
            err.print(
                f"[yellow]interrupted; what finished is saved. Finish the run with `benchlib run --resume {escape(str(again))}`[/]",
                soft_wrap=True,
            )
            raise typer.Exit(130)
    results = outcome.results
    console.print(records_table(results.measurements, f"{machine.label}: {results.suite} suite"))
    for line in run_summary(results):
        console.print(line)
    verb = "resumed and wrote" if path is not None else "wrote"
    # soft_wrap: a path split over two lines can't be copied into the next command.
    err.print(f"{verb} [bold]{escape(str(outcome.path))}[/] in {outcome.wall_s:.1f} s", soft_wrap=True)
    if outcome.overhead_s:
        first, *rest = outcome.overhead_s.values()
        after = f", then {sum(rest) / len(rest):.2f} s per workload" if rest else ""
        err.print(f"[dim]process isolation: {first:.2f} s for the first workload (starting the process server){after}[/]")
    if outcome.skipped_for_budget:
        err.print(
            f"[yellow]{len(outcome.skipped_for_budget)} workload(s) skipped for the budget; finish them with "
            f"`benchlib run --resume {escape(str(outcome.path))}`[/]",
            soft_wrap=True,
        )
    if outcome.failed:
        err.print(f"[red]{len(outcome.failed)} measurement(s) failed; the others are kept in the file.[/]")
        raise typer.Exit(1)


@app.command()
def show(file: Annotated[Path, typer.Argument(help="A results file.")]) -> None:
    """Print a results file as a table."""
    from benchlib.conditions import disturbed_line
    from benchlib.results.store import ResultsError, read_results

    try:
        results = read_results(file)
    except ResultsError as exc:
        err.print(f"[bold red]invalid:[/] {escape(str(exc))}")
        raise typer.Exit(1)
    p = results.provenance
    origin = "measured by benchlib" if p.kind == "measured" else f"reported by {p.source_url} (as of {p.as_of})"
    console.print(Wrapped(Text.assemble(
        (results.machine.label, "bold"), f" · run {results.run_id} · {results.created:%Y-%m-%d %H:%M} UTC · {origin}"
    )))
    if not results.complete:
        console.print("[yellow]this run did not finish; the measurements below are the ones it completed[/]")
    disturbed = disturbed_line(results)
    if disturbed:
        console.print(Text(disturbed, style="yellow"))
    console.print(records_table(results.measurements, f"suite {results.suite or '—'}"))


@app.command()
def validate(
    paths: Annotated[list[Path], typer.Argument(help="Results files or folders (searched recursively).")],
) -> None:
    """Check results files against the schema; report every bad file and exit 1 if any.

    Values no real run can produce (above the device's peak, zero times, ...) are listed as
    implausible: they don't fail validation, but every reader marks them invalid.
    """
    from benchlib.results.plausibility import findings
    from benchlib.results.store import read_results, validate_paths

    good, bad = validate_paths(paths)
    for path in good:
        # Not an error: such values are kept and marked invalid wherever the file is read.
        for problem in findings(read_results(path, mark_implausible=False)):
            err.print(Text.assemble(("implausible ", "yellow"), f"{path}: {problem}"), soft_wrap=True)
    for exc in bad:
        err.print(f"[red]invalid[/] {escape(exc.path)}")
        for problem in exc.problems:
            err.print(Text(f"    {problem}"))
    if not good and not bad:
        raise usage_error("no results files found in " + ", ".join(map(str, paths)))
    console.print(f"{len(good)} valid, {len(bad)} invalid")
    if bad:
        raise typer.Exit(1)


IMPORT_STYLE = {"imported": "green", "duplicate": "yellow", "invalid": "red"}


@app.command("import")
def import_(
    files: Annotated[list[Path], typer.Argument(help="Contributed results files or folders (searched for *.json).")],
    into: Annotated[Path, typer.Option("--into", help="The results folder to file them in, as <machine id>/<run id>.json.")] = Path("results"),
) -> None:
    """Validate contributed results files, skip duplicates, and file the rest into the results folder.

    Values no real run can produce are kept but marked invalid. Exits 1 if any file was refused.
    """
    from benchlib.results.importer import import_files

    outcomes = import_files(files, into)
    if not outcomes:
        raise usage_error("no results files found in " + ", ".join(map(str, files)))
    table = Table(title="import")
    for col in ("file", "result", "details"):
        table.add_column(col, overflow="fold")
    for o in outcomes:
        details = [f"→ {o.destination}"] if o.destination else []
        table.add_row(Text(str(o.source)), Text(o.outcome, style=IMPORT_STYLE[o.outcome]), Text("\n".join(details + o.reasons)))
    console.print(table)
    counts = {k: sum(o.outcome == k for o in outcomes) for k in IMPORT_STYLE}
    console.print(", ".join(f"{n} {k}" for k, n in counts.items()))
    if counts["invalid"]:
        raise typer.Exit(1)


@app.command()
def schema() -> None:
    """Print the JSON Schema of the results format."""
    from benchlib.results.store import json_schema

    print(json.dumps(json_schema(), indent=2))


def _register_feature_commands() -> None:
    # Each feature keeps its command beside its code; importing them is cheap (no frameworks).
    from benchlib.dated_facts import facts
    from benchlib.distributed.cli import launch
    from benchlib.fit.cli import fit, max_batch
    from benchlib.score_report import score_command

    app.command("facts")(facts)
    app.command("launch")(launch)
    app.command("score")(score_command)
    app.command("max-batch")(max_batch)
    app.command("fit")(fit)


_register_feature_commands()


def main() -> None:
    try:
        app()
    except KeyboardInterrupt:
        sys.exit(130)


if __name__ == "__main__":
    main()
