"""`benchlib campaign`: the guess-seeded search, the budget, the checks it derives, and the session's real tiny run on this CPU."""

from __future__ import annotations

import shutil
import subprocess
from datetime import datetime, timezone
from pathlib import Path

import pytest
from site_samples import TFLOPS, measurement, results_file
from typer.testing import CliRunner

from benchlib.catalog.gpus import find_gpu
from benchlib.cli import app
from benchlib.derive import checks as derived
from benchlib.derive.searched import fit_guess, fit_prediction
from benchlib.measure import campaign as plan
from benchlib.measure.max_batch import TrialOutcome, search_from_guess, search_max_batch
from benchlib.predict.roofline import gpu_rates
from benchlib.results.contribution import validate_paths
from benchlib.results.schema import Machine, MeasurementRecord, Metric, ResultsFile, Software
from benchlib.results.store import iter_result_paths, read_results

ROOT = Path(__file__).resolve().parents[1]
H100 = "NVIDIA H100 80GB HBM3"
MACHINE = Machine(id="test-machine", label="Test machine", software=Software(python="3.11", benchlib="0.1.0"))


def fits_up_to(largest: int, error_at: int | None = None):
    """A trial that fits every batch up to ``largest`` (and fails for another reason at ``error_at``)."""

    def trial(batch: int) -> TrialOutcome:
        if batch == error_at:
            return TrialOutcome(batch, "error", message="boom")
        return TrialOutcome(batch, "ok" if batch <= largest else "oom", peak_bytes=batch)

    return trial


@pytest.mark.parametrize("largest", [0, 1, 2, 7, 40, 41, 100, 1000])
@pytest.mark.parametrize("guess", [1, 3, 40, 45, 900, 5000])
def test_a_search_from_a_guess_finds_what_doubling_finds(largest, guess):
    seeded = search_from_guess(fits_up_to(largest), guess, limit=4096)
    doubling = search_max_batch(fits_up_to(largest), limit=4096)
    assert (seeded.max_batch, seeded.first_oom, seeded.stopped_by) == (
        doubling.max_batch,
        doubling.first_oom,
        doubling.stopped_by,
    )
    assert all(t.batch <= 4096 for t in seeded.trials)


def test_a_close_guess_needs_fewer_trials_than_doubling():
    seeded = search_from_guess(fits_up_to(1000), 1040, limit=4096)
    doubling = search_max_batch(fits_up_to(1000), limit=4096)
    assert seeded.max_batch == 1000
    assert len(seeded.trials) < len(doubling.trials) / 2


def test_the_guessed_search_stops_at_the_limit_and_on_an_error():
    at_limit = search_from_guess(fits_up_to(10_000), 3000, limit=4096)
    assert (at_limit.max_batch, at_limit.stopped_by) == (4096, "limit")
    failed = search_from_guess(fits_up_to(100, error_at=42), 40, limit=4096)  # 42: the first step up
    assert failed.stopped_by == "error" and failed.max_batch == 40


def _step(kind: str, title: str, log: list[str]) -> plan.Step:
    def run(campaign: plan.Campaign) -> list[Path]:
        log.append(title)
        return []

    return plan.Step(kind, title, run)


def test_a_step_that_would_end_after_the_budget_is_skipped_and_listed(tmp_path):
    ran: list[str] = []
    steps = [_step("suite", "suite", ran), _step("max_batch", "a", ran), _step("sweep", "sweep", ran)]
    campaign = plan.Campaign(
        device="cpu", tiny=True, out=tmp_path, machine=MACHINE, budget_s=plan.EXPECTED_S["max_batch"][True] + 1
    )
    heard: list[tuple[str, str]] = []
    plan.run_campaign(campaign, steps, lambda step, what: heard.append((step.title, what)))
    assert ran == ["suite", "a"] and campaign.skipped == ["sweep"]
    assert ("sweep", "skipped") in heard
    # The suite is left a share of the time whatever the later steps expect.
    assert campaign.suite_budget_s is not None and campaign.suite_budget_s >= plan.SUITE_SHARE * (campaign.budget_s - 1)


def test_a_step_that_fails_is_listed_and_the_others_still_run(tmp_path):
    ran: list[str] = []

    def broken(campaign: plan.Campaign) -> list[Path]:
        raise ModuleNotFoundError("No module named 'torchvision'")

    steps = [plan.Step("max_batch", "max-batch resnet50 fp16", broken), _step("sweep", "sweep", ran)]
    campaign = plan.Campaign(device="cpu", tiny=True, out=tmp_path, machine=MACHINE, budget_s=600)
    plan.run_campaign(campaign, steps)
    assert ran == ["sweep"]
    [failure] = campaign.failed
    assert (
        failure.startswith("max-batch resnet50 fp16: No module named 'torchvision'") and "benchlib[campaign]" in failure
    )


def test_a_step_is_expected_to_take_what_its_kind_took_so_far(tmp_path):
    campaign = plan.Campaign(device="cpu", tiny=True, out=tmp_path, machine=MACHINE, budget_s=60)
    step = _step("max_batch", "a", [])
    assert campaign.expected_s(step) == plan.EXPECTED_S["max_batch"][True]
    campaign.timed["max_batch"] = [2.0, 4.0]
    assert campaign.expected_s(step) == 3.0


