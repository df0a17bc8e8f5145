from __future__ import annotations

import importlib.util
import os

import pytest

# Tests never reach the Hugging Face hub (nothing can be downloaded here, and Colab-only loading code
# falls back by design). Offline, an unknown model id fails at once instead of after ~25 s of
# retries whose log lines land in whatever stream a CliRunner captured first.
os.environ.setdefault("HF_HUB_OFFLINE", "1")

# triton (which torch._dynamo, torchvision and fastai import) aborts the whole process with an LLVM
# option clash when TensorFlow was imported first. Tests import both frameworks in this one
# process in any order, so triton goes first; benchlib's own TF backend does the same.
if importlib.util.find_spec("triton") is not None:
    import triton  # noqa: F401

from benchlib.results.schema import CPUInfo, HostInfo, Machine, Software


@pytest.fixture
def machine() -> Machine:
    """A small machine record, so runner tests don't depend on probing this host."""
    return Machine(
        id="local-test-cpu-0000",
        label="local · Test CPU (CPU only)",
        host=HostInfo(cpu=CPUInfo(model="Test CPU", logical_cores=2)),
        software=Software(python="3.11", benchlib="0.1.0"),
    )


TINY_MODULE = "benchlib_test_workloads"


@pytest.fixture
def tiny(monkeypatch):
    """The tiny test workloads (tests/benchlib_test_workloads.py), registered in a copy of the registry
    that is dropped after the test; runs and isolated children find them through the environment."""
    import importlib
    import sys

    from benchlib import workloads

    monkeypatch.setattr(workloads, "_REGISTRY", dict(workloads.all_workloads()))
    monkeypatch.setenv("BENCHLIB_WORKLOAD_MODULES", TINY_MODULE)
    module = sys.modules.get(TINY_MODULE)
    return importlib.reload(module) if module else importlib.import_module(TINY_MODULE)
