"""The score: 100 x geometric mean of reference time / measured time; incomplete runs get none."""

import json
import math
from datetime import datetime, timezone

import pytest

from benchlib.results.load import load_results
from benchlib.results.schema import MeasurementRecord, Metric, ResultsFile
from benchlib.results.store import write_results
from benchlib.score import REFERENCE_FILE, SCORE_TESTS, load_reference, methodology_markdown, score, score_frame
from benchlib.workloads import all_workloads

HIGHER = {"throughput": True, "latency_p50": False, "epoch_time": False}


def records(factor=1.0, skip=(), per_test=None):
    """One record per score test; ``factor`` = how many times faster than the reference."""
    out = []
    for i, t in enumerate(SCORE_TESTS):
        if t.key in skip:
            continue
        ref = 10.0 + i
        f = (per_test or {}).get(t.key, factor)
        value = ref * f if HIGHER[t.metric] else ref / f
        out.append(MeasurementRecord(
            workload=t.workload, framework=t.framework, device="cpu", dtype=t.dtype,
            params=dict(t.params) | {"extra": "ignored"}, metric=Metric(name=t.metric, unit="u", higher_is_better=HIGHER[t.metric]),
            value=value,
        ))
    return out


def results(measurements, machine, label="Reference CPU"):
    return ResultsFile(
        run_id="r1", created=datetime(2026, 11, 21, tzinfo=timezone.utc), benchlib_version="0.1.0",
        methodology_version="1", suite="standard", complete=True,
        machine=machine.model_copy(update={"label": label}), measurements=measurements,
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
    skipped = MeasurementRecord(workload="inference_keras", framework="tensorflow", device="cpu",
                                metric=Metric(name="throughput", unit="images/s", higher_is_better=True),
                                status="skipped", message="tensorflow is not installed")
    s = score(keep + [skipped], reference)
    assert not s.complete
    assert "resnet50-tensorflow-b1" in s.missing and "cnn-tensorflow" in s.missing
    assert s.reasons["resnet50-tensorflow-b1"] == "skipped: tensorflow is not installed"


def test_other_params_or_dtypes_do_not_count(reference):
    wrong = [r.model_copy(update={"params": r.params | {"batch_size": 999}}) if r.workload == "cnn_fashion_mnist" else r
             for r in records()]
    assert set(score(wrong, reference).missing) == {"cnn-torch", "cnn-tensorflow"}
    bf16 = [r.model_copy(update={"dtype": "bf16"}) if r.workload == "fastai_transfer" else r for r in records()]
    assert score(bf16, reference).missing == ["fastai-resnet34-b64"]


def test_score_frame_scores_each_measured_file(tmp_path, reference, machine):
    write_results(reference, tmp_path / "ref.json")
    write_results(results(records(factor=4.0), machine, "Fast box").model_copy(update={"run_id": "r2"}), tmp_path / "fast.json")
    write_results(results(records(skip={"cnn-torch"}), machine, "Partial box").model_copy(update={"run_id": "r3"}), tmp_path / "part.json")
    frame = score_frame(load_results(tmp_path), reference).set_index("machine_label")
    assert frame.loc["Reference CPU", "score"] == pytest.approx(100)
    assert frame.loc["Fast box", "score"] == pytest.approx(400)
    assert not frame.loc["Partial box", "complete"] and frame.loc["Partial box", "missing"] == "cnn-torch"
    assert math.isnan(frame.loc["Partial box", "score"])


def test_score_tests_use_the_standard_suite_parameters():
    """Each test names params the workload really has at the standard size, so a standard run can match."""
    workloads = all_workloads().values()
    for t in SCORE_TESTS:
        # The tensorflow twin of a workload is registered as <name>_keras and writes records named <name>.
        [w] = [w for w in workloads if w.framework == t.framework and w.name in (t.workload, f"{t.workload}_keras")]
        p = w.params("standard")
        for key, value in t.params.items():
            if key == "model":
                assert value in p["models"], t.key
            elif key == "batch_size" and "batches" in p:
                assert value in p["batches"], t.key
            elif key == "batch_size" and "batch_sizes" in p:
                assert value in p["batch_sizes"], t.key
            else:
                assert p[key] == value, t.key


def test_methodology_markdown_lists_formula_reference_and_every_test(reference):
    md = methodology_markdown(reference)
    assert "score = 100 × ( ∏<sub>i=1…n</sub> t<sub>ref,i</sub> / t<sub>i</sub> )<sup>1/n</sup>" in md
    assert "$" not in md  # no LaTeX: the site ships no math renderer
    assert "Reference CPU" in md and "incomplete" in md
    for t in SCORE_TESTS:
        assert f"`{t.key}`" in md
    assert md.count("\n| `") == len(SCORE_TESTS)


def test_a_reference_missing_a_test_is_rejected(tmp_path, machine):
    broken = results(records(skip={"cnn-torch"}), machine)
    write_results(broken, tmp_path / "broken.json")
    with pytest.raises(ValueError, match="no valid measurement for: cnn-torch"):
        load_reference(tmp_path / "broken.json")


def test_committed_reference_is_a_real_measured_run_covering_every_test():
    reference = load_reference()
    assert reference.provenance.kind == "measured" and reference.suite == "standard" and reference.complete
    assert REFERENCE_FILE.stem == reference.machine.id
    assert score(reference.measurements, reference).value == pytest.approx(100)
    json.loads(REFERENCE_FILE.read_text())
