"""The one time budget (`benchlib.measure.budget`): time left, what work is expected to take, and
whether it would end in time; and the estimate `benchlib run` prints before it starts."""

from __future__ import annotations

import json
import math

import pytest
from fakes import python_workload

from benchlib.core.units import format_duration
from benchlib.measure.budget import (
    FALLBACK_EXPECTED_S,
    Estimate,
    TimeBudget,
    expected_duration,
    suite_estimate,
)
from benchlib.measure.runner import run_suite, select_workloads
from benchlib.workloads import EXPECTED_S_MACHINE, Workload, all_workloads


def workload(name: str, expected_s: dict[str, float] | None = None) -> Workload:
    return python_workload(name, expected_s or {})


def test_without_a_limit_everything_fits_and_nothing_is_left_out():
    budget = TimeBudget(None)
    assert budget.left_s() == math.inf and budget.fits(Estimate(1e9, "a long guess"))


def test_work_fits_while_its_estimate_is_within_the_time_left():
    budget = TimeBudget(60.0)
    assert 59 < budget.left_s() <= 60
    assert budget.fits(Estimate(30.0, "a guess")) and not budget.fits(Estimate(61.0, "a guess"))
    message = budget.why_not(Estimate(61.0, "a guess"))
    assert "expected to take 61 s (a guess)" in message and "60 s budget" in message


def test_an_overspent_budget_has_time_below_zero_and_says_none_was_left():
    budget = TimeBudget(10.0, started=0.0)  # started long ago
    assert budget.left_s() < 0 and not budget.fits(Estimate(0.5, "a guess"))
    assert "but 0 s of the 10 s budget were left" in budget.why_not(Estimate(0.5, "a guess"))


def test_a_kind_of_work_is_expected_to_take_the_mean_of_what_it_took_else_the_guess():
    budget = TimeBudget(60.0)
    guess = Estimate(20.0, "the plan")
    assert budget.expected("step", guess) == guess
    budget.took("step", 2.0)
    budget.took("step", 4.0)
    assert budget.expected("step", guess).seconds == 3.0
    assert budget.expected("other", guess) == guess


def test_work_that_cuts_itself_leaves_later_work_its_time_but_keeps_a_share():
    budget = TimeBudget(100.0)
    assert budget.for_part(later_s=30.0, share=0.5) == pytest.approx(70.0, abs=1)
    assert budget.for_part(later_s=90.0, share=0.5) == pytest.approx(50.0, abs=1)


def test_a_workload_is_expected_to_take_its_last_run_here_else_its_own_time_else_the_default():
    timed = workload("timed", {"quick": 7.0})
    assert expected_duration(timed, "quick", {"timed": 90.0}, 5.0) == Estimate(90.0, "its last run on this machine")
    own = expected_duration(timed, "quick", {}, 5.0)
    assert own.seconds == 12.0 and EXPECTED_S_MACHINE in own.source and "5 s start-up" in own.source
    unknown = expected_duration(workload("new"), "quick", {}, 0.0)
    assert unknown.seconds == FALLBACK_EXPECTED_S["quick"] and "default" in unknown.source


def test_the_printed_estimate_sums_the_workloads_and_says_what_it_rests_on(tmp_path, machine):
    made = [workload("a", {"quick": 2.0}), workload("b", {"quick": 3.0}), workload("c")]
    fresh = suite_estimate(made, "quick", tmp_path / machine.id, isolate=False)
    assert fresh.seconds == 2.0 + 3.0 + FALLBACK_EXPECTED_S["quick"]
    assert fresh.basis() == [
        f"2 from benchlib's timings on {EXPECTED_S_MACHINE}",
        f"1 declaring no time, at benchlib's default of {FALLBACK_EXPECTED_S['quick']:.0f} s",
    ]
    # After a run here, its wall times are the estimate.
    first = run_suite(made[:1], suite="quick", device="cpu", machine=machine, out_dir=tmp_path)
    data = json.loads(first.path.read_text())
    data["plan"]["wall_s"]["a"] = 40.0
    first.path.write_text(json.dumps(data))
    after = suite_estimate(made, "quick", tmp_path / machine.id, isolate=True)
    assert after.estimates["a"].seconds == 40.0 and after.estimates["b"].seconds == 3.0 + 5.0
    assert after.basis()[0] == "1 from this machine's last quick run"
    # Another size's runs say nothing about this one.
    assert suite_estimate(made, "standard", tmp_path / machine.id, isolate=False).estimates["a"].source != (
        "its last run on this machine"
    )


def test_every_built_in_workload_declares_its_quick_and_standard_time():
    # So no built-in workload is estimated at the default (120 s at standard: 6× the run, issue 39).
    runnable = [w for w in all_workloads().values() if w.run is not None]
    assert len(runnable) >= 13
    assert [w.name for w in runnable if not {"quick", "standard"} <= w.expected_s.keys()] == []


def quick_run_here(folder, machine, took: dict[str, float]):
    """A quick run in ``folder`` in which each stand-in workload took ``took`` seconds (start-up aside)."""
    made = [workload(name) for name in took]
    run = run_suite(made, suite="quick", device="cpu", machine=machine, out_dir=folder)
    data = json.loads(run.path.read_text())
    for m in data["measurements"]:
        m["duration_s"] = took[m["workload"]]
    data["plan"]["wall_s"] = {name: seconds + 4.0 for name, seconds in took.items()}  # with its start-up
    run.path.write_text(json.dumps(data))


