"""`benchlib campaign`: measure what the guide predicts about this device, then print predicted against measured.

Exit codes: 0 when everything that ran succeeded; 1 when a step or a measurement failed (named
in the output; every other result is kept) or a file can't be written; 2 for bad options; 130
when interrupted (every file written so far is valid and kept).
"""

from __future__ import annotations

import statistics
from pathlib import Path
from typing import Annotated, NoReturn

import typer
from rich.markup import escape
from rich.text import Text

from benchlib.cli.output import (
    DETAIL_INDENT,
    Wrapped,
    at_least,
    console,
    err,
    print_error,
    progress_bar,
    usage_error,
)
from benchlib.core.budgets import DEFAULT_MINUTES, TINY_MINUTES
from benchlib.core.units import format_bytes
from benchlib.measure import campaign as plan_module
from benchlib.measure.isolation import prestart
from benchlib.results.schema import FAILED_STATUSES

DEVICES = ("auto", "cuda", "cpu")


def campaign(
    device: Annotated[str, typer.Option(help="auto (a GPU if there is one), cuda or cpu.")] = "auto",
    tiny: Annotated[
        bool,
        typer.Option(
            "--tiny",
            help="Small sizes and a 16 MiB memory cap: minutes on a CPU, for trying the command (and CI), not for publishing.",
        ),
    ] = False,
    minutes: Annotated[
        float | None,
        typer.Option(
            "--minutes",
            callback=at_least(0.5),
            help="Time budget: a step that would end later is skipped and listed. [default: 9, or 5 with --tiny]",
            show_default=False,
        ),
    ] = None,
    out: Annotated[
        Path, typer.Option(help="Results folder; each step's file goes to `OUT/<machine id>/<run id>.json`.")
    ] = Path("results"),
) -> None:
    """Check everything the guide predicts on this device: the standard suite, the largest batch
    of fit's models and of two small language models against fit's prediction, and the long
    matmul sweep; then print one table of predicted against measured, with the error of each.
    """
    state = measure(device, tiny, minutes, out)
    if report(state):
        raise typer.Exit(1)


def measure(device: str, tiny: bool, minutes: float | None, out: Path) -> plan_module.Campaign:
    """Probe this machine and run the campaign's steps into ``out``; a usage error, a full disk or
    an interrupt ends the command with its message (and every file written so far kept)."""
    from benchlib import probe
    from benchlib.backends import DeviceUnavailable
    from benchlib.derive.searched import fit_guess
    from benchlib.measure import runner

    if device not in DEVICES:
        raise usage_error(f"unknown device {device!r}; choose auto, cuda or cpu")
    try:
        resolved = runner.resolve_device(device)
    except DeviceUnavailable as exc:
        raise usage_error(f"{exc}; use --device auto or cpu")
    if resolved not in ("cuda", "cpu"):
        raise usage_error(
            f"benchlib campaign runs on a CUDA GPU or the CPU, and auto found {resolved}; use --device cpu"
        )
    budget_min = minutes if minutes is not None else (TINY_MINUTES if tiny else DEFAULT_MINUTES)
    try:
        # Before minutes of importing and probing: a folder it can't make is known now.
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        _cannot_write(out, exc)
    # The children's process server imports the frameworks while this process probes the machine.
    prestart(plan_module.preload_modules(tiny))
    machine = probe.probe_machine(results_dir=str(out))
    err.print(
        f"machine: [bold]{escape(machine.label)}[/] ({escape(machine.id)}); campaign on {resolved}, "
        f"budget {budget_min:g} min{' (tiny)' if tiny else ''}"
    )
    steps = plan_module.steps(tiny)
    state = plan_module.Campaign(
        device=resolved, tiny=tiny, out=out, machine=machine, budget_s=budget_min * 60, guess=fit_guess
    )
    try:
        run_with_progress(state, steps)
    except runner.SaveError as exc:
        print_error(str(exc))
        raise typer.Exit(1)
    except OSError as exc:
        _cannot_write(out, exc)
    except KeyboardInterrupt:
        err.print(
            f"[yellow]interrupted; every file written so far is valid and kept in {escape(str(out))}[/]", soft_wrap=True
        )
        raise typer.Exit(130)
    return state


