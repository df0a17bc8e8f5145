"""What a workload's records look like on the Results page: the rows each of its charts plots, and the rest."""

from __future__ import annotations

from datetime import datetime, timezone

import pandas as pd
from site_samples import results_file

from benchlib.results.load import rows_of
from benchlib.results.schema import CPUInfo, HostInfo, Machine, MeasurementRecord, Software
from benchlib.site.charts import plotted_rows
from benchlib.site.data import chart_frames, derive
from benchlib.workloads import charts

# Like conftest's ``machine`` fixture, for module-scoped fixtures that run a workload once for many tests.
TEST_CPU = Machine(
    id="local-test-cpu-0000",
    label="local · Test CPU (CPU only)",
    host=HostInfo(cpu=CPUInfo(model="Test CPU", logical_cores=2)),
    software=Software(python="3.11", benchlib="0.1.0"),
)


def chart_rows(records: list[MeasurementRecord], machine: Machine = TEST_CPU) -> dict[str, pd.DataFrame]:
    """Every chart's rows (plotted or listed in its table) for one results file holding ``records``."""
    results = results_file(
        machine, records, run_id="r", created=datetime(2026, 11, 24, tzinfo=timezone.utc), suite="quick"
    )
    return chart_frames(derive(pd.DataFrame(rows_of(results, "results/test.json"))))


def plotted(records: list[MeasurementRecord], chart_id: str, machine: Machine = TEST_CPU) -> dict[str, float]:
    """The bars of chart ``chart_id``: setting → value."""
    rows = plotted_rows(chart_rows(records, machine)[chart_id], charts()[chart_id])
    return dict(zip(rows["setting"], rows["value"]))
