"""Mixed precision: fp32 and autocast/mixed policies measured in one run, and the speedup."""

import dataclasses

import pytest
from fakes import not_installed

from benchlib.measure.runner import run_workload
from benchlib.workloads import RunContext, get

TINY = {
    "batch_size": 4,
    "train_samples": 8,
    "dtypes": ["fp16", "bf16"],
    "timer": {"warmup_s": 0.0, "min_time_s": 0.0, "max_time_s": 0.3, "min_samples": 3, "target_block_s": 0.0},
}


def run_tiny(name, machine):
    w = dataclasses.replace(get(name), sizes={"quick": TINY})
    return run_workload(w, RunContext(device="cpu", machine=machine, size="quick"), "cpu")


@pytest.mark.parametrize(
    "name, framework",
    [
        pytest.param("amp", "torch", marks=pytest.mark.slow),
        pytest.param("amp_keras", "tensorflow", marks=pytest.mark.slow),
    ],
)
def test_cpu_runs_fp32_and_bf16_and_skips_fp16(name, framework, machine):
    records = run_tiny(name, machine)
    by = {(r.metric.name, r.dtype): r for r in records}
    assert {r.workload for r in records} == {name} and {r.framework for r in records} == {framework}
    fp32, bf16 = by[("step_time", "fp32")], by[("step_time", "bf16")]
    assert fp32.status == bf16.status == "ok"
    assert fp32.value == pytest.approx(fp32.stats.median * 1e3) and fp32.metric.unit == "ms"
    speedup = by[("speedup", "bf16")]
    assert (speedup.metric.unit, speedup.metric.higher_is_better) == ("x", True)
    assert speedup.value == pytest.approx(fp32.value / bf16.value)
    assert speedup.params["fp32_step_ms"] == pytest.approx(fp32.value)
    skipped = by[("speedup", "fp16")]
    assert skipped.status == "skipped" and "fp16" in skipped.message and skipped.message.startswith("amp:")


@pytest.mark.slow
def test_torch_steps_use_autocast_and_only_fp16_uses_the_grad_scaler(machine):
    by = {(r.metric.name, r.dtype): r for r in run_tiny("amp", machine)}
    assert by[("step_time", "fp32")].params["autocast"] is None
    assert by[("step_time", "bf16")].params == by[("step_time", "bf16")].params | {
        "autocast": "torch.bfloat16",
        "grad_scaler": False,
    }


@pytest.mark.slow  # over 3 s here: kept out of the fast command (README command 3)
def test_fp16_step_with_grad_scaler_trains():
    """The fp16 path (CUDA in real runs) is the same code: autocast + GradScaler; on the CPU it runs too."""
    import torch

    from benchlib.models import fashion_mnist as fm
    from benchlib.models.training import torch_step

    x, y = fm.synthetic(8)
    step = torch_step(fm.torch_model(), x, y, 4, "cpu", "fp16")
    assert step.details == {"autocast": "torch.float16", "grad_scaler": True}
    assert torch.isfinite(step.run()) and step.steps_per_epoch == 2


@pytest.mark.slow
def test_keras_policy_is_restored_after_building_a_mixed_model():
    from benchlib.backends import tf_backend as tfb
    from benchlib.models import fashion_mnist as fm
    from benchlib.models.training import keras_step

    keras = tfb.import_keras()
    x, y = fm.synthetic(8)
    step = keras_step(lambda: fm.keras_model(keras), x, y, 4, "/CPU:0", "bf16")
    assert step.details["keras_policy"] == "mixed_bfloat16"
    assert keras.mixed_precision.global_policy().name == "float32"


def test_amp_needs_more_samples_than_a_batch():
    from benchlib.models import fashion_mnist as fm
    from benchlib.models.training import torch_step

    x, y = fm.synthetic(4)
    with pytest.raises(ValueError, match="batch_size 8 is larger than the 4 training samples"):
        torch_step(fm.torch_model(), x, y, 8, "cpu")


def test_missing_tensorflow_skips_amp_keras(monkeypatch, machine):
    not_installed(monkeypatch, "tensorflow")
    [record] = run_tiny("amp_keras", machine)
    assert record.status == "skipped" and "tensorflow is not installed" in record.message
