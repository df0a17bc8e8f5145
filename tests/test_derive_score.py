"""The score: 100 x geometric mean of reference time / measured time; incomplete runs get none."""

import json
import math
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from score_samples import BUSY, records, results, with_conditions
from site_samples import measurement

from benchlib.core.package_data import data_file
from benchlib.core.paths import docs_dir
from benchlib.derive.score import (
    SCORE_TESTS,
    load_reference,
    reference_file,
    reference_folder,
    score,
    score_frame,
    write_reference,
)
from benchlib.derive.score_report import run_summary
from benchlib.results.load import load_results
from benchlib.results.schema import MeasurementRecord, Metric
from benchlib.results.store import read_results, write_results
from benchlib.site.score_blocks import reference_table, score_tests_table
from benchlib.workloads import all_workloads


def keras_skipped() -> MeasurementRecord:
    """What a run without tensorflow records for its Keras inference."""
    images = Metric(name="throughput", unit="images/s", higher_is_better=True)
    message = "tensorflow is not installed"
    return measurement(
        "inference_keras", images, None, framework="tensorflow", device="cpu", status="skipped", message=message
    )


@pytest.fixture
def reference(machine):
    return results(records(), machine)


def test_the_reference_scores_100(reference):
    s = score(reference.measurements, reference)
    assert s.complete and s.missing == []
    assert s.value == pytest.approx(100) and s.training == pytest.approx(100) and s.inference == pytest.approx(100)
    assert set(s.ratios) == {t.key for t in SCORE_TESTS}


def test_twice_as_fast_everywhere_scores_200_for_times_and_rates(reference):
    s = score(records(factor=2.0), reference)
    assert s.value == pytest.approx(200)
    assert all(r == pytest.approx(2.0) for r in s.ratios.values())


def test_score_is_the_geometric_mean_of_the_ratios(reference):
    keys = [t.key for t in SCORE_TESTS]
    factors = {k: 1.0 + i / 4 for i, k in enumerate(keys)}
    s = score(records(per_test=factors), reference)
    assert s.value == pytest.approx(100 * math.prod(factors.values()) ** (1 / len(keys)))
    training = [factors[t.key] for t in SCORE_TESTS if t.kind == "training"]
    assert s.training == pytest.approx(100 * math.prod(training) ** (1 / len(training)))


def test_a_missing_test_makes_the_score_incomplete_and_names_it(reference):
    s = score(records(factor=3.0, skip={"resnet50-tensorflow-b1"}), reference)
    assert not s.complete and s.value is None and s.training is None
    assert s.missing == ["resnet50-tensorflow-b1"]
    assert "resnet50-tensorflow-b1" in str(s) and "incomplete" in str(s)
    assert len(s.ratios) == len(SCORE_TESTS) - 1


def test_a_skipped_workload_is_named_with_its_reason(reference, machine):
    keep = [r for r in records() if r.framework != "tensorflow"]
    skipped = keras_skipped()
    s = score(keep + [skipped], reference)
    assert not s.complete
    assert "resnet50-tensorflow-b1" in s.missing and "cnn-tensorflow" in s.missing
    assert s.reasons["resnet50-tensorflow-b1"] == "skipped: tensorflow is not installed"


def test_other_params_or_dtypes_do_not_count(reference):
    wrong = [
        r.model_copy(update={"params": r.params | {"batch_size": 999}})
        if r.workload.startswith("cnn_fashion_mnist")
        else r
        for r in records()
    ]
    assert set(score(wrong, reference).missing) == {"cnn-torch", "cnn-tensorflow"}
    bf16 = [r.model_copy(update={"dtype": "bf16"}) if r.workload == "fastai_transfer" else r for r in records()]
    assert score(bf16, reference).missing == ["fastai-resnet34-b64"]


def test_score_frame_scores_each_measured_file(tmp_path, reference, machine):
    write_results(reference, tmp_path / "ref.json")
    write_results(
        results(records(factor=4.0), machine, "Fast box").model_copy(update={"run_id": "r2"}), tmp_path / "fast.json"
    )
    write_results(
        results(records(skip={"cnn-torch"}), machine, "Partial box").model_copy(update={"run_id": "r3"}),
        tmp_path / "part.json",
    )
    frame = score_frame(load_results(tmp_path), reference).set_index("machine_label")
    assert frame.loc["Reference CPU", "score"] == pytest.approx(100)
    assert frame.loc["Fast box", "score"] == pytest.approx(400)
    assert not frame.loc["Partial box", "complete"] and frame.loc["Partial box", "missing"] == "cnn-torch"
    assert math.isnan(frame.loc["Partial box", "score"])


def test_score_tests_use_the_standard_suite_parameters():
    """Each test names params the workload really has at the standard size, so a standard run can match."""
    workloads = all_workloads().values()
    for t in SCORE_TESTS:
        # Each test is declared by the workload whose records it scores.
        [w] = [w for w in workloads if w.framework == t.framework and w.name == t.workload]
        p = w.params("standard")
        # The reference machine is a CPU: a scored workload runs the same params there as anywhere.
        assert w.params("standard", "cpu") == p, t.key
        for key, value in t.params.items():
            if key == "model":
                assert value in p["models"], t.key
            elif key == "batch_size" and "batches" in p:
                assert value in p["batches"], t.key
            elif key == "batch_size" and "batch_sizes" in p:
                assert value in p["batch_sizes"], t.key
            else:
                assert p[key] == value, t.key


