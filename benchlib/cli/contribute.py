"""`benchlib contribute`: measure this machine for the guide, check the run, and write one file to send.

Exit codes: 0 when the file is ready to send; 1 when the run failed its check (the file is kept,
marked as not ready, and the reasons printed) or a file can't be written; 2 for bad options; 130
when interrupted (every results file written so far is kept).
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated
from urllib.parse import urlencode

import typer
from rich.text import Text

from benchlib.cli.campaign import DEVICES, measure, report
from benchlib.cli.output import Wrapped, at_least, console, err, print_error, usage_error
from benchlib.core.budgets import DEFAULT_MINUTES, TINY_MINUTES
from benchlib.measure.campaign import Campaign
from benchlib.results.contribution import INBOX, Contribution

REPOSITORY = "https://github.com/gpu-field-guide/gpu-field-guide"
# Seconds the data-parallel step takes out of the budget on a machine with several GPUs, (full,
# tiny): `benchlib launch` trains on one GPU and then on all, about a minute or two at standard
# size on Kaggle's T4 x2 (docs/guides/multi-gpu.md).
DATA_PARALLEL_S = (150.0, 60.0)
# The campaign's steps need at least this much of the budget; below it the data-parallel step is skipped.
CAMPAIGN_MIN_S = 30.0


def contribute(
    device: Annotated[str, typer.Option(help="auto (a GPU if there is one), cuda or cpu.")] = "auto",
    tiny: Annotated[
        bool,
        typer.Option(
            "--tiny", help="Small sizes: minutes on a CPU, to try the command. Not charted: don't send the file."
        ),
    ] = False,
    out: Annotated[
        Path,
        typer.Option(
            help="Folder for the run's results files (a folder per machine) and the file to send (contribution-*.json)."
        ),
    ] = Path("contribution"),
    minutes: Annotated[
        float | None,
        typer.Option(
            "--minutes",
            callback=at_least(0.5),
            help="Time budget for the measuring; steps that would end later are skipped. [default: 9, or 5 with --tiny]",
            show_default=False,
        ),
    ] = None,
    send_anyway: Annotated[
        Path | None,
        typer.Option(
            "--send-anyway",
            metavar="FILE",
            help="Measure nothing: mark a contribution that failed its check as sent anyway, and say how to send it.",
        ),
    ] = None,
) -> None:
    """Measure this machine for the GPU Field Guide and write one file, ready to send.

    Runs what the guide needs from a machine (the standard suite, then the largest-batch searches
    and the long matmul sweep that fit the time budget, on the GPU if there is one, and on a
    machine with several GPUs, data-parallel training on one and then on all of them, as
    `benchlib launch` does), checks that the run finished, was not disturbed by other work and
    holds only plausible values, and writes `OUT/contribution-<machine id>-<run id>.json`. The file keeps only what the site shows: no
    paths, host or user names, serial numbers or environment variables. Then it prints how to send
    the file: benchlib itself uploads nothing.
    """
    from benchlib.results.contribution import file_name, package, read_contribution
    from benchlib.results.store import ResultsError, read_results

    if send_anyway is not None:
        try:
            contribution = read_contribution(send_anyway)
        except ResultsError as exc:
            print_error(f"{exc}; give the contribution-*.json file benchlib contribute wrote")
            raise typer.Exit(2)
        if contribution.tiny:
            raise usage_error(
                f"{send_anyway} was made with --tiny, to try the command; run benchlib contribute without it"
            )
        if not contribution.check.passed and not contribution.check.sent_anyway:
            contribution.check.sent_anyway = True
            _write(contribution, send_anyway)
        how_to_send(contribution, send_anyway)
        return
    if device not in DEVICES:
        raise usage_error(f"unknown device {device!r}; choose auto, cuda or cpu")
    budget_s = (minutes if minutes is not None else TINY_MINUTES if tiny else DEFAULT_MINUTES) * 60
    gpus = _gpu_count(device)
    parallel_s = DATA_PARALLEL_S[tiny] if gpus > 1 else 0.0
    fits = budget_s - parallel_s >= CAMPAIGN_MIN_S
    state = measure(device, tiny, (budget_s - parallel_s if fits else budget_s) / 60, out)
    if parallel_s and state.device == "cuda":
        if fits:
            _data_parallel(state, gpus)
        else:
            state.skipped.append(f"data-parallel training on {gpus} GPUs")
    report(state)
    written = list(dict.fromkeys(state.written))
    if not written:
        print_error(f"the run wrote no results into {out}; nothing to send")
        raise typer.Exit(1)
    contribution = package([read_results(path) for path in written], tiny=tiny, failed_steps=state.failed)
    path = _write(contribution, out / file_name(contribution))
    if not contribution.check.passed:
        err.print(Text(f"not ready to send: {path}", style="bold red"), soft_wrap=True)
        for problem in contribution.check.problems:
            err.print(Wrapped(Text(f"- {problem}"), indent=2, hanging=2))
    if tiny:
        err.print(
            Text(f"wrote {path}: a --tiny run, to try the command; the guide doesn't chart it", style="yellow"),
            soft_wrap=True,
        )
        return
    if not contribution.check.passed:
        err.print(
            Wrapped(
                Text(
                    "The file is kept. Run benchlib contribute again when nothing else is running, or send this "
                    f"one as it is, marked as such: benchlib contribute --send-anyway {path}"
                )
            )
        )
        raise typer.Exit(1)
    how_to_send(contribution, path)


def _gpu_count(device: str) -> int:
    """The NVIDIA GPUs a run on ``device`` may use: none when the CPU is asked for."""
    from benchlib.probe.nvidia import probe_nvidia

    return 0 if device == "cpu" else len(probe_nvidia())


def _data_parallel(state: Campaign, gpus: int) -> None:
    """Train on one GPU and then on all ``gpus`` (`benchlib launch`), into the campaign's folder, so the
    contribution carries the scaling the multi-GPU page charts."""
    from benchlib.measure.distributed.launch import ScalingRun, run_scaling

    title = f"data-parallel training on {gpus} GPUs"
    err.print(Text(title, style="bold"))
    try:
        outcome = run_scaling(
            ScalingRun(engines=("torch",), devices=gpus, size=state.suite, device="cuda"),
            machine=state.machine,
            out_dir=state.out,
            on_start=lambda what: err.print(Text(f"  {what} ...", style="dim")),
        )
    except KeyboardInterrupt:
        err.print(Text(f"interrupted; every file written so far is valid and kept in {state.out}", style="yellow"))
        raise typer.Exit(130)
    except OSError as exc:
        print_error(
            f"cannot write to {state.out}: {exc.strerror or exc}; free some space or choose another --out folder"
        )
        raise typer.Exit(1)
    state.written.append(outcome.path)


def _write(contribution: Contribution, path: Path) -> Path:
    from benchlib.results.contribution import write_contribution
    from benchlib.results.store import ResultsError

    try:
        return write_contribution(contribution, path)
    except ResultsError as exc:
        print_error(str(exc))
        raise typer.Exit(1)
    except OSError as exc:
        print_error(f"cannot write {path}: {exc.strerror or exc}; free some space or choose another --out folder")
        raise typer.Exit(1)


def issue_link(contribution: Contribution, path: Path) -> str:
    """A new-issue page with its title and body filled in; the file is attached by hand."""
    machine = contribution.runs[0].machine
    body = (
        f"Drag {path.name} into this box to attach it, then submit.\n\n"
        f"Machine: {machine.label}\nRuns: {len(contribution.runs)}\nbenchlib {contribution.benchlib_version}\n"
    )
    return f"{REPOSITORY}/issues/new?" + urlencode({"title": f"Contribution: {machine.label}", "body": body})


def how_to_send(contribution: Contribution, path: Path) -> None:
    """Say where the file is and the two ways to send it; neither needs a token."""
    marked = " (marked: sent despite its check)" if contribution.check.sent_anyway else ""
    console.print(Text(f"Ready to send{marked}:", style="bold green"))
    console.print(Text(f"   {path}"), soft_wrap=True)
    console.print(Wrapped(Text("Send it one of two ways; benchlib uploads nothing itself.")))
    console.print(
        Wrapped(
            Text(f"1. Add it to {INBOX}/ on GitHub: open this page, drop {path.name} on it, and propose the change:"),
            hanging=3,
        )
    )
    console.print(Text(f"   {REPOSITORY}/upload/main/{INBOX}"), soft_wrap=True)
    console.print(Wrapped(Text("2. Or open an issue, its text filled in, and attach the file to it:"), hanging=3))
    console.print(Text(f"   {issue_link(contribution, path)}"), soft_wrap=True)
