"""Workloads declare the prediction checked against their records; derive evaluates the declarations, never names."""

from __future__ import annotations

import re
from datetime import datetime, timezone
from pathlib import Path

import pytest
from site_samples import TFLOPS, measurement, results_file

from benchlib import workloads
from benchlib.derive.checks import checks, sweeps
from benchlib.results.schema import Machine, MeasurementRecord, ResultsFile, Software
from benchlib.workloads import LONGER_SWEEP, PEAK_COMPUTE, NotPredicted, PredictionCheck, Workload, not_predicted

PACKAGE = Path(__file__).resolve().parents[1] / "benchlib"
MACHINE = Machine(id="test-machine", label="Test machine", software=Software(python="3.11", benchlib="0.1.0"))


@pytest.fixture
def newcomer(monkeypatch) -> Workload:
    """A workload no module of benchlib names, declaring two checks."""
    workload = Workload(
        name="newcomer_gemm",
        framework="torch",
        description="a test's",
        metric=TFLOPS,
        sizes={},
        run=None,
        checks=(PredictionCheck(PEAK_COMPUTE, metric="throughput", device="cuda"), PredictionCheck(LONGER_SWEEP)),
        not_predicted=NotPredicted("a test's CPU figures", "no peak for a CPU"),
    )
    workloads.all_workloads()
    monkeypatch.setitem(workloads._REGISTRY, workload.name, workload)
    return workload


def _file(*records: MeasurementRecord) -> ResultsFile:
    return results_file(MACHINE, records, run_id="r", created=datetime(2026, 11, 25, tzinfo=timezone.utc))


def _record(device: str, value: float, sizes: list[int], name: str = "NVIDIA H100 80GB HBM3") -> MeasurementRecord:
    return measurement(
        "newcomer_gemm", TFLOPS, value, device=device, device_name=name, dtype="bf16", params={"sizes": sizes}
    )


def test_a_new_workloads_declared_checks_apply_without_its_name_anywhere(newcomer):
    gpu, cpu = _record("cuda", 600.0, [1024, 2048]), _record("cpu", 1.0, [1024], name="CPU")
    [check] = checks([_file(gpu, cpu)])
    assert check.kind == "newcomer_gemm" and check.predicted > 0 and check.measured == 600.0
    [sweep] = sweeps([_file(gpu), _file(_record("cuda", 700.0, [1024, 2048, 4096]))])
    assert sweep.short is gpu and sweep.reached == pytest.approx(600 / 700)
    assert not_predicted("newcomer_gemm", "torch", "throughput", "cpu", {}) is None, "its sweep check applies"


def test_a_check_applies_only_to_the_records_it_names():
    check = PredictionCheck(PEAK_COMPUTE, metric="throughput", device="cuda", where={"model": "x"})
    assert check.applies("throughput", "cuda", {"model": "x", "batch": 1})
    assert not check.applies("throughput", "cpu", {"model": "x"})
    assert not check.applies("latency", "cuda", {"model": "x"})
    assert not check.applies("throughput", "cuda", {"model": "y"})
    with pytest.raises(ValueError, match="unknown prediction 'guess'"):
        PredictionCheck("guess")


def test_nothing_outside_workloads_picks_records_by_a_workloads_name():
    """The Contributing page's promise: records are chosen by what their workload declares."""
    names = sorted(workloads.all_workloads(), key=len, reverse=True)
    quoted = "|".join(re.escape(n) for n in names)
    picks = re.compile(rf"""(\.workload|\["(?:workload|owner)"\])\s*(?:==|!=|in)\s*\(?["'](?:{quoted})["']""")
    found = [
        f"{path.relative_to(PACKAGE.parent)}: {line.strip()}"
        for path in PACKAGE.rglob("*.py")
        if "workloads" not in path.relative_to(PACKAGE).parts[:1]
        for line in path.read_text(encoding="utf-8").splitlines()
        if picks.search(line)
    ]
    assert not found, "declare a PredictionCheck or a Plot instead: " + "; ".join(found)
