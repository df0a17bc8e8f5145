import itertools

import pytest

from benchlib.core.timing import Measurement, Timer


def test_statistics_of_known_samples():
    m = Measurement(times=(1.0, 2.0, 3.0, 4.0, 100.0), number_per_sample=1, warmup_s=0.0)
    assert m.n == 5
    assert m.median == 3.0
    assert m.mean == pytest.approx(22.0)
    assert m.min == 1.0 and m.max == 100.0
    assert m.iqr == pytest.approx(4.0 - 2.0)
    assert m.noisy  # IQR/median = 0.67 > 0.10


def test_quiet_samples_are_not_noisy():
    m = Measurement(times=(1.0, 1.01, 0.99, 1.0, 1.02), number_per_sample=10, warmup_s=0.1)
    assert m.iqr / m.median < 0.1
    assert not m.noisy


def test_measurement_needs_samples():
    with pytest.raises(ValueError):
        Measurement(times=(), number_per_sample=1, warmup_s=0.0)


class FakeClock:
    """Each call of the timed function advances the clock by ``step``; sync counts calls."""

    def __init__(self, step: float):
        self.now = 0.0
        self.step = step
        self.syncs = 0

    def clock(self) -> float:
        return self.now

    def fn(self) -> None:
        self.now += self.step

    def sync(self) -> None:
        self.syncs += 1


def test_timer_reports_per_call_time_and_syncs_once_per_block():
    fake = FakeClock(step=0.001)
    timer = Timer(fake.fn, sync=fake.sync, sync_name="fake", clock=fake.clock)
    m = timer.measure(warmup_s=0.01, min_time_s=0.05, max_time_s=1.0, target_block_s=0.01)
    assert m.median == pytest.approx(0.001)
    assert m.number_per_sample == 10  # 10 ms block / 1 ms per call
    assert not m.noisy
    assert m.sync == "fake"
    # warm-up blocks are single calls; measured blocks sync twice per block of 10 calls, not per call
    total_calls = round(fake.now / fake.step)
    assert fake.syncs < total_calls


def test_warmup_runs_for_its_time_budget():
    fake = FakeClock(step=0.002)
    timer = Timer(fake.fn, clock=fake.clock)
    spent, per_call = timer.warmup(0.02)
    assert spent >= 0.02
    assert per_call == pytest.approx(0.002)


def test_noisy_function_stops_at_time_budget_and_is_flagged():
    steps = itertools.cycle([0.001, 0.003, 0.0005, 0.004])
    now = [0.0]

    def fn():
        now[0] += next(steps)

    timer = Timer(fn, clock=lambda: now[0])
    m = timer.measure(warmup_s=0.0, min_time_s=0.0, max_time_s=0.05, target_block_s=0.0005, min_samples=5)
    assert m.noisy
    assert sum(t * m.number_per_sample for t in m.times) <= 0.05 + 0.005


def test_real_clock_times_a_sleepless_function():
    m = Timer(lambda: sum(range(100))).measure(warmup_s=0.01, max_time_s=0.2)
    assert m.n >= 5
    assert 0 < m.median < 0.01
