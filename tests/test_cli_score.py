"""`benchlib score FILE_OR_DIR...` and the score `benchlib run` prints after a standard run."""

import pytest
from score_samples import BUSY, records, results, with_conditions
from typer.testing import CliRunner

import benchlib.derive.score_report as score_report
from benchlib.cli import app
from benchlib.derive.score import reference_file
from benchlib.measure.runner import RunOutcome
from benchlib.results.store import read_results, write_results

runner = CliRunner()


def lines(output: str) -> list[str]:
    """The output's lines but those naming a file: a path is printed whole, to be copied."""
    return [line for line in output.splitlines() if ".json" not in line]


def test_help_lists_score():
    assert "score" in runner.invoke(app, ["--help"]).output
    result = runner.invoke(app, ["score", "--help"])
    assert result.exit_code == 0 and "side by side" in result.output


def test_score_of_the_committed_reference_is_100():
    # What the issue asks for: `benchlib score` of the reference run (benchlib/data/reference/) prints a score.
    result = runner.invoke(app, ["score", str(reference_file())])
    assert result.exit_code == 0, result.output
    assert "100.0" in result.output and "reference" in result.output
    assert "relative to" in result.output and "(= 100)" in result.output
    assert all(len(line) <= 80 for line in lines(result.stdout))


@pytest.fixture
def reference(machine, monkeypatch, tmp_path):
    ref = results(records(), machine)
    write_results(ref, tmp_path / "reference" / "ref.json")
    monkeypatch.setattr(score_report, "load_reference", lambda: ref)
    monkeypatch.setenv("BENCHLIB_REFERENCE_DIR", str(tmp_path / "reference"))
    monkeypatch.setenv("BENCHLIB_RESULTS_DIR", str(tmp_path / "committed"))
    return ref


def test_runs_are_side_by_side_with_the_reference_and_committed_machines(tmp_path, machine, reference):
    fast = with_conditions(results(records(factor=2.0), machine, "Fast box").model_copy(update={"run_id": "fast"}))
    busy = with_conditions(
        results(records(factor=1.5), machine, "Busy box").model_copy(update={"run_id": "busy"}), {"inference": BUSY}
    )
    write_results(fast, tmp_path / "mine" / "fast.json")
    write_results(busy, tmp_path / "mine" / "busy.json")
    committed = results(records(factor=4.0), machine, "Committed box").model_copy(update={"run_id": "other"})
    write_results(committed, tmp_path / "committed" / machine.id / "other.json")

    result = runner.invoke(app, ["score", str(tmp_path / "mine")])
    assert result.exit_code == 0, result.output
    out = result.stdout
    for text in ("run 1", "run 2", "reference", "committed", "200.0", "150.0", "400.0", "100.0", "disturbed", "quiet"):
        assert text in out, text
    assert "relative to Reference CPU, measured 2026-11-21 (= 100)" in out
    assert "inference: other processes took 40% of the CPU" in out
    assert all(len(line) <= 80 for line in lines(out))


def test_an_incomplete_run_names_its_missing_tests(tmp_path, machine, reference):
    write_results(results(records(skip={"cnn-torch"}), machine, "Partial"), tmp_path / "part.json")
    result = runner.invoke(app, ["score", str(tmp_path / "part.json")])
    assert result.exit_code == 0
    assert "incomplete" in result.stdout and "missing cnn-torch (not in this run)" in result.stdout


def test_a_missing_path_is_a_usage_error(tmp_path, reference):
    result = runner.invoke(app, ["score", str(tmp_path / "nope.json")])
    assert result.exit_code == 2 and "nope.json: no such results file or folder" in result.output
    assert "Traceback" not in result.output


def test_an_invalid_file_is_named_and_fails(tmp_path, machine, reference):
    write_results(results(records(), machine, "Good"), tmp_path / "good.json")
    (tmp_path / "bad.json").write_text("{")
    result = runner.invoke(app, ["score", str(tmp_path / "good.json"), str(tmp_path / "bad.json")])
    assert result.exit_code == 1
    assert "bad.json: not valid JSON" in result.output and "Good" in result.output


