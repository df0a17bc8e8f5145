"""The Contributing page's example workload really registers and runs."""

import importlib.util
from pathlib import Path

from benchlib.measure.runner import run_workload
from benchlib.workloads import _REGISTRY, RunContext

SNIPPET = Path(__file__).parents[1] / "snippets" / "contributing" / "example_workload.py"


def test_example_workload_registers_and_runs(machine):
    spec = importlib.util.spec_from_file_location("example_workload", SNIPPET)
    module = importlib.util.module_from_spec(spec)
    try:
        spec.loader.exec_module(module)
        workload = _REGISTRY["example_add"]
        (record,) = run_workload(workload, RunContext(device="cpu", machine=machine), "cpu")
    finally:
        _REGISTRY.pop("example_add", None)
    assert record.status == "ok", record.message
    assert record.value > 0 and record.metric.unit == "Gelem/s"
    assert workload.params("standard") == workload.params("quick")  # sizes fall back to the next smaller
