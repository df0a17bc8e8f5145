"""`benchlib max-batch`: the search, out-of-memory recognition, and real trials under a memory cap on CPU."""

from __future__ import annotations

import pytest
import typer
from typer.testing import CliRunner

from benchlib.backends.oom import is_oom_error
from benchlib.cli.max_batch import max_batch
from benchlib.measure.max_batch import CapExceeded, TrialOutcome, TrialRequest, isolated_trial, search_max_batch
from benchlib.results.store import read_results

MIB = 1024**2


def fake_trial(fits_up_to: int, tried: list[int], error_at: int | None = None):
    def trial(batch: int) -> TrialOutcome:
        tried.append(batch)
        if batch == error_at:
            return TrialOutcome(batch=batch, status="error", message="ValueError: broken")
        if batch <= fits_up_to:
            return TrialOutcome(batch=batch, status="ok", peak_bytes=batch * MIB)
        return TrialOutcome(batch=batch, status="oom", message="out of memory")

    return trial


def test_search_doubles_then_bisects():
    tried: list[int] = []
    result = search_max_batch(fake_trial(37, tried))
    assert tried == [1, 2, 4, 8, 16, 32, 64, 48, 40, 36, 38, 37]
    assert (result.max_batch, result.first_oom, result.stopped_by) == (37, 38, "oom")
    assert result.at(37).peak_bytes == 37 * MIB


@pytest.mark.parametrize("fits_up_to", [1, 2, 3, 5, 64, 100, 127])
def test_search_finds_the_exact_boundary(fits_up_to):
    result = search_max_batch(fake_trial(fits_up_to, []), limit=1000)
    assert result.max_batch == fits_up_to
    assert result.first_oom == fits_up_to + 1


def test_search_reports_when_even_one_sample_does_not_fit():
    result = search_max_batch(fake_trial(0, []))
    assert (result.max_batch, result.first_oom, result.stopped_by) == (0, 1, "oom")


def test_search_below_a_start_that_does_not_fit():
    tried: list[int] = []
    result = search_max_batch(fake_trial(5, tried), start=16)
    assert tried[0] == 16 and result.max_batch == 5


def test_search_stops_at_the_limit_without_claiming_an_oom():
    tried: list[int] = []
    result = search_max_batch(fake_trial(10_000, tried), start=3, limit=20)
    assert tried == [3, 6, 12, 20]
    assert (result.max_batch, result.first_oom, result.stopped_by) == (20, None, "limit")


def test_a_non_memory_error_ends_the_search():
    tried: list[int] = []
    result = search_max_batch(fake_trial(100, tried, error_at=8))
    assert tried == [1, 2, 4, 8] and result.stopped_by == "error" and result.max_batch == 4


def test_bad_search_bounds_are_refused():
    with pytest.raises(ValueError, match="start"):
        search_max_batch(fake_trial(1, []), start=0)


# ----------------------------------------------------------------------------- recognising OOM


@pytest.mark.parametrize(
    "exc",
    [
        MemoryError(),
        CapExceeded("over the cap"),
        RuntimeError(
            "[enforce fail at alloc_cpu.cpp:127] DefaultCPUAllocator: can't allocate memory: you tried to allocate 8388608 bytes"
        ),
        RuntimeError("std::bad_alloc"),
        RuntimeError("MPS backend out of memory (MPS allocated: 17.00 GB, other allocations: 1.2 GB)"),
        RuntimeError("OOM when allocating tensor with shape[64,3,224,224]"),
    ],
)
def test_out_of_memory_errors_are_recognised(exc):
    import torch  # noqa: F401  (the errors come from a loaded framework; so does their recognition)

    assert is_oom_error(exc)


def test_torch_cuda_out_of_memory_error_is_recognised():
    import torch

    assert is_oom_error(torch.cuda.OutOfMemoryError("Tried to allocate 2.00 GiB"))


@pytest.mark.parametrize(
    "exc", [ValueError("Expected more than 1 value per channel"), RuntimeError("shape mismatch"), KeyError("x")]
)
def test_other_errors_are_not_out_of_memory(exc):
    assert not is_oom_error(exc)


