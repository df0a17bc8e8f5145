"""Framework start-up chatter (absl, oneDNN, cuInit) is kept out of benchlib's output; real errors are not."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pytest

from benchlib.core.quiet import drop_noise, native_stderr_filtered

# Captured from TensorFlow 2.21 on a machine without a GPU (also what tests/benchlib_test_workloads.py prints).
TF_NOISE = (Path(__file__).parent / "fixtures" / "tf_noise.txt").read_text(encoding="utf-8")
NOT_NOISE = "E0000 00:00:1795425360.450892   12416 op_kernel.cc:1] a real error\nthe workload's own line\n"


def test_drop_noise_keeps_only_what_is_not_known_noise():
    assert drop_noise(TF_NOISE) == ""
    assert drop_noise(TF_NOISE + NOT_NOISE) == NOT_NOISE
    assert drop_noise("I0000 in a sentence of the workload's own\n") == "I0000 in a sentence of the workload's own\n"


def test_native_stderr_is_filtered_while_the_block_runs(capfd):
    with native_stderr_filtered():
        os.write(2, (TF_NOISE + NOT_NOISE).encode())
    os.write(2, b"after\n")
    assert capfd.readouterr().err == NOT_NOISE + "after\n"


@pytest.mark.slow
@pytest.mark.skipif(importlib.util.find_spec("tensorflow") is None, reason="needs TensorFlow")
def test_importing_tensorflow_through_benchlib_prints_nothing():
    env = {k: v for k, v in os.environ.items() if k not in ("TF_CPP_MIN_LOG_LEVEL",)}
    code = "from benchlib.backends.tf_backend import import_tf; import_tf().constant(1.0).numpy()"
    run = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr
    assert run.stdout == run.stderr == ""


def test_a_dataset_that_cannot_be_downloaded_is_one_line(capsys):
    from benchlib.models import fashion_mnist as fm

    def offline():
        print("Downloading data from https://storage.googleapis.com/tensorflow/tf-keras-datasets/train-labels.gz")
        print("Traceback (most recent call last): ...", file=sys.stderr)
        raise OSError("[Errno -2] Name or service not known")

    data = fm.load(offline, 20)
    assert data.source == "synthetic" and data.x.shape == (20, fm.SIDE, fm.SIDE)
    out = capsys.readouterr()
    assert out.out == ""
    assert out.err.splitlines() == [
        "Fashion-MNIST could not be loaded; synthetic data of the same shape stands in "
        "(data_note in the results file says why)"
    ]
    assert "Name or service not known" in data.note