def test_a_quick_run_here_scales_the_declared_time_of_a_size_not_yet_run_here(tmp_path, machine):
    made = [
        workload("a", {"quick": 4.0, "standard": 40.0}),
        workload("b", {"quick": 2.0, "standard": 10.0}),
        workload("c", {"quick": 3.0, "standard": 30.0}),  # not in the quick run: its declared time stays
        workload("d"),  # declares nothing: the default
    ]
    quick_run_here(tmp_path, machine, {"a": 2.0, "b": 1.0, "d": 5.0})  # half the declared times
    folder = tmp_path / machine.id
    estimate = suite_estimate(made, "standard", folder, isolate=False)
    assert {n: e.seconds for n, e in estimate.estimates.items()} == {
        "a": 20.0,
        "b": 5.0,
        "c": 30.0,
        "d": FALLBACK_EXPECTED_S["standard"],
    }
    assert (
        estimate.estimates["a"].source == "its standard time on a 2-core CPU, scaled ×0.5 by this machine's quick run"
    )
    assert estimate.basis() == [
        "2 from benchlib's timings on a 2-core CPU, scaled ×0.5 by this machine's quick run",
        "1 from benchlib's timings on a 2-core CPU",
        "1 declaring no time, at benchlib's default of 120 s",
    ]
    # Start-up isn't part of a declared time, so it is added unscaled.
    isolated = suite_estimate(made, "standard", folder, isolate=True).estimates["a"]
    assert isolated.seconds == 20.0 + 5.0 and isolated.source.endswith("quick run, plus 5 s start-up")
    # A quick run's own estimate is that run, not a scaled one; a standard run here beats scaling.
    assert suite_estimate(made, "quick", folder, isolate=False).estimates["a"].seconds == 4.0 + 2.0


def expected_line(tmp_path, machine, workloads, suite="standard") -> list[str]:
    """What `benchlib run` prints before it starts, as lines of an 80-column terminal."""
    import io

    from rich.console import Console

    from benchlib.cli import run as cli_run

    out = io.StringIO()
    console = Console(width=80, file=out, color_system=None)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(cli_run, "err", console)
        plan = cli_run.PlannedRun(suite, "cpu", tmp_path, workloads=workloads)
        cli_run.print_expected_time(plan, machine, budget=None, isolate=True)
    return out.getvalue().splitlines()


def test_the_expected_time_reads_well_in_80_columns(tmp_path, machine):
    standard = select_workloads("standard")
    lines = expected_line(tmp_path, machine, standard)
    # Where the line wraps depends on how long the duration's text is; the words and the width don't.
    assert " ".join(line.strip() for line in lines) == (
        f"expected: about {format_duration(suite_estimate(standard, 'standard', tmp_path, isolate=True).seconds)} "
        f"for {len(standard)} workload(s) ({len(standard)} from benchlib's timings on a 2-core CPU)"
    )
    assert len(lines) == 2 and all(len(line) <= 80 for line in lines) and lines[1].startswith("  ")
    # Every kind at once: a standard run of one here, a quick run of another, one that declares
    # nothing; each phrase whole, no line past 80 columns, the rest indented under the first.
    made = [
        workload("a", {"quick": 4.0, "standard": 40.0}),
        workload("b", {"quick": 2.0, "standard": 10.0}),
        workload("c", {"quick": 3.0, "standard": 30.0}),
        workload("mine"),
    ]
    quick_run_here(tmp_path, machine, {"b": 1.0, "c": 6.0})
    run = run_suite(made[:1], suite="standard", device="cpu", machine=machine, out_dir=tmp_path)
    data = json.loads(run.path.read_text())
    data["plan"]["wall_s"]["a"] = 50.0
    run.path.write_text(json.dumps(data))
    lines = expected_line(tmp_path, machine, made)
    assert all(len(line) <= 80 for line in lines) and all(line.startswith("  ") for line in lines[1:])
    assert " ".join(line.strip() for line in lines) == (
        "expected: about 4 min for 4 workload(s) (1 from this machine's last standard run; "
        "2 from benchlib's timings on a 2-core CPU, scaled ×0.5–2 by this machine's quick run; "
        "1 declaring no time, at benchlib's default of 120 s)"
    )


@pytest.mark.parametrize(
    ("seconds", "shown"),
    [(0.4, "0 s"), (40, "40 s"), (89, "89 s"), (95, "2 min"), (360, "6 min"), (4800, "1 h 20 min")],
)
def test_durations_read_as_a_person_says_them(seconds, shown):
    assert format_duration(seconds) == shown


def test_run_help_says_what_the_expected_time_rests_on():
    import re

    from typer.testing import CliRunner

    from benchlib.cli import app

    result = CliRunner().invoke(app, ["run", "--help"], env={"COLUMNS": "200"})
    text = " ".join(re.sub("[│╭╮╰╯─]", " ", result.output).split())
    assert "prints how long the run should take" in text and "last run of the suite" in text
    assert "--budget counts on the same estimates" in text
