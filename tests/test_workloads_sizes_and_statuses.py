"""The suite sizes and the groups of statuses are each defined once; what is keyed by them agrees."""

from typing import get_args

import benchlib.measure.runner as runner
from benchlib.measure import budget
from benchlib.measure.distributed import report
from benchlib.results.schema import FAILED_STATUSES, NO_VALUE_STATUSES, Status
from benchlib.workloads import SIZES


def test_every_table_keyed_by_suite_size_has_exactly_the_suite_sizes():
    assert SIZES == ("quick", "standard", "full")
    assert runner.SUITES == SIZES
    assert tuple(report.SIZES) == SIZES  # `benchlib run --devices N --suite S` launches size S
    assert tuple(budget.FALLBACK_EXPECTED_S) == SIZES


def test_a_run_failed_if_it_erred_ran_out_of_memory_or_measured_the_impossible():
    assert set(FAILED_STATUSES) == {"error", "oom", "invalid"}  # a skip is chosen, not a failure


def test_statuses_without_a_number_are_those_never_plotted():
    assert set(NO_VALUE_STATUSES) == {"error", "oom", "skipped"}  # an invalid value keeps its number
    assert set(get_args(Status)) == {"ok", *FAILED_STATUSES, *NO_VALUE_STATUSES}
