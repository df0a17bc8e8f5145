"""The TensorFlow backend: lazy import, memory growth, device choice, sync by fetching, OOM."""

import importlib.util
import os
import sys

import numpy as np
import pytest

from benchlib.backends import DeviceUnavailable, FrameworkMissing
from benchlib.backends import tf_backend as tfb


def test_missing_tensorflow_is_framework_missing(monkeypatch):
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "tensorflow" else real(name, *a))
    with pytest.raises(FrameworkMissing, match=r"tensorflow is not installed.*benchlib\[tf\]"):
        tfb.import_tf()


# The tests that import TensorFlow (about 25 s of CPU here) carry slow, so the fast run never imports it.
@pytest.mark.slow
def test_memory_growth_is_set_on_every_gpu_before_use(monkeypatch):
    tf = tfb.import_tf()
    calls = []
    monkeypatch.setattr(tfb, "_configured", False)
    monkeypatch.setattr(tf.config, "list_physical_devices", lambda kind=None: ["gpu0", "gpu1"] if kind == "GPU" else [])
    monkeypatch.setattr(tf.config.experimental, "set_memory_growth", lambda gpu, on: calls.append((gpu, on)))
    tfb.import_tf()
    assert calls == [("gpu0", True), ("gpu1", True)]
    tfb.import_tf()
    assert len(calls) == 2, "memory growth is configured once per process"


@pytest.mark.slow
def test_memory_growth_after_tf_initialised_does_not_fail(monkeypatch):
    tf = tfb.import_tf()
    monkeypatch.setattr(tfb, "_configured", False)
    monkeypatch.setattr(tf.config, "list_physical_devices", lambda kind=None: ["gpu0"])

    def too_late(gpu, on):
        raise RuntimeError("Physical devices cannot be modified after being initialized")

    monkeypatch.setattr(tf.config.experimental, "set_memory_growth", too_late)
    assert tfb.import_tf() is tf


@pytest.mark.slow
def test_log_level_hides_info_and_warnings_but_not_errors(monkeypatch):
    monkeypatch.delenv("TF_CPP_MIN_LOG_LEVEL", raising=False)
    tfb.import_tf()
    assert os.environ["TF_CPP_MIN_LOG_LEVEL"] == "2", "3 would hide TF's errors too"
    monkeypatch.setenv("TF_CPP_MIN_LOG_LEVEL", "0")
    tfb.import_tf()
    assert os.environ["TF_CPP_MIN_LOG_LEVEL"] == "0", "the user's choice wins"


@pytest.mark.slow
def test_cpu_resolves_and_a_missing_gpu_is_unavailable(monkeypatch):
    tf = tfb.import_tf()
    assert tfb.resolve_device("cpu") == ("/CPU:0", "cpu")
    monkeypatch.setattr(tf.config, "list_physical_devices", lambda kind=None: [])
    with pytest.raises(DeviceUnavailable, match="TensorFlow .* sees no GPU"):
        tfb.resolve_device("cuda")


@pytest.mark.slow
def test_cpu_device_name_is_the_probed_model():
    assert tfb.device_name("/CPU:0", "Test CPU") == "Test CPU"
    assert tfb.compute_capability("/CPU:0") is None
    assert tfb.mixed_precision_dtypes("/CPU:0") == ["bf16"]


@pytest.mark.slow
def test_fetch_returns_host_values():
    tf = tfb.import_tf()
    out = tfb.fetch({"loss": tf.constant(2.0), "pair": (tf.constant([1, 2]), 3)})
    assert out["loss"] == 2.0 and isinstance(out["loss"], np.floating)
    assert isinstance(out["pair"][0], np.ndarray) and out["pair"][1] == 3


@pytest.mark.slow
def test_oom_is_recognised():
    tf = tfb.import_tf()
    assert tfb.is_oom(tf.errors.ResourceExhaustedError(None, None, "OOM when allocating tensor with shape[1024,64]"))
    assert tfb.is_oom(RuntimeError("OOM when allocating tensor"))
    assert not tfb.is_oom(ValueError("shapes (3,) and (4,) are incompatible"))


def test_is_oom_never_imports_tensorflow(monkeypatch):
    monkeypatch.delitem(sys.modules, "tensorflow", raising=False)
    assert not tfb.is_oom(ValueError("x"))
    assert "tensorflow" not in sys.modules


@pytest.mark.slow
def test_torchvision_still_imports_after_tensorflow():
    """TF and triton (under torchvision) both bundle LLVM; TF first used to abort the process."""
    import subprocess

    code = "from benchlib.backends.tf_backend import import_tf; import_tf(); import torchvision; print('both loaded')"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0 and "both loaded" in done.stdout, done.stderr[-2000:]