def test_a_quick_run_is_named_with_why_it_has_no_score(tmp_path, machine, reference):
    write_results(results(records(), machine).model_copy(update={"suite": "quick"}), tmp_path / "quick.json")
    result = runner.invoke(app, ["score", str(tmp_path / "quick.json")])
    assert result.exit_code == 1
    assert "quick.json: a quick run; the score's tests are the standard suite's sizes" in result.output
    assert "Traceback" not in result.output


def test_a_disturbed_reference_gives_a_clear_error(tmp_path, machine, monkeypatch):
    write_results(
        with_conditions(results(records(), machine), {"inference": BUSY}), tmp_path / "reference" / "ref.json"
    )
    monkeypatch.setenv("BENCHLIB_REFERENCE_DIR", str(tmp_path / "reference"))
    write_results(results(records(), machine), tmp_path / "run.json")
    result = runner.invoke(app, ["score", str(tmp_path / "run.json")])
    assert result.exit_code == 1 and "is marked disturbed" in result.output and "Traceback" not in result.output


def test_run_prints_the_score_and_the_disturbed_workloads(tmp_path, machine, reference, monkeypatch):
    import benchlib.measure.runner
    import benchlib.probe

    finished = with_conditions(results(records(factor=2.0), machine, "This box"), {"cnn_fashion_mnist": BUSY})

    def fake_run_suite(workloads, **kw):
        return RunOutcome(path=tmp_path / "run.json", results=finished, wall_s=1.0)

    monkeypatch.setattr(benchlib.probe, "probe_machine", lambda results_dir: machine)
    monkeypatch.setattr(benchlib.measure.runner, "run_suite", fake_run_suite)
    result = runner.invoke(
        app, ["run", "--suite", "standard", "--no-isolate", "--device", "cpu", "--out", str(tmp_path)]
    )
    assert result.exit_code == 0, result.output
    out = " ".join(result.stdout.split())  # rich wraps long lines at 80 columns
    assert "score 200.0 training 200.0, inference 200.0; relative to Reference CPU, measured 2026-11-21 (= 100)" in out
    assert (
        "disturbed run: other work on this machine may have slowed 1 workload(s) (cnn_fashion_mnist: other processes"
        in out
    )


def test_run_prints_the_score_in_a_folder_that_is_not_a_checkout(tmp_path, machine, monkeypatch):
    # A Colab or Kaggle cell: benchlib installed, a working folder with no mkdocs.yml and no results/.
    import benchlib.measure.runner
    import benchlib.probe

    for name in ("MKDOCS_CONFIG_DIR", "BENCHLIB_REFERENCE_DIR", "BENCHLIB_RESULTS_DIR"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.chdir(tmp_path)
    finished = read_results(reference_file())  # as fast as the reference on every test

    def fake_run_suite(workloads, **kw):
        return RunOutcome(path=tmp_path / "run.json", results=finished, wall_s=1.0)

    monkeypatch.setattr(benchlib.probe, "probe_machine", lambda results_dir: machine)
    monkeypatch.setattr(benchlib.measure.runner, "run_suite", fake_run_suite)
    result = runner.invoke(
        app, ["run", "--suite", "standard", "--no-isolate", "--device", "cpu", "--out", str(tmp_path / "out")]
    )
    assert result.exit_code == 0, result.output
    out = " ".join(result.stdout.split())
    assert "no score" not in out
    relative_to = f"relative to {finished.machine.label}, measured {finished.created:%Y-%m-%d} (= 100)"
    assert f"score 100.0 training 100.0, inference 100.0; {relative_to}" in out


def test_show_marks_a_disturbed_run(tmp_path, machine):
    write_results(with_conditions(results(records(), machine), {"inference": BUSY}), tmp_path / "busy.json")
    result = runner.invoke(app, ["show", str(tmp_path / "busy.json")])
    assert result.exit_code == 0
    assert "disturbed run: other work on this machine may have slowed 1 workload(s)" in " ".join(result.stdout.split())
