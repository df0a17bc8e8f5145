"""The seeds' Fashion-MNIST CNN: identical in torch and Keras, and its training workloads."""

import dataclasses
import socket

import numpy as np
import pytest
from fakes import not_installed

from benchlib.backends import tf_backend as tfb
from benchlib.measure.runner import run_workload
from benchlib.models import fashion_mnist as fm
from benchlib.workloads import RunContext, get

TINY = {
    "batch_size": 8,
    "train_samples": 32,
    "data": "synthetic",
    "real_epoch": False,
    "timer": {"warmup_s": 0.0, "min_time_s": 0.0, "max_time_s": 0.5, "min_samples": 3, "target_block_s": 0.0},
}
# Worked out by hand from the layers (weights + biases; BatchNorm: gamma, beta | mean, variance):
# BN(1) 2|2, conv 1->64 5x5 1664, BN(64) 128|128, conv 64->128 204928, BN(128) 256|256,
# conv 128->256 819456, dense 3*3*256->256 590080, dense 256->10 2570.
TRAINABLE, NON_TRAINABLE = 1_619_084, 386


def run_tiny(name, machine, **overrides):
    w = get(name)
    w = dataclasses.replace(w, sizes={"quick": TINY | overrides})
    return run_workload(w, RunContext(device="cpu", machine=machine, size="quick"), "cpu")


@pytest.mark.slow
def test_torch_and_keras_models_have_the_same_parameters():
    """Counted the same way in both: trainable weights, plus BatchNorm's moving mean and variance
    as non-trainable (Keras' non_trainable_weights; torch's float buffers, not the integer
    num_batches_tracked counter, which Keras doesn't have)."""
    torch_counts = fm.param_counts_torch(fm.torch_model())
    keras_counts = fm.param_counts_keras(fm.keras_model(tfb.import_keras()))
    assert torch_counts == keras_counts == fm.ParamCounts(TRAINABLE, NON_TRAINABLE)
    assert keras_counts.total == fm.keras_model(tfb.import_keras()).count_params()


@pytest.mark.slow
def test_both_models_map_a_batch_to_ten_class_scores():
    import torch

    assert fm.torch_model()(torch.zeros(2, 1, 28, 28)).shape == (2, 10)
    out = fm.keras_model(tfb.import_keras())(np.zeros((2, 28, 28, 1), np.float32))
    assert out.shape == (2, 10)
    np.testing.assert_allclose(np.asarray(out).sum(axis=1), 1.0, rtol=1e-5)  # softmax


@pytest.mark.parametrize(
    "name, framework",
    [("cnn_fashion_mnist", "torch"), pytest.param("cnn_fashion_mnist_keras", "tensorflow", marks=pytest.mark.slow)],
)
def test_training_reports_throughput_and_epoch_time(name, framework, machine):
    records = run_tiny(name, machine)
    assert [r.status for r in records] == ["ok", "ok"], [r.message for r in records]
    throughput, epoch = records
    assert {r.workload for r in records} == {name}, "every record names the workload that made it"
    assert {r.framework for r in records} == {framework}
    assert (throughput.metric.name, throughput.metric.unit) == ("throughput", "samples/s")
    assert throughput.value == pytest.approx(8 / throughput.stats.median)
    assert throughput.stats.n >= 3
    steps = 60_000 // 8
    assert (epoch.metric.name, epoch.metric.unit) == ("epoch_time", "s")
    assert epoch.value == pytest.approx(throughput.stats.median * steps)
    assert epoch.params["epoch_time_from"] == f"median step time x {steps} steps"
    assert throughput.params["data"] == "synthetic" and throughput.params["parameters"] == TRAINABLE + NON_TRAINABLE


@pytest.mark.slow
def test_real_epoch_is_timed_end_to_end_when_the_data_covers_one(machine):
    _, epoch = run_tiny("cnn_fashion_mnist", machine, real_epoch=True, epoch_samples=16)
    assert epoch.status == "ok" and epoch.value > 0
    assert epoch.params["epoch_time_from"] == "measured: one epoch end to end"
    assert epoch.params["epoch_samples"] == 16


def test_cnn_workloads_are_standard_and_full_not_quick():
    for name in ("cnn_fashion_mnist", "cnn_fashion_mnist_keras"):
        w = get(name)
        assert set(w.suites) == {"standard", "full"}
        assert w.params("full")["train_samples"] == 60_000 and w.params("full")["real_epoch"]


def test_real_data_when_the_loader_works_with_a_timeout_set():
    seen = []

    def loader():
        seen.append(socket.getdefaulttimeout())
        return fm.synthetic(100, seed=1)

    data = fm.load(loader, 40, "auto", timeout_s=3.0)
    assert data.source == "real" and data.x.shape == (40, 28, 28) and data.y.shape == (40,)
    assert seen == [3.0], "the loader runs under a socket timeout so a dead network can't hang it"
    assert socket.getdefaulttimeout() is None


def test_synthetic_data_of_the_same_shape_when_loading_fails():
    def offline():
        raise OSError("[Errno -2] Name or service not known")

    data = fm.load(offline, 50)
    assert data.source == "synthetic" and "Name or service not known" in data.note
    assert data.x.shape == (50, 28, 28) and data.x.dtype == np.uint8
    assert data.y.max() < 10


def test_synthetic_request_never_calls_the_loader():
    def must_not_run():
        raise AssertionError("loader called")

    assert fm.load(must_not_run, 10, "synthetic").source == "synthetic"
    with pytest.raises(ValueError, match="data must be"):
        fm.load(must_not_run, 10, "cached")


@pytest.mark.parametrize("name, module", [("cnn_fashion_mnist_keras", "tensorflow"), ("cnn_fashion_mnist", "torch")])
def test_missing_framework_skips_with_a_reason(name, module, monkeypatch, machine):
    not_installed(monkeypatch, module)
    [record] = run_tiny(name, machine)
    assert record.status == "skipped"
    assert f"{module} is not installed" in record.message
