"""`benchlib run`: plan a run (or find the one to finish), run it under a progress bar, report it.

Exit codes beyond benchlib's own (0, 1, 2): 130 when interrupted, with what finished saved.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape
from rich.progress import Progress, TaskID
from rich.text import Text

# Modules, not their functions: tests replace `probe.probe_machine` and `runner.run_suite`.
from benchlib import probe
from benchlib.backends import DeviceUnavailable
from benchlib.cli.launch import launch
from benchlib.cli.output import (
    Wrapped,
    at_least,
    console,
    err,
    exit_if_failed,
    print_error,
    progress_bar,
    records_table,
    usage_error,
)
from benchlib.core.units import format_duration
from benchlib.derive.score_report import run_summary
from benchlib.measure import runner
from benchlib.measure.budget import suite_estimate
from benchlib.measure.isolation import prestart
from benchlib.results.schema import Machine, MeasurementRecord
from benchlib.results.store import ResultsError
from benchlib.workloads import NotRunnable, UnknownWorkload, Workload, WorkloadModuleError, all_workloads

DEVICES = ("auto", "cpu", "cuda", "mps")
RESUME_HELP = (
    "Finish a run that was killed or cut short by --budget: give its results file, or a folder (such as "
    "your --out folder) holding exactly one unfinished run of this machine. Only the workloads not yet "
    "finished run, into the same file; --suite, --only and --device come from that file."
)


@dataclass(frozen=True)
class PlannedRun:
    """What this command runs: ``workloads`` into a new file in ``out``, or the rest of the run in ``resume_path``."""

    suite: str
    device: str
    out: Path
    workloads: list[Workload] = field(default_factory=list)
    resume_path: Path | None = None
    left: list[str] = field(default_factory=list)  # the workloads the resumed run has still to run

    @property
    def count(self) -> int:
        return len(self.left) if self.resume_path is not None else len(self.workloads)

    @property
    def resume_target(self) -> Path:
        """What `benchlib run --resume` takes to finish this run if it is cut short."""
        return self.resume_path if self.resume_path is not None else self.out

    def history_folder(self, machine: Machine) -> Path:
        """Where this machine's earlier runs are, whose times estimate this one's."""
        return self.resume_path.parent if self.resume_path is not None else self.out / machine.id

    def to_run(self) -> list[Workload]:
        """The workloads this command will run (those of a resumed run that are installed)."""
        if self.resume_path is None:
            return self.workloads
        known = all_workloads()
        return [known[name] for name in self.left if name in known]


def run(
    suite: Annotated[
        str | None,
        typer.Option(
            help="quick (seconds on a CPU), standard (minutes on a free T4) or full. [default: quick]",
            show_default=False,
        ),
    ] = None,
    only: Annotated[list[str] | None, typer.Option("--only", help="Run only this workload (repeatable).")] = None,
    device: Annotated[
        str | None,
        typer.Option(help="auto, cpu, cuda or mps. auto picks the best available. [default: auto]", show_default=False),
    ] = None,
    out: Annotated[
        Path,
        typer.Option(
            help="Results folder; the file goes to `OUT/<machine id>/<run id>.json`. A Drive folder works: each workload costs one atomic rename."
        ),
    ] = Path("results"),
    resume: Annotated[Path | None, typer.Option("--resume", metavar="FILE_OR_FOLDER", help=RESUME_HELP)] = None,
    budget: Annotated[
        float | None,
        typer.Option(
            "--budget",
            metavar="SECONDS",
            callback=at_least(0),
            help="Start no workload that isn't expected to finish within this many seconds from now (the estimates printed before the run starts); the rest are recorded as skipped, to finish later with --resume.",
        ),
    ] = None,
    isolate: Annotated[
        bool,
        typer.Option(
            "--isolate/--no-isolate",
            help="Run each workload in its own process, so one that crashes Python (segfault, OOM killer) is recorded as an error and the run goes on.",
        ),
    ] = True,
    devices: Annotated[
        int | None,
        typer.Option(
            "--devices",
            callback=at_least(1),
            metavar="N",
            help="Data-parallel training on 1 and on N devices instead of the suite; the same as `benchlib launch --nproc N`.",
        ),
    ] = None,
) -> None:
    """Run a suite of workloads and write a results file after every workload.

    Before it starts, it prints how long the run should take: each workload's time in this
    machine's last run of the suite (in the --out folder), else benchlib's timing of it on a
    2-core CPU (scaled by this machine's quick run of it, if there is one), else a default for
    the suite; it says which. --budget counts on the same estimates.

    A run killed at any point (Ctrl-C, SIGKILL, a Colab disconnect) leaves a valid file with
    everything finished so far; `benchlib run --resume` finishes it.
    """
    if devices is not None:
        return run_data_parallel(devices, suite=suite, device=device, out=out, only=only, resume=resume)
    called = time.perf_counter()
    if resume is not None:
        refuse_plan_options_when_resuming(suite=suite, only=only, device=device)
    suite, device = suite or "quick", device or "auto"
    check_suite_and_device(suite, device)
    workloads = workloads_to_run(suite, only, device, resuming=resume is not None)
    if isolate and workloads:
        # The children's process server imports the frameworks while this process probes the machine.
        prestart(runner.preload_modules(workloads))
    folder = out if resume is None else resume if resume.is_dir() else resume.parent
    machine = probe_and_name_machine(folder)
    plan = PlannedRun(suite, device, out, workloads) if resume is None else find_run_to_finish(resume, machine, suite)
    print_expected_time(plan, machine, budget=budget, isolate=isolate)
    # The budget counts from when the command started, probing included.
    budget_s = None if budget is None else max(budget - (time.perf_counter() - called), 0.0)
    outcome = run_with_progress(plan, machine, budget_s=budget_s, isolate=isolate)
    report_run(outcome, machine, resumed=plan.resume_path is not None)


def run_data_parallel(
    devices: int, *, suite: str | None, device: str | None, out: Path, only: list[str] | None, resume: Path | None
) -> None:
    """`--devices N`: `benchlib launch` on N devices instead of the suite."""
    if only or resume is not None:
        raise usage_error("--devices runs the data-parallel workload; drop --only and --resume")
    launch(nproc=devices, size=suite or "quick", device=device or "auto", out=out)


def refuse_plan_options_when_resuming(*, suite: str | None, only: list[str] | None, device: str | None) -> None:
    """A resumed run keeps its own suite, workloads and device: naming others is a usage error."""
    given = [name for name, value in (("--suite", suite), ("--only", only), ("--device", device)) if value]
    if given:
        raise usage_error(f"--resume continues a run as it was planned; drop {', '.join(given)}")


def check_suite_and_device(suite: str, device: str) -> None:
    """A suite or device benchlib doesn't know is a usage error naming the choices."""
    if suite not in runner.SUITES:
        raise usage_error(f"unknown suite {suite!r}; choose one of {', '.join(runner.SUITES)}")
    if device not in DEVICES:
        raise usage_error(f"unknown device {device!r}; choose auto, cpu, cuda or mps")


def workloads_to_run(suite: str, only: list[str] | None, device: str, *, resuming: bool) -> list[Workload]:
    """The workloads of a new run (none when resuming: the file names them), once the device is known to exist."""
    try:
        workloads = [] if resuming else runner.select_workloads(suite, only)
        runner.resolve_device(device)
    except UnknownWorkload as exc:
        raise usage_error(f"{exc} (see `benchlib list`)")
    except (WorkloadModuleError, NotRunnable) as exc:
        raise usage_error(str(exc))
    except DeviceUnavailable as exc:
        raise usage_error(f"{exc}; use --device auto or cpu")
    return workloads


def probe_and_name_machine(results_dir: Path) -> Machine:
    """This machine (with the disk of ``results_dir``), named on stderr."""
    machine = probe.probe_machine(results_dir=str(results_dir))
    err.print(f"machine: [bold]{escape(machine.label)}[/] ({escape(machine.id)})")
    return machine


def find_run_to_finish(resume: Path, machine: Machine, suite: str) -> PlannedRun:
    """The unfinished run ``--resume`` names, and what it has left; exits 0 if it has finished."""
    try:
        path = runner.find_resumable(resume, machine.id)
        previous = runner.resumable(path, machine)
    except runner.NothingToResume as done:
        # Resuming is idempotent: a run that finished (say, within its --budget) is not an error.
        err.print(Text(str(done)), soft_wrap=True)
        raise typer.Exit(0)
    except (runner.ResumeError, ResultsError) as exc:
        raise usage_error(str(exc))
    left = runner.unfinished(previous)
    planned = len(previous.plan.workloads) if previous.plan else 0
    err.print(
        Text(f"resuming {path}: {planned - len(left)} of {planned} workloads finished; to run: {', '.join(left)}")
    )
    suite = previous.plan.size if previous.plan else suite
    return PlannedRun(suite, "auto", resume, resume_path=path, left=left)


def print_expected_time(plan: PlannedRun, machine: Machine, *, budget: float | None, isolate: bool) -> None:
    """How long the run should take, and what that estimate rests on, before it starts."""
    workloads = plan.to_run()
    if not workloads:
        return
    estimate = suite_estimate(workloads, plan.suite, plan.history_folder(machine), isolate=isolate)
    line = Text(f"expected: about {format_duration(estimate.seconds)} for {len(workloads)} workload(s)")
    line.append(f" ({'; '.join(estimate.basis())})", style="dim")
    if budget is not None and estimate.seconds > budget:
        line.append("; more than the --budget, so what would end after it is skipped", style="yellow")
    err.print(Wrapped(line, hanging=2))


def progress_hooks(progress: Progress, task: TaskID, suite: str) -> dict[str, Callable[..., None]]:
    """The runner's callbacks: name the workload running, and print a line as each one finishes."""

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

    return dict(on_start=on_start, on_done=on_done, on_output=on_output)


def run_with_progress(
    plan: PlannedRun, machine: Machine, *, budget_s: float | None, isolate: bool
) -> runner.RunOutcome:
    """Run the plan under a progress bar; a full disk or Ctrl-C stops it with one message saying what to do."""
    with progress_bar() as progress:
        task = progress.add_task(escape(f"{plan.suite} suite"), total=plan.count)
        hooks = progress_hooks(progress, task, plan.suite)
        try:
            return start_or_resume(plan, machine, budget_s=budget_s, isolate=isolate, hooks=hooks)
        except runner.SaveError as exc:
            # A full disk or a read-only folder is no bug of benchlib's: one message, no traceback.
            progress.stop()
            print_error(str(exc))
            raise typer.Exit(1)
        except KeyboardInterrupt:
            progress.stop()
            err.print(
                f"[yellow]interrupted; what finished is saved. Finish the run with `benchlib run --resume {escape(str(plan.resume_target))}`[/]",
                soft_wrap=True,
            )
            raise typer.Exit(130)


def start_or_resume(
    plan: PlannedRun, machine: Machine, *, budget_s: float | None, isolate: bool, hooks: dict[str, Callable[..., None]]
) -> runner.RunOutcome:
    """Start the planned run or finish the resumed one; a run this machine can't finish is a usage error."""
    path = plan.resume_path
    try:
        if path is not None:
            return runner.resume_run(path, machine=machine, budget_s=budget_s, isolate=isolate, **hooks)
        return runner.run_suite(
            plan.workloads,
            suite=plan.suite,
            device=plan.device,
            machine=machine,
            out_dir=plan.out,
            budget_s=budget_s,
            isolate=isolate,
            **hooks,
        )
    except (runner.ResumeError, ResultsError) as exc:
        raise usage_error(str(exc))
    except UnknownWorkload as exc:
        raise usage_error(f"{path}: {exc}; the run needs the same workloads installed to resume")
    except DeviceUnavailable as exc:
        raise usage_error(f"{path}: {exc}; this run can only be finished on a machine with that device")


def report_run(outcome: runner.RunOutcome, machine: Machine, *, resumed: bool) -> None:
    """The measurements and the score, where the file went, then what is left to do; exit 1 if any failed."""
    results = outcome.results
    console.print(records_table(results.measurements, f"{machine.label}: {results.suite} suite"))
    for line in run_summary(results):
        console.print(line)
    verb = "resumed and wrote" if resumed else "wrote"
    # soft_wrap: a path split over two lines can't be copied into the next command.
    err.print(f"{verb} [bold]{escape(str(outcome.path))}[/] in {outcome.wall_s:.1f} s", soft_wrap=True)
    if outcome.overhead_s:
        first, *rest = outcome.overhead_s.values()
        after = f", then {sum(rest) / len(rest):.2f} s per workload" if rest else ""
        err.print(
            f"[dim]process isolation: {first:.2f} s for the first workload (starting the process server){after}[/]"
        )
    if outcome.skipped_for_budget:
        err.print(
            f"[yellow]{len(outcome.skipped_for_budget)} workload(s) skipped for the budget; finish them with "
            f"`benchlib run --resume {escape(str(outcome.path))}`[/]",
            soft_wrap=True,
        )
    exit_if_failed(outcome.failed)
