"""Every registered workload keeps the contract the runner, the charts and the score rely on."""

from __future__ import annotations

from string import Formatter

import pytest

from benchlib.results.load import COLUMNS, PARAM_PREFIX
from benchlib.site.data import FRAMEWORK_NAMES
from benchlib.workloads import SIZES, PerDollar, Rate, Ratio, Relative, Workload, WorkRate, all_workloads

WORKLOADS = all_workloads()
# What a setting format or a rule may name: a results frame column, a param, or the framework's name.
FRAME_FIELDS = {*COLUMNS, "framework_name"}


def _names_a_frame_field(field: str) -> bool:
    return field in FRAME_FIELDS or field.startswith(PARAM_PREFIX)


@pytest.mark.parametrize("workload", WORKLOADS.values(), ids=list(WORKLOADS))
def test_a_workload_says_what_it_is_and_how_it_runs(workload: Workload) -> None:
    assert workload.name and workload.description and workload.metric.unit
    assert workload.framework in FRAMEWORK_NAMES or workload.framework == "various"
    if workload.run is None:
        assert workload.suites == (), "a workload only other commands write or sources report is in no suite"
    else:
        assert set(workload.suites) <= set(SIZES)
        for size in workload.suites:
            assert workload.params(size), f"{workload.name} has no parameters for {size}"


@pytest.mark.parametrize("workload", WORKLOADS.values(), ids=list(WORKLOADS))
def test_params_of_its_own_on_a_device_replace_params_the_size_has(workload: Workload) -> None:
    """A device's params (`Workload.device_sizes`) change a size the workload runs; a name the size
    lacks would be a typo the workload never reads."""
    for device, sizes in workload.device_sizes.items():
        assert device in ("cpu", "cuda", "mps"), (workload.name, device)
        for size, changed in sizes.items():
            assert size in workload.suites and changed, (workload.name, device, size)
            assert set(changed) <= set(workload.params(size)), (workload.name, device, size)
            on_device = workload.params(size, device)
            assert on_device == workload.params(size) | changed and on_device != workload.params(size)
            assert workload.params(size, "another device") == workload.params(size)


@pytest.mark.parametrize("workload", WORKLOADS.values(), ids=list(WORKLOADS))
def test_its_charts_name_only_fields_a_results_frame_has(workload: Workload) -> None:
    for plot in workload.plots:
        fields = [name for _, name, _, _ in Formatter().parse(plot.setting) if name]
        assert all(_names_a_frame_field(f) for f in fields), (workload.name, plot.setting)
        assert all(_names_a_frame_field(c) for c in plot.where), (workload.name, plot.where)
        assert plot.chart.id and plot.chart.title and plot.chart.setting_title
    for rule in workload.derived:
        if isinstance(rule, Ratio):
            assert _names_a_frame_field(rule.over) and all(_names_a_frame_field(c) for c in rule.same)
        elif isinstance(rule, Relative):
            assert all(_names_a_frame_field(c) for c in rule.same)
        elif isinstance(rule, Rate):
            assert rule.count
        else:
            assert isinstance(rule, (WorkRate, PerDollar)) and rule.of


def test_a_chart_id_is_one_chart() -> None:
    """Workloads that share a chart share its declaration; two different charts never share an id."""
    seen = {}
    for workload in WORKLOADS.values():
        for plot in workload.plots:
            assert seen.setdefault(plot.chart.id, plot.chart) == plot.chart, plot.chart.id


def test_score_keys_are_unique_and_parts_are_training_or_inference() -> None:
    keys = [part.key for w in WORKLOADS.values() for part in w.score]
    assert keys and len(keys) == len(set(keys))
    assert {part.kind for w in WORKLOADS.values() for part in w.score} == {"training", "inference"}


def test_a_former_name_points_to_one_workload_per_framework() -> None:
    for workload in WORKLOADS.values():
        for old in workload.formerly:
            claim = [w.name for w in WORKLOADS.values() if old in w.formerly and w.framework == workload.framework]
            assert claim == [workload.name]
            named = WORKLOADS.get(old)
            assert named is None or named.framework != workload.framework
