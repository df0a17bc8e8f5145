import time

from benchlib.measure.telemetry import TelemetrySampler


class FakeNVML:
    NVML_CLOCK_SM = 0
    NVML_TEMPERATURE_GPU = 0
    clocksThrottleReasonGpuIdle = 0x1
    clocksThrottleReasonSwPowerCap = 0x4
    clocksThrottleReasonHwThermalSlowdown = 0x40

    def __init__(self):
        self.calls = 0

    def nvmlInit(self):
        pass

    def nvmlDeviceGetHandleByIndex(self, index):
        return f"gpu{index}"

    def nvmlDeviceGetClockInfo(self, handle, kind):
        self.calls += 1
        return 1590 if self.calls % 2 else 1200

    def nvmlDeviceGetTemperature(self, handle, kind):
        return 71

    def nvmlDeviceGetPowerUsage(self, handle):
        return 69_500  # milliwatts

    def nvmlDeviceGetCurrentClocksThrottleReasons(self, handle):
        return self.clocksThrottleReasonSwPowerCap | self.clocksThrottleReasonGpuIdle


def test_samples_clock_temperature_power_and_throttle_reasons():
    with TelemetrySampler(interval_s=0.005, nvml=FakeNVML()) as sampler:
        time.sleep(0.1)
    t = sampler.result()
    assert t.samples >= 3
    assert t.sm_clock_mhz.min == 1200 and t.sm_clock_mhz.max == 1590
    assert t.temperature_c.median == 71
    assert t.power_w.max == 69.5
    assert t.throttle_reasons == ["sw_power_cap"]  # idle is not a slowdown


def test_without_nvml_records_nothing():
    class Broken(FakeNVML):
        def nvmlInit(self):
            raise RuntimeError("NVML Shared Library Not Found")

    with TelemetrySampler(nvml=Broken()) as sampler:
        pass
    assert sampler.result() is None
