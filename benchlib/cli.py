"""The `benchlib` command: probe, list, run, show, validate.

Exit codes: 0 all ok; 1 some workloads failed (the others are kept and reported) or a file
is invalid; 2 usage error, with a one-line message and no traceback.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated, Optional

import typer
from rich.console import Console
from rich.progress import BarColumn, Progress, SpinnerColumn, TextColumn, TimeElapsedColumn
from rich.table import Table

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
    err.print(f"[bold red]error:[/] {message}")
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


@app.command("list")
def list_workloads() -> None:
    """List the registered workloads, their framework and the suites they belong to."""
    from benchlib.workloads import all_workloads

    table = Table(title="workloads")
    for col in ("name", "framework", "metric", "suites", "description"):
        table.add_column(col)
    for w in all_workloads().values():
        table.add_row(w.name, w.framework, f"{w.metric.name} ({w.metric.unit})", ", ".join(w.suites), w.description)
    console.print(table)


def records_table(measurements: list, title: str) -> Table:
    table = Table(title=title)
    for col in ("workload", "device", "dtype", "params", "value", "noise", "status"):
        table.add_column(col, overflow="fold", max_width=28 if col == "params" else None)
    for m in measurements:
        value = f"{m.value:.4g} {m.metric.unit}" if m.value is not None else "—"
        if m.efficiency is not None:
            value += f" ({m.efficiency:.0%} of peak)"
        noise = f"±{m.stats.iqr / m.stats.median:.0%}" if m.stats and m.stats.median else ""
        if m.stats and m.stats.noisy:
            noise += " noisy"
        status = f"[{STATUS_STYLE.get(m.status, 'white')}]{m.status}[/]"
        if m.message:
            status += f"\n{m.message}"
        params = " ".join(f"{k}={v}" for k, v in m.params.items() if not isinstance(v, (list, dict)))
        table.add_row(m.workload, m.device_name or m.device, m.dtype or "", params, value, noise, status)
    return table


@app.command()
def run(
    suite: Annotated[str, typer.Option(help="quick (seconds on a CPU), standard (minutes on a free T4) or full.")] = "quick",
    only: Annotated[Optional[list[str]], typer.Option("--only", help="Run only this workload (repeatable).")] = None,
    device: Annotated[str, typer.Option(help="auto, cpu, cuda or mps. auto picks the best available.")] = "auto",
    out: Annotated[Path, typer.Option(help="Results folder; the file goes to OUT/<machine id>/<run id>.json.")] = Path("results"),
) -> None:
    """Run a suite of workloads and write a results file after every workload."""
    from benchlib.backends import DeviceUnavailable
    from benchlib.probe import probe_machine
    from benchlib.runner import SUITES, resolve_device, run_suite, select_workloads
    from benchlib.workloads import UnknownWorkload

    if suite not in SUITES:
        raise usage_error(f"unknown suite {suite!r}; choose one of {', '.join(SUITES)}")
    if device not in ("auto", "cpu", "cuda", "mps"):
        raise usage_error(f"unknown device {device!r}; choose auto, cpu, cuda or mps")
    try:
        workloads = select_workloads(suite, only)
        resolve_device(device)
    except UnknownWorkload as exc:
        raise usage_error(f"{exc} (see `benchlib list`)")
    except DeviceUnavailable as exc:
        raise usage_error(f"{exc}; use --device auto or cpu")

    machine = probe_machine(results_dir=str(out))
    err.print(f"machine: [bold]{machine.label}[/] ({machine.id})")
    with Progress(
        SpinnerColumn(), TextColumn("{task.description}"), BarColumn(), TextColumn("{task.completed}/{task.total}"),
        TimeElapsedColumn(), console=err, transient=False,
    ) as progress:
        task = progress.add_task(f"{suite} suite", total=len(workloads))

        def on_start(w: object) -> None:
            progress.update(task, description=f"{suite} suite: {getattr(w, 'name')}")

        def on_done(w: object, records: list) -> None:
            bad = [r for r in records if r.status != "ok"]
            note = f" [yellow]{len(bad)} not ok[/]" if bad else ""
            progress.console.print(f"  {getattr(w, 'name')}: {len(records)} measurement(s){note}")
            progress.advance(task)

        outcome = run_suite(workloads, suite=suite, device=device, machine=machine, out_dir=out, on_start=on_start, on_done=on_done)
    console.print(records_table(outcome.results.measurements, f"{machine.label}: {suite} suite"))
    err.print(f"wrote [bold]{outcome.path}[/] in {outcome.wall_s:.1f} s")
    if outcome.failed:
        err.print(f"[red]{len(outcome.failed)} measurement(s) failed; the others are kept in the file.[/]")
        raise typer.Exit(1)


@app.command()
def show(file: Annotated[Path, typer.Argument(help="A results file.")]) -> None:
    """Print a results file as a table."""
    from benchlib.results.store import ResultsError, read_results

    try:
        results = read_results(file)
    except ResultsError as exc:
        err.print(f"[bold red]invalid:[/] {exc}")
        raise typer.Exit(1)
    p = results.provenance
    origin = "measured by benchlib" if p.kind == "measured" else f"reported by {p.source_url} (as of {p.as_of})"
    console.print(f"[bold]{results.machine.label}[/] · run {results.run_id} · {results.created:%Y-%m-%d %H:%M} UTC · {origin}")
    if not results.complete:
        console.print("[yellow]this run did not finish; the measurements below are the ones it completed[/]")
    console.print(records_table(results.measurements, f"suite {results.suite or '—'}"))


@app.command()
def validate(
    paths: Annotated[list[Path], typer.Argument(help="Results files or folders (searched recursively).")],
) -> None:
    """Check results files against the schema; report every bad file and exit 1 if any."""
    from benchlib.results.store import validate_paths

    good, bad = validate_paths(paths)
    for exc in bad:
        err.print(f"[red]invalid[/] {exc.path}")
        for problem in exc.problems:
            err.print(f"    {problem}")
    if not good and not bad:
        raise usage_error("no results files found in " + ", ".join(map(str, paths)))
    console.print(f"{len(good)} valid, {len(bad)} invalid")
    if bad:
        raise typer.Exit(1)


@app.command()
def schema() -> None:
    """Print the JSON Schema of the results format."""
    from benchlib.results.store import json_schema

    print(json.dumps(json_schema(), indent=2))


def main() -> None:
    try:
        app()
    except KeyboardInterrupt:
        sys.exit(130)


if __name__ == "__main__":
    main()