def test_methodology_lists_formula_reference_and_every_test(reference):
    page = (docs_dir() / "benchmarks" / "methodology.md").read_text(encoding="utf-8")
    assert "score = 100 × ( ∏<sub>i=1…n</sub> t<sub>ref,i</sub> / t<sub>i</sub> )<sup>1/n</sup>" in page
    assert "$" not in page  # no LaTeX: the site ships no math renderer
    assert "incomplete" in page
    assert "Reference CPU" in reference_table(reference)
    tests = score_tests_table(reference)
    for t in SCORE_TESTS:
        assert f"<td>{t.key}</td>" in tests
    assert tests.count("<tr><td>") == len(SCORE_TESTS)


def test_a_reference_missing_a_test_is_rejected(tmp_path, machine):
    broken = results(records(skip={"cnn-torch"}), machine)
    write_results(broken, tmp_path / "broken.json")
    with pytest.raises(ValueError, match="no valid measurement for: cnn-torch"):
        load_reference(tmp_path / "broken.json")


def test_committed_reference_is_a_real_measured_run_covering_every_test():
    reference = load_reference()
    assert reference.provenance.kind == "measured" and reference.suite == "standard" and reference.complete
    assert reference_file().stem == reference.machine.id and reference_folder() == data_file("reference")
    assert reference.disturbed is not True
    assert score(reference.measurements, reference).value == pytest.approx(100)
    json.loads(reference_file().read_text())