def test_language_models_train_in_bf16_where_the_probed_gpu_has_it(tmp_path):
    from benchlib.results.schema import Accelerators, GPUInfo

    def on(capability: str | None, device: str = "cuda") -> plan.Campaign:
        gpus = [GPUInfo(index=0, name="NVIDIA H100 80GB HBM3", compute_capability=capability)] if capability else []
        machine = MACHINE.model_copy(update={"accelerators": Accelerators(nvidia=gpus)})
        return plan.Campaign(device=device, tiny=False, out=tmp_path, machine=machine, budget_s=60)

    assert plan.language_dtype(on("9.0").gpu) == "bf16" and on("9.0").gpu.name == "NVIDIA H100 80GB HBM3"
    assert plan.language_dtype(on("7.5").gpu) == "fp16"
    assert plan.language_dtype(on("9.0", device="cpu").gpu) == "fp32" and on("9.0", device="cpu").gpu is None
    assert on("9.0", device="cpu").memory_limit == plan.CPU_MEMORY_LIMIT and on("9.0").memory_limit is None


def test_a_gpu_the_specs_dont_know_starts_its_search_from_its_probed_memory():
    from benchlib.measure.max_batch import TrialRequest
    from benchlib.results.schema import GPUInfo

    request = TrialRequest(model="unet", batch=1, size="small", device="cuda")
    mystery = GPUInfo(index=0, name="Mystery GPU 9000", memory_total_bytes=1024**3)
    larger = mystery.model_copy(update={"memory_total_bytes": 4 * 1024**3})
    assert fit_prediction(request, mystery.name) is None, "no prediction is shown for it"
    small, large = fit_guess(request, mystery), fit_guess(request, larger)
    assert small and large and large > 2 * small
    # Smaller than the CUDA context fit sets aside: no guess, the search doubles from 1.
    assert fit_guess(request, mystery.model_copy(update={"memory_total_bytes": 256 * 1024**2})) is None


def _file(*records: MeasurementRecord) -> ResultsFile:
    return results_file(MACHINE, records, run_id="r", created=datetime(2026, 11, 24, tzinfo=timezone.utc))


def test_gpu_records_are_checked_against_the_roofline_and_fit():
    images = Metric(name="throughput", unit="images/s", higher_is_better=True)
    matmul = measurement(
        "matmul", TFLOPS, 700.0, device_name=H100, dtype="bf16", params={"n": 8192, "sizes": [2048, 4096, 8192, 16384]}
    )
    inference = measurement(
        "inference",
        images,
        3000.0,
        device_name=H100,
        dtype="fp32",
        params={"mode": "inference", "model": "resnet50", "batch_size": 32},
    )
    on_cpu = measurement(
        "matmul",
        TFLOPS,
        0.1,
        device="cpu",
        device_name="CPU",
        dtype="fp32",
        params={"n": 1024, "sizes": [256, 512, 1024]},
    )
    found = {c.kind: c for c in derived.checks([_file(matmul, inference, on_cpu)])}
    assert set(found) == {"matmul", "throughput"}
    rates = gpu_rates(find_gpu("H100 SXM"))
    assert found["matmul"].predicted == pytest.approx(rates.peaks_tflops["bf16"] * rates.compute_efficiency)
    assert found["matmul"].error == pytest.approx(found["matmul"].predicted / 700.0 - 1)
    assert found["throughput"].unit == "images/s" and found["throughput"].predicted > 0
    assert "resnet50" in found["throughput"].what and "batch 32" in found["throughput"].what


@pytest.mark.slow
def test_the_transformer_workloads_eager_step_is_checked_against_predict():
    from benchlib.workloads import get, transformer_train

    params = get(transformer_train.NAME).params("quick")
    tokens = Metric(name="throughput", unit="tokens/s", higher_is_better=True)
    common = {
        **params["model"],
        "model": "2-layer, 256-wide",
        "batch_size": params["batch_size"],
        "seq_len": params["seq_len"],
    }
    eager = measurement(
        "transformer_train", tokens, 1e6, device_name=H100, dtype="bf16", params={**common, "compile": "eager"}
    )
    compiled = eager.model_copy(update={"params": {**common, "compile": "torch.compile"}})
    [check] = derived.checks([_file(eager, compiled)])
    assert check.kind == "throughput" and check.unit == "tokens/s" and check.predicted > 0
    assert "bf16" in check.what and f"{params['seq_len']} tokens" in check.what