@pytest.mark.slow
def test_tensorflow_resource_exhausted_is_recognised_by_its_class():
    tf = pytest.importorskip("tensorflow")
    # No "OOM" in the text: only the class can say so.
    assert is_oom_error(tf.errors.ResourceExhaustedError(None, None, "resource exhausted"))


# ----------------------------------------------------------------------------- real trials on CPU


def request(batch: int, limit: int | None) -> TrialRequest:
    return TrialRequest(model="bert_base", size="small", batch=batch, steps=1, memory_limit=limit)


@pytest.mark.slow
def test_an_oom_under_the_cap_does_not_poison_the_next_trial():
    # The small BERT needs about 9 MiB at batch 8 and about 50 MiB at batch 64 (measured).
    cap = 24 * MIB
    before = isolated_trial(request(8, cap))
    over = isolated_trial(request(64, cap))
    after = isolated_trial(request(8, cap))
    assert before.status == "ok", before.message
    assert over.status == "oom", over.message
    assert "memory-limit" in (over.message or "")
    assert after.status == "ok", after.message
    assert 0 < before.peak_bytes < cap and 0 < after.peak_bytes < cap
    # A fresh process each time: the trial after the failure uses what the one before it did.
    assert abs(after.peak_bytes - before.peak_bytes) < 0.25 * before.peak_bytes


@pytest.mark.slow
def test_peak_memory_grows_with_the_batch_and_is_reported_without_a_cap():
    small, large = isolated_trial(request(4, None)), isolated_trial(request(32, None))
    assert small.status == large.status == "ok"
    assert large.peak_bytes > 2 * small.peak_bytes
    assert "VmHWM" in small.peak_measure


@pytest.mark.slow
def test_a_trial_failing_for_another_reason_is_an_error_not_an_oom():
    outcome = isolated_trial(TrialRequest(model="resnet50", size="small", batch=1, steps=1, input_shape=(3, 8, 8)))
    assert outcome.status == "error"


@pytest.mark.slow
def test_max_batch_command_searches_under_a_cap_and_writes_a_results_file(tmp_path):
    app = typer.Typer()
    app.command("max-batch")(max_batch)
    app.command("unused")(lambda: None)
    result = CliRunner().invoke(
        app,
        [
            "max-batch",
            "--model",
            "bert_base",
            "--size",
            "small",
            "--memory-limit",
            "12MiB",
            "--steps",
            "1",
            "--out",
            str(tmp_path),
        ],
    )
    assert result.exit_code == 0, result.output
    [path] = list(tmp_path.rglob("*.json"))
    results = read_results(path)
    assert results.complete and results.suite == "max-batch"
    trials = [m for m in results.measurements if m.metric.name == "peak_memory"]
    [answer] = [m for m in results.measurements if m.metric.name == "max_batch"]
    ok = [m.params["batch"] for m in trials if m.status == "ok"]
    oom = [m.params["batch"] for m in trials if m.status == "oom"]
    assert oom, "the search must have run out of memory at least once"
    assert answer.value == max(ok) and answer.params["first_oom_batch"] == min(oom) == answer.value + 1
    assert all(m.value is None for m in trials if m.status == "oom")
    assert answer.params["peak_memory_bytes"] <= 12 * MIB
    assert f"largest batch {int(answer.value)}" in result.output


def test_max_batch_rejects_bad_input_by_name(tmp_path):
    app = typer.Typer()
    app.command("max-batch")(max_batch)
    app.command("unused")(lambda: None)
    for args, expected in [
        (["--model", "resnet5"], "unknown model 'resnet5'"),
        (["--model", "resnet50", "--dtype", "fp8"], "unknown dtype 'fp8'"),
        (["--model", "resnet50", "--optimizer", "lamb"], "unknown optimizer 'lamb'"),
        (["--model", "resnet50", "--memory-limit", "lots"], "--memory-limit 'lots'"),
        (["--model", "vit_b_16", "--input", "3x100x100"], "multiple of 16"),
        (["--model", "resnet50", "--device", "tpu"], "unknown device 'tpu'"),
    ]:
        result = CliRunner().invoke(app, ["max-batch", *args, "--out", str(tmp_path)])
        assert result.exit_code == 2, (args, result.output)
        output = " ".join(result.output.split())  # rich wraps long lines
        assert expected in output and "Traceback" not in output
    assert not list(tmp_path.rglob("*.json"))
