"""Mixed-precision snippets for PyTorch, Keras and fastai, on this CPU machine."""

from __future__ import annotations

import re

import pytest
from snippet_runner import RunSnippet


@pytest.mark.slow
def test_torch_autocast_picks_bfloat16_without_scaler_on_cpu_and_learns(run_snippet: RunSnippet) -> None:
    out = run_snippet("mixed_precision_torch.py", env={"STEPS": "40", "BATCH_SIZE": "128"}).stdout
    assert "device cpu, autocast dtype torch.bfloat16, GradScaler off" in out
    match = re.search(r"loss ([\d.]+) -> ([\d.]+) in 40 steps, (\d+) samples/s", out)
    assert match, out
    first, last = float(match.group(1)), float(match.group(2))
    assert last < first - 0.03, f"loss did not fall: {first} -> {last}"


@pytest.mark.slow
def test_keras_policy_keeps_weights_and_softmax_in_float32(run_snippet: RunSnippet) -> None:
    pytest.importorskip("tensorflow")
    out = run_snippet("mixed_precision_keras.py", env={"SYNTHETIC_DATA": "1", "EPOCHS": "1"}).stdout
    assert ("policy mixed_bfloat16: layers compute in bfloat16, weights stored in float32, output in float32") in out
    assert re.search(r"^4/4 - .*loss: [\d.]+", out, re.M), out  # 1024 samples, batch 256


@pytest.mark.slow
def test_fastai_fine_tunes_and_says_why_it_stays_in_float32(run_snippet: RunSnippet) -> None:
    pytest.importorskip("fastai")
    out = run_snippet("mixed_precision_fastai.py", env={"SYNTHETIC_DATA": "1", "BATCH_SIZE": "8"}).stdout
    assert "No GPU: fastai's mixed precision needs CUDA, so this runs in float32." in out
    assert "error_rate" in out  # fine_tune printed its epoch table
    assert out.strip().endswith("mixed precision: False")
