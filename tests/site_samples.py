"""Synthetic results files for the chart, site-block and browser tests.

The values are test inputs, not measurements: they only need distinct sizes so the charts have
something to order. The set covers what a chart must handle: two measured machines, a reported
source, an invalid result, failed and skipped workloads, and hostile strings in names and URLs.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import date, datetime, timezone
from pathlib import Path

from benchlib.results.schema import (
    Accelerators,
    GPUInfo,
    Machine,
    MeasurementRecord,
    Metric,
    PlatformInfo,
    Provenance,
    ResultsFile,
    Software,
    Stats,
)
from benchlib.results.store import write_results

TFLOPS = Metric(name="throughput", unit="TFLOPS", higher_is_better=True)
MS = Metric(name="time", unit="ms", higher_is_better=False)
GBPS = Metric(name="bandwidth", unit="GB/s", higher_is_better=True)
HOSTILE = "<script>window.__xss=1</script>"
HOSTILE_URL = "https://example.org/v100?a=1&b=<2>"


CREATED = datetime(2026, 11, 1, tzinfo=timezone.utc)
# What every results file needs; the builders below add nothing else unless a test names it.
HEADER = {
    "run_id": "20261101T000000Z-aaaaaa",
    "created": CREATED,
    "benchlib_version": "0.1.0",
    "methodology_version": "1",
}


def stats(median: float, **fields: object) -> Stats:
    """Per-call seconds around ``median``; ``fields`` override any statistic."""
    spread = {"median": median, "iqr": median / 50, "mean": median, "min": median, "max": median, "n": 7}
    return Stats(**(spread | {"noisy": False} | fields))


def measurement(workload: str, metric: Metric, value: float | None, **fields: object) -> MeasurementRecord:
    """A record of exactly these fields, torch on cuda unless ``fields`` say otherwise.

    The one builder of records for the tests. It adds no ``stats`` (plausibility checks read them):
    a test that wants them names them.
    """
    return MeasurementRecord(
        workload=workload, metric=metric, value=value, **({"framework": "torch", "device": "cuda"} | fields)
    )


def record(
    workload: str, value: float | None, device: str = "cuda", name: str = "Test GPU", **fields: object
) -> MeasurementRecord:
    """A record of a sample workload (matmul, conv2d or bandwidth) in its metric, with stats when it has a value."""
    metric = {"matmul": TFLOPS, "conv2d": MS, "bandwidth": GBPS}[workload]
    fields.setdefault("stats", stats(1e-3) if value is not None else None)
    return measurement(workload, metric, value, device=device, device_name=name, **fields)


def results_file(machine: Machine, measurements: Iterable[MeasurementRecord] = (), **fields: object) -> ResultsFile:
    """A results file of exactly these fields over ``HEADER``: the one builder of results files for the tests."""
    return ResultsFile(**(HEADER | fields), machine=machine, measurements=list(measurements))


def results(machine: Machine, measurements: list[MeasurementRecord], **fields: object) -> ResultsFile:
    """A finished quick run of ``measurements`` on ``machine``; ``fields`` override any header field."""
    return results_file(machine, measurements, **({"suite": "quick", "complete": True} | fields))


CPU = Machine(
    id="local-test-cpu-11111111",
    label="local · Test CPU (CPU only)",
    software=Software(python="3.11.7", torch="2.5.0", benchlib="0.1.0"),
)
GPU = Machine(
    id="colab-test-gpu-22222222",
    label="Colab · Test GPU",
    accelerators=Accelerators(nvidia=[GPUInfo(index=0, name="Test GPU")]),
    software=Software(python="3.11.7", torch="2.5.0", benchlib="0.1.0"),
)
REPORTED = Machine(id="reported-hostile", label=f"Old GPU {HOSTILE}")


SCRIPT = "<script>window.__pwned='script';alert('script')</script>"
IMG = "<img src=x onerror=\"window.__pwned='img';alert('img')\">"
SVG = "\"><svg onload=\"window.__pwned='svg';alert('svg')\">"
CLOSE = "</script><script>window.__pwned='close';alert('close')</script><!--"
MARKDOWN = "[click me](javascript:window.__pwned='md';alert('md'))"
JS_URL = "javascript:window.__pwned='url';alert('url')"
PAYLOADS = (SCRIPT, IMG, SVG, CLOSE, MARKDOWN)


def hostile_files() -> dict[str, ResultsFile]:
    """Relative path -> results file: a measured GPU run and three reported sources, every free-text
    field carrying a payload that would set ``window.__pwned`` or open an ``alert`` if it ran."""
    gpu_name = f"GPU {SCRIPT}"
    machine = Machine(
        id=f"local-{SVG}",
        label=f"Rig {IMG}",
        platform=PlatformInfo(name="local", variant=SCRIPT),
        accelerators=Accelerators(nvidia=[GPUInfo(index=0, name=gpu_name)]),
        software=Software(python=SCRIPT, torch=IMG, benchlib=CLOSE),
    )

    def rec(workload: str, metric: Metric, value: float | None, **kw: object) -> MeasurementRecord:
        kw.setdefault("stats", stats(1e-3) if value is not None else None)
        return measurement(workload, metric, value, device_name=gpu_name, **kw)

    measured = results_file(
        machine,
        [
            rec("matmul", TFLOPS, 10.0, dtype=f"fp16 {IMG}", params={"n": 1024}),
            rec("matmul", TFLOPS, 12.0, dtype=MARKDOWN, params={"n": 1024}),
            rec("matmul", TFLOPS, 99.0, dtype="fp32", peak=8.0, status="invalid", message=f"too fast {SCRIPT}"),
            rec("conv2d", MS, 3.0, dtype="fp32", params={"batch": SCRIPT, "side": IMG}),
            rec("conv2d", MS, None, status="error", message=f"conv2d raised {IMG} {CLOSE}"),
            rec("bandwidth", GBPS, 200.0, dtype="uint8", params={"direction": SVG, "mib": 64}),
            rec("bandwidth", GBPS, None, status="skipped", message=MARKDOWN),
        ],
        run_id=f"run-{MARKDOWN}",
        benchlib_version=IMG,
        methodology_version=SVG,
        suite=SCRIPT,
        complete=True,
    )

    def reported(name: str, url: str) -> ResultsFile:
        return results_file(
            Machine(id=f"reported-{name}", label=f"Old {name} {SCRIPT}"),
            [measurement("matmul", TFLOPS, 4.0, device_name=f"Old {name} {SVG}", dtype="fp16")],
            run_id=f"reported-{name}",
            methodology_version="reported",
            complete=True,
            provenance=Provenance(
                kind="reported", source_url=url, as_of=date(2020, 1, 1), context=f"context {IMG} {MARKDOWN}"
            ),
        )

    return {
        "hostile/measured.json": measured,
        "reported/js-url.json": reported("a", JS_URL),
        "reported/mixed-case-js.json": reported("b", " JaVaScRiPt:window.__pwned='case';alert('case')"),
        "reported/quote-break.json": reported("c", f"https://example.org/\"{SCRIPT}<a href='{JS_URL}'>"),
    }


def sample_files() -> dict[str, ResultsFile]:
    """Relative path -> results file, laid out like the repository's results/ folder."""
    conv = {"batch": 16, "side": 32, "scale": 0.125}
    return {
        f"{CPU.id}/cpu-run.json": results(
            CPU,
            [
                record("matmul", 0.5, "cpu", "Test CPU", dtype="fp32", params={"n": 512}),
                record("matmul", 1.0, "cpu", "Test CPU", dtype="bf16", params={"n": 512}),
                record("conv2d", 8.0, "cpu", "Test CPU", dtype="fp32", params=conv),
                record(
                    "bandwidth", 40.0, "cpu", "Test CPU", dtype="uint8", params={"direction": "device_copy", "mib": 64}
                ),
            ],
        ),
        f"{GPU.id}/gpu-run.json": results(
            GPU,
            [
                record("matmul", 4.0, dtype="fp32", params={"n": 1024}, peak=8.0, efficiency=0.5),
                record("matmul", 20.0, dtype="fp16", params={"n": 1024}, peak=64.0, efficiency=0.3125),
                record(
                    "matmul",
                    90.0,
                    dtype="bf16",
                    params={"n": 1024},
                    peak=64.0,
                    efficiency=1.40625,
                    status="invalid",
                    message="90 TFLOPS is 141% of the known peak 64",
                ),
                record("conv2d", None, status="oom", message="conv2d: out of memory"),
                record("bandwidth", 250.0, dtype="uint8", params={"direction": "device_copy", "mib": 64}),
                record("bandwidth", 12.0, dtype="uint8", params={"direction": "host_to_device", "mib": 64}),
                record("bandwidth", None, status="skipped", message="needs pinned memory"),
            ],
            run_id="20261102T000000Z-bbbbbb",
        ),
        "reported/hostile.json": results(
            REPORTED,
            [record("matmul", 6.0, name=f"Old GPU {HOSTILE}", dtype="fp16", params={})],
            provenance=Provenance(
                kind="reported", source_url=HOSTILE_URL, as_of=date(2020, 2, 1), context=f"reported context {HOSTILE}"
            ),
        ),
    }


def write_samples(folder: Path) -> Path:
    for rel, data in sample_files().items():
        write_results(data, folder / rel)
    return folder