def _cannot_write(out: Path, exc: OSError) -> NoReturn:
    print_error(f"cannot write to {out}: {exc.strerror or exc}; free some space or choose another --out folder")
    raise typer.Exit(1)


def run_with_progress(state: plan_module.Campaign, steps: list[plan_module.Step]) -> None:
    with progress_bar() as progress:
        task = progress.add_task("campaign", total=len(steps))
        state.on_output = lambda line: progress.console.print(Text(line.rstrip("\n"), style="dim"))

        def on_step(step: plan_module.Step, what: str) -> None:
            if what == "start":
                progress.update(task, description=escape(f"campaign: {step.title}"))
                progress.console.print(Text(step.title, style="bold"))
                return
            if what == "skipped":
                progress.console.print(
                    Text(f"{step.title}: skipped, it would not end within the budget", style="yellow")
                )
            progress.advance(task)

        plan_module.run_campaign(state, steps, on_step)
        progress.update(task, description="campaign: done")


def _value(value: float, unit: str) -> str:
    if unit == "bytes":
        return format_bytes(int(value))
    if unit == "samples":
        return f"{int(value):,}"
    return f"{value:,.1f}" if value < 1000 else f"{value:,.0f}"


def report(state: plan_module.Campaign) -> int:
    """Print the table of predicted against measured, the sweep comparison, what was skipped and
    the files; return how many steps and measurements failed."""
    from benchlib.derive.checks import checks, sweeps
    from benchlib.results.store import read_results
    from benchlib.workloads import LARGEST_BATCH, checked_by

    files = [read_results(path) for path in dict.fromkeys(state.written)]
    found = checks(files)
    console.print(Wrapped(Text(f"Predicted against measured · {state.machine.label}", style="bold")))
    if found:
        console.print(Wrapped(Text("error: predicted ÷ measured − 1 (+10% predicts 10% too high)", style="dim")))
        header = ["check", "predicted", "measured", "error"]
        rows = [[c.kind, _value(c.predicted, c.unit), _value(c.measured, c.unit), f"{c.error:+.0%}"] for c in found]
        widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]
        console.print(Wrapped(Text("  ".join(h.ljust(w) for h, w in zip(header, widths)).rstrip(), style="bold")))
        for check, row in zip(found, rows):
            console.print(Wrapped(Text("  ".join(c.ljust(w) for c, w in zip(row, widths)).rstrip())))
            console.print(Wrapped(Text(check.what, style="dim"), indent=DETAIL_INDENT))
        for kind in dict.fromkeys(c.kind for c in found):
            errors = [abs(c.error) for c in found if c.kind == kind]
            console.print(
                Wrapped(Text(f"{kind}: median absolute error {statistics.median(errors):.0%} over {len(errors)}"))
            )
    else:
        console.print(Wrapped(Text("no checks: nothing measured had a prediction to compare with", style="yellow")))
    for sweep in sweeps(files):
        share = f" in {sweep.time_share:.0%} of its time" if sweep.time_share is not None else ""
        console.print(
            Wrapped(
                Text(
                    f"{sweep.short.workload} {sweep.dtype}: sizes up to {max(sweep.short.params['sizes'])} reached {sweep.reached:.0%} of the best "
                    f"with sizes up to {max(sweep.long.params['sizes'])}{share}"
                )
            )
        )
    # Running out of memory is what a largest-batch search looks for, not a failure.
    searches = set(checked_by(LARGEST_BATCH))
    failed = [
        f"{r.workload}: {r.message or ''}"
        for f in files
        for r in f.measurements
        if r.status in FAILED_STATUSES and not (r.workload in searches and r.status == "oom")
    ]
    for line in [*state.failed, *failed]:
        err.print(Text(f"failed: {line}", style="red"), soft_wrap=True)
    if state.skipped:
        err.print(
            Text(f"skipped for the budget: {', '.join(state.skipped)}; give more --minutes to run them", style="yellow")
        )
    for path in dict.fromkeys(state.written):
        err.print(Text(f"wrote {path}"), soft_wrap=True)
    if state.failed or failed:
        err.print(f"[red]{len(state.failed) + len(failed)} failure(s); everything else is kept in the files.[/]")
    return len(state.failed) + len(failed)
