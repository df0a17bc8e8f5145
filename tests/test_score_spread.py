"""benchmarks/score_spread.py: runs a suite N times, prints each score, the spread, and writes a quiet reference."""

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pytest
from score_samples import BUSY, records, results, with_conditions

from benchlib.derive.score import score

SCRIPT = Path(__file__).parents[1] / "benchmarks" / "score_spread.py"
spec = importlib.util.spec_from_file_location("score_spread", SCRIPT)
score_spread = importlib.util.module_from_spec(spec)
sys.modules["score_spread"] = score_spread  # its dataclasses look their module up there
spec.loader.exec_module(score_spread)


@pytest.fixture
def reference(machine):
    return results(records(), machine)


def run(reference, machine, factor, busy=None, conditions=True, name="run"):
    measured = results(records(factor=factor), machine)
    measured = with_conditions(measured, busy) if conditions else measured
    return score_spread.Run(Path(f"{name}.json"), measured, score(measured.measurements, reference), 600.0)


def test_spread_is_range_over_median():
    assert score_spread.spread([100.0, 102.0, 103.0]) == pytest.approx(0.03 / 1.02)
    assert score_spread.spread([100.0]) is None


def test_report_prints_each_run_and_whether_the_goal_is_met(reference, machine):
    text = "\n".join(
        score_spread.report(
            [run(reference, machine, 1.0), run(reference, machine, 1.01), run(reference, machine, 1.02)]
        )
    )
    assert "1       100.0     100.0      100.0      600  quiet" in text
    assert "spread over 3 complete runs: score 2.0%, training 2.0%, inference 2.0%; goal 3% or less: met" in text
    wide = "\n".join(
        score_spread.report([run(reference, machine, 1.0), run(reference, machine, 1.2, busy={"inference": BUSY})])
    )
    assert "goal 3% or less: not met" in wide and "disturbed" in wide
    assert "inference: other processes took 40% of the CPU" in wide
    assert "some runs were disturbed" in wide


def test_the_quietest_undisturbed_run_with_every_test_is_picked(reference, machine):
    busy = run(reference, machine, 1.0, busy={"inference": BUSY}, name="busy")
    unknown = run(reference, machine, 1.0, conditions=False, name="unknown")
    quiet = run(reference, machine, 1.0, name="quiet")
    noisier = quiet.results.model_copy(deep=True)
    for c in noisier.plan.conditions.values():
        c.others_cpu_s = 0.5
    noisy = score_spread.Run(Path("noisy.json"), noisier, quiet.score, 600.0)
    assert score_spread.quietest([busy, unknown, noisy, quiet]).path.name == "quiet.json"
    assert score_spread.quietest([busy, unknown]) is None


def test_without_a_usable_reference_the_runs_are_compared_with_one_of_them(machine, monkeypatch):
    def refuse():
        raise ValueError("reference r.json is marked disturbed")

    monkeypatch.setattr(score_spread, "load_reference", refuse)
    partial = results(records(skip={"cnn-torch"}), machine)
    busy = with_conditions(results(records(factor=2.0), machine), {"inference": BUSY})
    yardstick, said = score_spread.yardstick([(Path("a.json"), partial, 1.0), (Path("b.json"), busy, 1.0)])
    assert (
        said
        == "no reference (reference r.json is marked disturbed); scores relative to run 2 (= 100), only to compare the runs"
    )
    assert score(records(factor=2.2), yardstick).value == pytest.approx(110)
    assert score_spread.yardstick([(Path("a.json"), partial, 1.0)])[0] is None


@pytest.mark.slow
def test_the_script_runs_a_suite_several_times(tmp_path):
    env = os.environ | {
        "BENCHLIB_WORKLOAD_MODULES": "benchlib_test_workloads",
        "PYTHONPATH": os.pathsep.join([str(SCRIPT.parents[1]), str(Path(__file__).parent)]),
    }
    out = subprocess.run(
        [
            sys.executable,
            str(SCRIPT),
            "--suite",
            "quick",
            "--only",
            "tiny-1",
            "--runs",
            "2",
            "--device",
            "cpu",
            "--out",
            str(tmp_path),
        ],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    assert out.returncode == 0, out.stderr
    assert "quick suite, 1 workloads, 2 runs" in out.stdout
    assert "no score: the score is defined on the standard suite" in out.stdout
    assert "spread: needs two complete scores, got 0" in out.stdout
    assert len(list(tmp_path.rglob("*.json"))) == 2


def test_write_reference_needs_the_whole_standard_suite():
    with pytest.raises(SystemExit) as info:
        score_spread.main(["--suite", "quick", "--write-reference"])
    assert info.value.code == 2
