"""TPU snippets: the real frameworks on this CPU machine, and stand-ins that report a TPU."""

from __future__ import annotations

from pathlib import Path

import pytest
from snippet_runner import RunSnippet


@pytest.mark.slow
def test_check_tpu_on_a_cpu_machine_says_no_tpu(run_snippet: RunSnippet) -> None:
    pytest.importorskip("jax")
    out = run_snippet("check_tpu.py").stdout
    assert "JAX " in out and "backend 'cpu'" in out
    assert "No TPU visible to JAX: code here runs on the CPU" in out


def test_check_tpu_on_a_kaggle_v5e_8(run_snippet: RunSnippet) -> None:
    env = {"ISTPUVM": "1", "TPU_PROCESS_ADDRESSES": "local"}
    out = run_snippet("check_tpu.py", fakes=["tpu"], env=env).stdout
    assert "backend 'tpu', 8 device(s), kind 'TPU v5 lite'" in out
    assert "ISTPUVM=1" in out and "TPU_PROCESS_ADDRESSES=local" in out
    assert "No TPU visible" not in out


def test_check_tpu_explains_a_legacy_colab_tpu_address(run_snippet: RunSnippet) -> None:
    out = run_snippet("check_tpu.py", fakes=["tpu"], env={"COLAB_TPU_ADDR": "10.0.0.2:8470"}).stdout
    assert "COLAB_TPU_ADDR=10.0.0.2:8470" in out
    assert "legacy TPU Node runtime" in out


def test_tpu_jax_runs_on_a_colab_v5e_1(run_snippet: RunSnippet) -> None:
    out = run_snippet("tpu_jax.py", fakes=["tpu"], env={"FAKE_TPU_CHIPS": "1", "MATRIX_SIZE": "128"}).stdout
    assert "default backend: tpu" in out
    assert "device 0: tpu TPU v5 lite" in out and "device 1" not in out
    assert "result lives on: TPU_0" in out
    assert "WARNING" not in out


@pytest.mark.slow
def test_tpu_jax_warns_when_it_silently_runs_on_the_cpu(run_snippet: RunSnippet) -> None:
    pytest.importorskip("jax")
    out = run_snippet("tpu_jax.py", env={"MATRIX_SIZE": "256"}).stdout
    assert "WARNING: no TPU found; the code below runs on CPU" in out
    assert "result lives on: cpu:0" in out


@pytest.mark.slow
def test_tpu_pytorch_xla_syncs_on_eight_chips(run_snippet: RunSnippet, tmp_path: Path) -> None:
    log = tmp_path / "xla.log"
    out = run_snippet("tpu_pytorch_xla.py", fakes=["tpu"], env={"FAKE_XLA_LOG": str(log), "MATRIX_SIZE": "128"}).stdout
    assert "device type TPU, 8 device(s)" in out
    assert "WARNING" not in out
    assert log.read_text().split() == ["sync"]  # lazy tensors: one explicit sync runs the graph


@pytest.mark.slow
def test_tpu_tensorflow_falls_back_and_shows_the_weights_on_the_cpu(run_snippet: RunSnippet) -> None:
    pytest.importorskip("tensorflow")
    out = run_snippet("tpu_tensorflow.py", env={"SYNTHETIC_DATA": "1", "EPOCHS": "1"}).stdout
    assert "TensorFlow cannot reach a TPU" in out and "Using the default strategy" in out
    assert "1 replica(s); TPU devices: 0" in out
    # The point of the last line: a TPU run shows device:TPU:0, this CPU run shows CPU.
    last = out.strip().splitlines()[-1]
    assert last.startswith("first weight lives on:") and last.endswith("device:CPU:0")