@pytest.mark.slow
def test_the_decode_workloads_phases_are_checked_against_predict():
    from benchlib.workloads import get, llm_decode

    params = get(llm_decode.NAME).params("quick")
    tokens = Metric(name="tokens_per_s", unit="tokens/s", higher_is_better=True)
    common = {
        **params["model"],
        "model": "2-layer, 256-wide",
        "prompt_len": params["prompt_len"],
        "new_tokens": params["new_tokens"],
        "batch_size": 1,
    }
    prefill = measurement(
        "llm_decode", tokens, 1e5, device_name=H100, dtype="bf16", params={**common, "phase": "prefill"}
    )
    decode = prefill.model_copy(update={"params": {**common, "phase": "decode"}, "value": 1e3})
    by_phase = {c.what.split()[4].rstrip(","): c for c in derived.checks([_file(prefill, decode)])}
    assert set(by_phase) == {"prefill", "decode"}
    # One prompt in one pass against one token per pass: the roofline must rate the prefill faster.
    assert by_phase["prefill"].predicted > by_phase["decode"].predicted > 0


def test_an_unknown_gpu_gets_no_prediction_rather_than_a_guess():
    mystery = measurement(
        "matmul", TFLOPS, 50.0, device_name="Mystery GPU 9000", dtype="fp16", params={"sizes": [1024]}
    )
    assert derived.checks([_file(mystery)]) == []


def test_the_sweeps_pair_the_short_and_long_matmul_runs():
    short = measurement(
        "matmul", TFLOPS, 0.9, device="cpu", dtype="fp32", duration_s=2.0, params={"sizes": [256, 512, 1024]}
    )
    long = measurement(
        "matmul", TFLOPS, 1.0, device="cpu", dtype="fp32", duration_s=8.0, params={"sizes": [1024, 2048, 4096]}
    )
    [sweep] = derived.sweeps([_file(long), _file(short)])
    assert sweep.short is short and sweep.long is long
    assert sweep.reached == pytest.approx(0.9) and sweep.time_share == pytest.approx(0.25)


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["--device", "tpu"], "unknown device 'tpu'; choose auto, cuda or cpu"),
        (["--device", "cuda"], "cuda"),
    ],
)
def test_a_device_it_cannot_use_is_a_one_line_usage_error(args, says, tmp_path):
    if args[-1] == "cuda" and shutil.which("nvidia-smi"):
        pytest.skip("this machine has a GPU")
    result = CliRunner().invoke(app, ["campaign", *args, "--out", str(tmp_path)])
    assert result.exit_code == 2
    assert says in result.output and "Traceback" not in result.output
    assert not any(tmp_path.iterdir()), "nothing is written for a usage error"


@pytest.mark.slow
def test_a_results_folder_it_cannot_write_is_one_message_and_exit_1():
    result = CliRunner().invoke(app, ["campaign", "--device", "cpu", "--tiny", "--out", "/proc/benchlib-campaign"])
    assert result.exit_code == 1
    assert "choose another --out folder" in result.output and "Traceback" not in result.output


@pytest.fixture
def tiny_run(tiny_contribution) -> tuple[subprocess.CompletedProcess[str], Path]:
    """The whole tiny campaign on this CPU, as the session's tiny contribution ran it (tests/conftest.py):
    `benchlib contribute --tiny` measures with the campaign's own steps and prints its report."""
    return tiny_contribution.run, tiny_contribution.out


@pytest.mark.slow
def test_the_tiny_campaign_writes_valid_files_with_max_batch_and_matmul_records(tiny_run):
    result, out = tiny_run
    assert result.returncode == 0, result.stderr[-3000:]
    paths, problems = validate_paths([out])  # the contribution too
    assert paths and not problems
    records = [r for p in iter_result_paths(out) for r in read_results(p).measurements]
    workloads = {r.workload for r in records if r.status == "ok"}
    assert {"matmul", "max_batch"} <= workloads
    answers = [r for r in records if r.metric.name == "max_batch"]
    assert answers and all(r.value and r.value >= 1 for r in answers)
    assert all(r.params["memory_limit_bytes"] == plan.TINY_MEMORY_LIMIT for r in answers)


@pytest.mark.slow
def test_the_tiny_campaign_prints_predicted_against_measured(tiny_run):
    result, _ = tiny_run
    out = result.stdout
    assert "Predicted against measured" in out
    assert "largest batch" in out and "memory" in out and "median absolute error" in out
    assert all(len(line) <= 80 for line in out.splitlines()), "the table fits an 80-column terminal"
    assert "wrote " in result.stderr


@pytest.mark.slow
def test_the_buying_guide_shows_the_campaigns_largest_batches_language_models_included(tiny_run, monkeypatch):
    from benchlib.site import buying_guide as blocks
    from benchlib.tables import searched

    result, out = tiny_run
    assert result.returncode == 0
    monkeypatch.setenv("BENCHLIB_RESULTS_DIR", str(out))
    # The site only reads predictions: the ones `benchlib tables --only searched` would commit for this folder.
    rows = searched.compute(lambda step: None)["searches"]
    monkeypatch.setattr(blocks, "_searched_table", lambda: {row["key"]: row for row in rows})
    html = blocks.measured_vs_predicted()
    answers = [r for p in iter_result_paths(out) for r in read_results(p).measurements if r.metric.name == "max_batch"]
    assert {r.workload for r in answers} == {"max_batch", "llm_max_batch"}, "fit's models and the language model"
    assert all(f"<td>{int(r.value):,}</td>" in html for r in answers)
    assert "tiny_llama (32 tokens)" in html and "capped at 16.0 MiB" in html
