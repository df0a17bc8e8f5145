"""Background NVML sampling of SM clock, temperature, power and throttle reasons.

Shared free GPUs throttle; recording clocks and throttle reasons next to each measurement
explains variance that would otherwise look like noise. Without NVML this records nothing.
"""

from __future__ import annotations

import statistics
import threading
from types import TracebackType
from typing import Any

from benchlib.results.schema import Summary, Telemetry

_THROTTLE_NAMES = {
    "clocksThrottleReasonGpuIdle": "gpu_idle",
    "clocksThrottleReasonApplicationsClocksSetting": "applications_clocks_setting",
    "clocksThrottleReasonSwPowerCap": "sw_power_cap",
    "clocksThrottleReasonHwSlowdown": "hw_slowdown",
    "clocksThrottleReasonSyncBoost": "sync_boost",
    "clocksThrottleReasonSwThermalSlowdown": "sw_thermal_slowdown",
    "clocksThrottleReasonHwThermalSlowdown": "hw_thermal_slowdown",
    "clocksThrottleReasonHwPowerBrakeSlowdown": "hw_power_brake_slowdown",
}
# Idle and sync-boost are not slowdowns of a running workload.
_BENIGN = {"gpu_idle", "sync_boost", "applications_clocks_setting"}


def open_gpu(index: int, nvml: Any = None) -> tuple[Any, Any]:
    """``nvml`` (pynvml if None) initialised, and the handle of GPU ``index``.

    Without pynvml both are None; without a driver or that GPU the handle is None. GPU figures
    are optional: a caller that gets no handle records none.
    """
    if nvml is None:
        try:
            import pynvml
        except ImportError:
            return None, None
        nvml = pynvml
    try:
        nvml.nvmlInit()
        return nvml, nvml.nvmlDeviceGetHandleByIndex(index)
    except Exception:
        return nvml, None


def _summary(values: list[float]) -> Summary | None:
    return Summary(min=min(values), median=statistics.median(values), max=max(values)) if values else None


class TelemetrySampler:
    """Context manager sampling GPU ``index`` every ``interval_s`` in a daemon thread."""

    def __init__(self, index: int = 0, interval_s: float = 0.1, nvml: Any = None) -> None:
        self._index = index
        self._interval = interval_s
        self._nvml = nvml
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._clocks: list[float] = []
        self._temps: list[float] = []
        self._power: list[float] = []
        self._reasons: set[str] = set()
        self.samples = 0

    def _sample(self, handle: Any) -> None:
        nv = self._nvml
        self._clocks.append(float(nv.nvmlDeviceGetClockInfo(handle, nv.NVML_CLOCK_SM)))
        self._temps.append(float(nv.nvmlDeviceGetTemperature(handle, nv.NVML_TEMPERATURE_GPU)))
        self._power.append(nv.nvmlDeviceGetPowerUsage(handle) / 1000.0)
        mask = nv.nvmlDeviceGetCurrentClocksThrottleReasons(handle)
        for attr, name in _THROTTLE_NAMES.items():
            bit = getattr(nv, attr, 0)
            if bit and mask & bit and name not in _BENIGN:
                self._reasons.add(name)
        self.samples += 1

    def _loop(self, handle: Any) -> None:
        while not self._stop.is_set():
            try:
                self._sample(handle)
            except Exception:
                return
            self._stop.wait(self._interval)

    def __enter__(self) -> TelemetrySampler:
        self._nvml, handle = open_gpu(self._index, self._nvml)
        if handle is not None:
            self._thread = threading.Thread(target=self._loop, args=(handle,), daemon=True)
            self._thread.start()
        return self

    def __exit__(self, *exc: type[BaseException] | BaseException | TracebackType | None) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=2)

    def result(self) -> Telemetry | None:
        if not self.samples:
            return None
        return Telemetry(
            samples=self.samples,
            sm_clock_mhz=_summary(self._clocks),
            temperature_c=_summary(self._temps),
            power_w=_summary(self._power),
            throttle_reasons=sorted(self._reasons),
        )