@pytest.mark.slow
def test_a_wheel_ships_the_reference_and_scores_outside_a_checkout(tmp_path):
    # What a Colab or Kaggle cell has: benchlib from pip, and a working folder with no results/.
    source = tmp_path / "source"
    source.mkdir()
    root = Path(__file__).resolve().parents[1]
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(root / name, source / name)
    shutil.copytree(root / "benchlib", source / "benchlib", ignore=shutil.ignore_patterns("__pycache__"))
    build = [sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation", str(source)]
    subprocess.run([*build, "-w", str(tmp_path / "wheel")], check=True, capture_output=True, timeout=300)
    (wheel,) = (tmp_path / "wheel").glob("benchlib-*.whl")
    shipped = f"benchlib/data/reference/{reference_file().name}"
    assert shipped in zipfile.ZipFile(wheel).namelist()

    installed = tmp_path / "installed"
    zipfile.ZipFile(wheel).extractall(installed)
    work = tmp_path / "notebook"
    mine = read_results(reference_file()).model_copy(update={"run_id": "mine"})  # as fast as the reference
    write_results(mine, work / "mine.json")
    env = {
        k: v for k, v in os.environ.items() if not k.startswith(("BENCHLIB_REFERENCE", "BENCHLIB_RESULTS", "MKDOCS"))
    }
    run = subprocess.run(
        [sys.executable, "-m", "benchlib.cli", "score", "mine.json"],
        cwd=work,
        env={**env, "PYTHONPATH": str(installed), "COLUMNS": "200"},
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert run.returncode == 0, run.stdout + run.stderr
    assert f"reference: {installed / shipped}" in run.stdout, "the score used the reference inside the wheel"
    score_row = next(line for line in run.stdout.splitlines() if "score" in line and "100.0" in line)
    assert score_row.count("100.0") == 2, "this run and the reference both score 100"


def test_a_disturbed_reference_is_refused_with_what_to_do(tmp_path, machine):
    busy = with_conditions(results(records(), machine), {"inference": BUSY})
    write_results(busy, tmp_path / "busy.json")
    with pytest.raises(ValueError) as info:
        load_reference(tmp_path / "busy.json")
    message = str(info.value)
    assert "busy.json is marked disturbed" in message and "inference: other processes took 40% of the CPU" in message
    assert "benchmarks/score_spread.py --write-reference" in message


def test_score_refuses_a_disturbed_reference_it_is_given(machine):
    busy = with_conditions(results(records(), machine), {"inference": BUSY})
    with pytest.raises(ValueError, match="reference run r1 of Reference CPU is marked disturbed"):
        score(records(factor=2.0), busy)


def test_the_reference_is_the_one_file_in_its_folder(tmp_path, machine):
    with pytest.raises(ValueError, match="holds no results file"):
        reference_file(tmp_path)
    write_results(results(records(), machine), tmp_path / "a.json")
    assert reference_file(tmp_path) == tmp_path / "a.json"
    write_results(results(records(), machine), tmp_path / "b.json")
    with pytest.raises(ValueError, match=r"holds 2 results files \(a.json, b.json\)"):
        reference_file(tmp_path)


def test_write_reference_replaces_the_old_one_with_a_quiet_run(tmp_path, machine):
    folder = tmp_path / "reference"
    write_results(results(records(), machine), folder / "old-machine.json")
    quiet = with_conditions(results(records(factor=2.0), machine))
    write_results(quiet, tmp_path / "quiet.json")
    target = write_reference(tmp_path / "quiet.json", folder)
    assert target == folder / f"{machine.id}.json" and [p.name for p in folder.iterdir()] == [target.name]
    assert read_results(target) == quiet


@pytest.mark.parametrize(
    "run, why",
    [
        (lambda m: with_conditions(results(records(), m), {"cnn_fashion_mnist": BUSY}), "is marked disturbed"),
        (lambda m: results(records(), m), "has no record of the machine's conditions"),
        (lambda m: with_conditions(results(records(skip={"cnn-torch"}), m)), "no valid measurement for: cnn-torch"),
    ],
)
def test_write_reference_refuses_a_run_that_cant_be_100(tmp_path, machine, run, why):
    folder = tmp_path / "reference"
    write_results(results(records(), machine), folder / "old.json")
    write_results(run(machine), tmp_path / "run.json")
    with pytest.raises(ValueError, match=why):
        write_reference(tmp_path / "run.json", folder)
    assert [p.name for p in folder.iterdir()] == ["old.json"]


def test_a_test_measured_only_at_other_sizes_says_so(reference):
    full = [
        r.model_copy(update={"params": r.params | {"batch_size": 1024}}) if r.workload == "cnn_fashion_mnist" else r
        for r in records()
    ]
    s = score(full, reference)
    assert s.reasons["cnn-torch"] == "measured only at other sizes; the score uses the standard suite's batch_size=256"


def test_missing_tests_are_grouped_by_reason(reference):
    keep = [r for r in records() if r.framework != "tensorflow"]
    skipped = keras_skipped()
    assert score(keep + [skipped], reference).missing_text() == (
        "cnn-tensorflow (not in this run); resnet50-tensorflow-b1, resnet50-tensorflow-b32, mobilenet_v2-tensorflow-b1, "
        "mobilenet_v2-tensorflow-b32 (skipped: tensorflow is not installed)"
    )


def plain(lines):
    return "\n".join(line.plain for line in lines)


def test_after_a_standard_run_the_score_says_what_it_is_relative_to(reference, machine):
    run = with_conditions(results(records(factor=2.0), machine, "Fast box"))
    text = plain(run_summary(run, reference))
    assert text == (
        "score 200.0  training 200.0, inference 200.0; relative to Reference CPU, measured 2026-11-21 (= 100)"
    )


def test_after_an_incomplete_run_the_missing_tests_are_named(reference, machine):
    run = results(
        records(skip={"cnn-torch", "resnet50-tensorflow-b1", "resnet50-tensorflow-b32"}), machine, "Partial box"
    )
    assert plain(run_summary(run, reference)) == (
        "score: incomplete, 3 of 11 tests missing: cnn-torch, resnet50-tensorflow-b1, resnet50-tensorflow-b32 (not in this run)"
    )


def test_after_a_disturbed_run_the_workloads_and_reasons_are_named(reference, machine):
    run = with_conditions(results(records(factor=2.0), machine), {"inference": BUSY})
    lines = run_summary(run, reference)
    assert lines[0].plain == (
        "disturbed run: other work on this machine may have slowed 1 workload(s) "
        "(inference: other processes took 40% of the CPU (0.80 CPUs on average))"
    )
    assert lines[0].style == "yellow"
    assert lines[1].plain.endswith("; disturbed run, so likely too low")


def test_a_quick_run_gets_no_score_and_is_told_why(reference, machine):
    run = results(records(), machine).model_copy(update={"suite": "quick"})
    assert plain(run_summary(run, reference)).startswith(
        "no score: a quick run; the score's tests are the standard suite's sizes"
    )


def test_score_frame_and_site_table_show_a_disturbed_run(tmp_path, reference, machine, monkeypatch):
    import benchlib.derive.score as score_module
    from benchlib.site.data import SiteData, chart_frames, derive
    from benchlib.site.score_blocks import score_block

    write_results(
        with_conditions(results(records(factor=2.0), machine, "Busy box"), {"inference": BUSY}), tmp_path / "busy.json"
    )
    write_results(with_conditions(results(records(factor=3.0), machine, "Quiet box")), tmp_path / "quiet.json")
    write_results(results(records(factor=4.0), machine, "Old box"), tmp_path / "old.json")
    frame = load_results(tmp_path)
    rows = score_frame(frame, reference).set_index("machine_label")
    assert rows.loc["Busy box", "disturbed"] is True and rows.loc["Quiet box", "disturbed"] is False
    assert rows.loc["Old box", "disturbed"] is None
    monkeypatch.setattr(score_module, "load_reference", lambda path=None: reference)
    derived = derive(frame)
    html = score_block(
        SiteData(frame=derived, charts=chart_frames(derived), results_dir=tmp_path, build_files=frozenset())
    )
    assert "<td>disturbed</td>" in html and "<td>quiet</td>" in html and "<td>not recorded</td>" in html
    # The chart names the disturbed run as such, beside its score of 200.
    assert "Busy box (disturbed)" in html and ">200<" in html
