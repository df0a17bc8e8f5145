"""Data-parallel scaling efficiency, written by ``benchlib launch`` (`benchlib.measure.distributed.launch`).

One record per launch and engine: N-device throughput over N times the one-device throughput,
both measured in that launch (1 = linear scaling); the plausibility checks mark a value above
1.1 invalid. Its params hold the engine, world size, backend, interconnect and both rates.
"""

from __future__ import annotations

from benchlib.results.plausibility import SCALING_EFFICIENCY
from benchlib.results.schema import Metric
from benchlib.workloads import Chart, Plot, not_run, register

NAME = "dp-scaling"
EFFICIENCY = Metric(name=SCALING_EFFICIENCY, unit="fraction of linear", higher_is_better=True)
CHART = Chart(
    NAME,
    "Scaling efficiency of data-parallel training",
    "setup",
    axis_title="efficiency (1 = linear scaling)",
    rule_at=1.0,
)
# Shown on the multi-GPU guide, not on the Results page: declared in `page_plots`.
PLOT = Plot(CHART, EFFICIENCY.name, "{framework_name} · {param_world_size} devices · {param_interconnect}")

WORKLOAD = register(
    not_run(
        name=NAME,
        framework="torch",
        description="N-device training throughput over N times one device's, in one launch (written by benchlib launch).",
        metric=EFFICIENCY,
        page_plots=(PLOT,),
    )
)
