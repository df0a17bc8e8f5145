"""A search's record reads back as the search it was, and fit's prediction for it."""

from __future__ import annotations

from dataclasses import replace

import pytest

from benchlib.derive.searched import fit_prediction, model_label
from benchlib.measure.max_batch import SearchResult, TrialOutcome, TrialRequest, search_records
from benchlib.models.trainable import get_model
from benchlib.results.searches import request_of

SEARCHES = [
    TrialRequest(model="unet", batch=1, size="small", dtype="fp16", device="cpu", memory_limit=16 * 1024**2),
    TrialRequest(
        model="resnet50", batch=1, dtype="fp32", optimizer="sgd", device="cuda", input_shape=(3, 160, 160), steps=3
    ),
    TrialRequest(model="benchlib.models.llm_step:tiny_llama", batch=1, dtype="bf16", device="cuda", seq_len=32),
]


@pytest.mark.parametrize("request_", SEARCHES, ids=lambda r: r.model)
def test_the_answers_record_reads_back_as_the_search(request_):
    trials = [TrialOutcome(batch=1, status="ok", peak_bytes=1000), TrialOutcome(batch=2, status="oom")]
    answer = search_records(trials, request_, SearchResult(trials, 1, 2, "oom"), start=1, limit=64)[-1]
    assert answer.metric.name == "max_batch"
    read = request_of(answer.params, answer.dtype, answer.device)
    # A record always names its input shape, the model's default for its size when the search didn't.
    expected = (
        request_
        if request_.input_shape or request_.language_model
        else replace(request_, input_shape=tuple(get_model(request_.model).input_shape(request_.size)))
    )
    assert read == expected


def test_labels_name_the_model_and_its_input():
    assert model_label(SEARCHES[0]) == f"{get_model('unet').title} (3×32×32)"
    assert model_label(TrialRequest(model="qwen2.5-0.5b", batch=1, seq_len=1024)) == "Qwen2.5 0.5B (1,024 tokens)"
    assert model_label(SEARCHES[2]) == "tiny_llama (32 tokens)"


def test_a_config_this_machine_cannot_read_keeps_its_name_and_gets_no_prediction(tmp_path):
    missing = TrialRequest(model=str(tmp_path / "gone" / "config.json"), batch=1, seq_len=32, memory_limit=16 * 1024**2)
    assert model_label(missing) == f"{missing.model} (32 tokens)"
    assert fit_prediction(missing, None) is None


@pytest.mark.slow  # over 3 s here: kept out of the fast command (README command 3)
def test_a_capped_cpu_search_gets_a_prediction_that_grows_with_the_batch():
    prediction = fit_prediction(SEARCHES[0], None)
    assert prediction is not None and prediction.max_batch >= 1
    assert prediction.peak(prediction.max_batch + 1) > prediction.peak(1)
