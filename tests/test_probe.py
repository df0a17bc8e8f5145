"""Tests for benchlib.probe: platform detection, host, NVIDIA, TPU, id/label, report and units."""

from __future__ import annotations

import importlib.machinery
import io
import platform as stdlib_platform
import re
import stat
import subprocess
import sys
import types
from collections.abc import Callable
from pathlib import Path
from typing import Any

import psutil
import pytest
from rich.console import Console

import benchlib
from benchlib.core.units import GIB, MIB
from benchlib.probe import detect_platform, format_bytes, frameworks, host, machine_table, nvidia, probe_machine
from benchlib.probe.machine import PLATFORM_NAMES, machine_id, machine_label, short_cpu_name
from benchlib.results.schema import (
    Accelerators,
    CPUInfo,
    GPUInfo,
    HostInfo,
    Machine,
    PlatformInfo,
    Software,
    TorchDevices,
    TPUInfo,
)

FIXTURES = Path(__file__).parent / "fixtures" / "probe"


# --- platform -----------------------------------------------------------------------------------


def _detect(
    environ: dict[str, str] | None = None, paths: set[str] = frozenset(), modules: set[str] = frozenset()
) -> PlatformInfo:
    return detect_platform(environ or {}, paths.__contains__, modules.__contains__)


@pytest.mark.parametrize(
    ("environ", "paths", "modules", "name", "variant", "signal"),
    [
        (
            {"COLAB_RELEASE_TAG": "release-colab_20260401-060048"},
            set(),
            set(),
            "colab",
            None,
            "env COLAB_RELEASE_TAG=release-colab_20260401-060048",
        ),
        # On TPU runtimes COLAB_GPU is set but empty; being set is the signal.
        ({"COLAB_GPU": ""}, set(), set(), "colab", None, "env COLAB_GPU"),
        ({}, set(), {"google.colab"}, "colab", None, "module google.colab"),
        ({}, {"/content/sample_data"}, set(), "colab", None, "path /content/sample_data"),
        (
            {"VERTEX_PRODUCT": "COLAB_ENTERPRISE"},
            set(),
            set(),
            "colab",
            "enterprise",
            "env VERTEX_PRODUCT=COLAB_ENTERPRISE",
        ),
        (
            {"KAGGLE_KERNEL_RUN_TYPE": "Interactive"},
            set(),
            set(),
            "kaggle",
            "interactive",
            "env KAGGLE_KERNEL_RUN_TYPE=Interactive",
        ),
        ({"KAGGLE_KERNEL_RUN_TYPE": "Batch"}, set(), set(), "kaggle", "batch", "env KAGGLE_KERNEL_RUN_TYPE=Batch"),
        ({}, {"/kaggle/working"}, set(), "kaggle", None, "path /kaggle/working"),
        ({}, {"/home/aistudio"}, set(), "ai-studio", None, "path /home/aistudio"),
        ({}, {"/home/studio-lab-user"}, set(), "studio-lab", None, "path /home/studio-lab-user"),
        (
            {"LIGHTNING_CLOUD_SPACE_ID": "01hxyz"},
            set(),
            set(),
            "lightning",
            None,
            "env LIGHTNING_CLOUD_SPACE_ID=01hxyz",
        ),
        ({}, {"/teamspace/studios/this_studio"}, set(), "lightning", None, "path /teamspace/studios/this_studio"),
        # The variable's value is not recorded: PAPERSPACE_API_KEY would be a secret.
        ({"PAPERSPACE_NOTEBOOK_ID": "abc123"}, set(), set(), "paperspace", None, "env PAPERSPACE_NOTEBOOK_ID"),
        (
            {"SPACE_ID": "someone/demo", "ACCELERATOR": "t4-medium"},
            set(),
            set(),
            "hf-spaces",
            "t4-medium",
            "env SPACE_ID=someone/demo",
        ),
        ({"HOME": "/home/me", "PATH": "/usr/bin"}, {"/content"}, set(), "local", None, None),
    ],
)
def test_detect_platform(
    environ: dict[str, str], paths: set[str], modules: set[str], name: str, variant: str | None, signal: str | None
) -> None:
    found = _detect(environ, paths, modules)
    assert (found.name, found.variant, found.signal) == (name, variant, signal)


def test_kaggle_wins_over_colab_markers() -> None:
    # Kaggle's image is built on Colab's: Colab's variable, module and path can all be present.
    found = _detect(
        {"COLAB_RELEASE_TAG": "release-colab", "KAGGLE_KERNEL_RUN_TYPE": "Batch"},
        paths={"/content/sample_data", "/kaggle/input"},
        modules={"google.colab"},
    )
    assert (found.name, found.variant, found.signal) == ("kaggle", "batch", "env KAGGLE_KERNEL_RUN_TYPE=Batch")


def test_kaggle_path_wins_over_colab_module() -> None:
    found = _detect(paths={"/kaggle/input"}, modules={"google.colab"})
    assert (found.name, found.signal) == ("kaggle", "path /kaggle/input")


def test_laptop_with_lightning_login_is_local() -> None:
    # The Lightning CLI's login variables live on laptops too; only Studio variables count.
    assert _detect({"LIGHTNING_API_KEY": "x", "LIGHTNING_USER_ID": "y"}).name == "local"


def test_detect_platform_defaults_to_this_machine() -> None:
    found = detect_platform()
    assert found.name in PLATFORM_NAMES
    assert (found.name == "local") == (found.signal is None)


# --- host ---------------------------------------------------------------------------------------


def test_parse_cpuinfo_x86() -> None:
    model, flags = host.parse_cpuinfo((FIXTURES / "cpuinfo-xeon.txt").read_text())
    assert model == "Intel(R) Xeon(R) CPU @ 2.20GHz"
    assert flags == ["avx", "avx2", "fma", "f16c"]


def test_parse_cpuinfo_arm_reads_features_not_processor_index() -> None:
    model, flags = host.parse_cpuinfo((FIXTURES / "cpuinfo-arm.txt").read_text())
    assert model is None
    assert flags == ["asimd", "asimdhp", "sve", "sve2", "bf16", "i8mm"]


def test_host_without_proc_gives_none_not_a_crash(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    def unreadable(*_args: Any, **_kwargs: Any) -> Any:
        raise FileNotFoundError("/proc/meminfo")

    monkeypatch.setattr(host, "CPUINFO_PATH", tmp_path / "no-cpuinfo")
    monkeypatch.setattr(host, "CGROUP_PATH", tmp_path / "no-cgroup")
    monkeypatch.setattr(host, "CONTAINER_MARKERS", ())
    monkeypatch.setattr(host, "SHM_PATH", str(tmp_path / "no-shm"))
    monkeypatch.setattr(host.psutil, "virtual_memory", unreadable)
    monkeypatch.setattr(host.psutil, "disk_usage", unreadable)
    monkeypatch.setattr(host.psutil, "cpu_count", lambda logical=True: None)
    monkeypatch.setattr(host.platform, "processor", lambda: "")
    monkeypatch.setattr(host.platform, "system", lambda: "Linux")

    info = host.probe_host(str(tmp_path))
    assert info.cpu == CPUInfo(model=None, logical_cores=None, physical_cores=None, flags=[])
    assert info.memory_total_bytes is None and info.memory_available_bytes is None
    assert info.disk_path == str(tmp_path)
    assert info.disk_total_bytes is None and info.disk_free_bytes is None
    assert info.shm_total_bytes is None
    assert info.container is None


def test_container_from_cgroup(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    cgroup = tmp_path / "cgroup"
    monkeypatch.setattr(host, "CONTAINER_MARKERS", (tmp_path / ".dockerenv",))
    monkeypatch.setattr(host, "CGROUP_PATH", cgroup)
    cgroup.write_text("12:memory:/kubepods/burstable/pod1234/abcd\n")
    assert host.in_container() is True
    cgroup.write_text("0::/init.scope\n")
    assert host.in_container() is False
    (tmp_path / ".dockerenv").touch()
    assert host.in_container() is True


def test_disk_of_a_results_dir_not_yet_created(tmp_path: Path) -> None:
    info = host.probe_host(str(tmp_path / "results" / "new-machine"))
    assert info.disk_path == str(tmp_path / "results" / "new-machine")
    assert info.disk_total_bytes == psutil.disk_usage(str(tmp_path)).total


# --- NVIDIA -------------------------------------------------------------------------------------


class _NVMLError(Exception):
    pass


def _fake_pynvml(
    gpus: list[dict[str, Any]], init_fails: bool = False, unsupported: set[str] = frozenset()
) -> types.ModuleType:
    """A stand-in for nvidia-ml-py with the calls the probe makes; names in ``unsupported`` raise."""
    fake = types.ModuleType("pynvml")
    fake.NVMLError = _NVMLError
    fake.NVML_CLOCK_SM, fake.NVML_CLOCK_MEM = 1, 2
    calls: list[str] = []
    fake.calls = calls

    def api(name: str, result: Callable[..., Any]) -> None:
        def call(*args: Any) -> Any:
            calls.append(name)
            if name in unsupported:
                raise _NVMLError(f"{name}: Not Supported")
            return result(*args)

        setattr(fake, name, call)

    def init() -> None:
        if init_fails:
            raise _NVMLError("NVML Shared Library Not Found")

    api("nvmlInit", init)
    api("nvmlShutdown", lambda: None)
    api("nvmlDeviceGetCount", lambda: len(gpus))
    api("nvmlSystemGetDriverVersion", lambda: "550.54.15")
    api("nvmlSystemGetCudaDriverVersion", lambda: 12040)
    api("nvmlDeviceGetHandleByIndex", lambda i: gpus[i])
    api("nvmlDeviceGetName", lambda h: h["name"])
    api("nvmlDeviceGetUUID", lambda h: h["uuid"])
    api("nvmlDeviceGetMemoryInfo", lambda h: types.SimpleNamespace(total=h["total"], free=h["free"], used=0))
    api("nvmlDeviceGetCudaComputeCapability", lambda h: h["cc"])
    api("nvmlDeviceGetPowerManagementLimit", lambda h: h["power_mw"])
    api("nvmlDeviceGetMaxClockInfo", lambda h, kind: h["clocks"][kind])
    return fake


_A100 = {
    "name": b"NVIDIA A100-SXM4-40GB",  # old nvidia-ml-py versions returned bytes
    "uuid": "GPU-aaaa",
    "total": 40 * GIB,
    "free": 39 * GIB,
    "cc": (8, 0),
    "power_mw": 400_000,
    "clocks": {1: 1410, 2: 1215},
}


def _fake_nvidia_smi(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, stdout_file: Path | None, rc: int = 0) -> Path:
    """An executable named nvidia-smi that prints a fixture and records its arguments."""
    script = tmp_path / "nvidia-smi"
    body = f"cat '{stdout_file}'\n" if stdout_file else 'echo "NVIDIA-SMI has failed"\n'
    script.write_text(f"#!/bin/sh\necho \"$@\" > '{tmp_path / 'args'}'\n{body}exit {rc}\n")
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    monkeypatch.setattr(nvidia, "NVIDIA_SMI", str(script))
    return script


def test_nvml_reads_every_field(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setitem(sys.modules, "pynvml", _fake_pynvml([_A100]))
    monkeypatch.setattr(nvidia, "NVIDIA_SMI", str(tmp_path / "absent"))
    assert nvidia.probe_nvidia() == [
        GPUInfo(
            index=0,
            name="NVIDIA A100-SXM4-40GB",
            uuid="GPU-aaaa",
            memory_total_bytes=40 * GIB,
            memory_free_bytes=39 * GIB,
            driver="550.54.15",
            cuda_driver="12.4",
            compute_capability="8.0",
            power_limit_w=400.0,
            sm_clock_max_mhz=1410,
            mem_clock_max_mhz=1215,
            source="nvml",
        )
    ]
    assert sys.modules["pynvml"].calls[-1] == "nvmlShutdown"


def test_nvml_unsupported_field_is_none_and_keeps_the_rest(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "pynvml", _fake_pynvml([_A100], unsupported={"nvmlDeviceGetPowerManagementLimit"}))
    (gpu,) = nvidia.probe_nvidia()
    assert gpu.power_limit_w is None
    assert gpu.memory_total_bytes == 40 * GIB and gpu.compute_capability == "8.0"


def test_nvml_with_no_gpus_is_an_empty_answer(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setitem(sys.modules, "pynvml", _fake_pynvml([]))
    _fake_nvidia_smi(monkeypatch, tmp_path, FIXTURES / "nvidia-smi-kaggle-2xT4.csv")
    assert nvidia.probe_nvidia() == []
    assert not (tmp_path / "args").exists(), "NVML answered, so nvidia-smi must not run"


def test_nvml_failure_falls_back_to_nvidia_smi_2x_t4(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setitem(sys.modules, "pynvml", _fake_pynvml([_A100], init_fails=True))
    _fake_nvidia_smi(monkeypatch, tmp_path, FIXTURES / "nvidia-smi-kaggle-2xT4.csv")
    gpus = nvidia.probe_nvidia()
    assert (tmp_path / "args").read_text().split() == [
        "--query-gpu=index,name,uuid,memory.total,memory.free,driver_version,compute_cap,"
        "power.limit,clocks.max.sm,clocks.max.mem",
        "--format=csv,noheader,nounits",
    ]
    assert [g.index for g in gpus] == [0, 1]
    assert gpus[1] == GPUInfo(
        index=1,
        name="Tesla T4",
        uuid="GPU-1a2b3c4d-5e6f-7081-9293-a4b5c6d7e8f9",
        memory_total_bytes=15360 * MIB,
        memory_free_bytes=15095 * MIB,
        driver="560.35.03",
        cuda_driver=None,
        compute_capability="7.5",
        power_limit_w=70.0,
        sm_clock_max_mhz=1590,
        mem_clock_max_mhz=5001,
        source="nvidia-smi",
    )


def test_nvidia_smi_na_fields_become_none(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setitem(sys.modules, "pynvml", None)  # makes `import pynvml` raise ImportError
    _fake_nvidia_smi(monkeypatch, tmp_path, FIXTURES / "nvidia-smi-na-fields.csv")
    (gpu,) = nvidia.probe_nvidia()
    assert gpu.name == "NVIDIA GeForce GTX 1050"
    assert gpu.memory_total_bytes == 4096 * MIB
    assert (gpu.compute_capability, gpu.power_limit_w, gpu.sm_clock_max_mhz) == (None, None, None)
    assert gpu.mem_clock_max_mhz == 3504


def test_nvidia_smi_that_fails_gives_no_gpus(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setitem(sys.modules, "pynvml", None)
    _fake_nvidia_smi(monkeypatch, tmp_path, None, rc=9)
    assert nvidia.probe_nvidia() == []


def test_neither_nvml_nor_nvidia_smi(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setitem(sys.modules, "pynvml", None)
    monkeypatch.setattr(nvidia, "NVIDIA_SMI", str(tmp_path / "absent"))
    assert nvidia.probe_nvidia() == []


def test_bad_nvidia_smi_csv_names_the_line_and_field() -> None:
    line = "0, Tesla T4, GPU-x, lots, 15095, 560.35.03, 7.5, 70.00, 1590, 5001\n"
    with pytest.raises(nvidia.NvidiaSmiParseError, match=r"line 1: field 'memory.total' has 'lots'"):
        nvidia.parse_nvidia_smi_csv(line)
    with pytest.raises(nvidia.NvidiaSmiParseError, match=r"line 2: expected 10 fields"):
        nvidia.parse_nvidia_smi_csv(line.replace("lots", "15360") + "1, Tesla T4\n")


def test_unreadable_nvidia_smi_output_warns_and_gives_no_gpus(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    garbage = tmp_path / "garbage.csv"
    garbage.write_text('Field "compute_cap" is not a valid field to query.\n')
    monkeypatch.setitem(sys.modules, "pynvml", None)
    _fake_nvidia_smi(monkeypatch, tmp_path, garbage)
    with pytest.warns(RuntimeWarning, match="ignoring nvidia-smi output: nvidia-smi line 1"):
        assert nvidia.probe_nvidia() == []


# --- torch, TPU, software -----------------------------------------------------------------------


def test_torch_devices_only_when_torch_installed(monkeypatch: pytest.MonkeyPatch) -> None:
    devices = frameworks.probe_torch()
    assert devices is not None, "torch is installed in the project's environment"
    assert devices.cuda_device_count == len(devices.device_names)
    assert devices.cuda_available == (devices.cuda_device_count > 0)
    monkeypatch.setattr(frameworks, "installed", lambda module: False)
    assert frameworks.probe_torch() is None


def _never_asked(kind_hint: str | None) -> TPUInfo | None:
    raise AssertionError("frameworks must not be asked without a TPU signal")


def test_no_tpu_signal_asks_no_framework() -> None:
    assert frameworks.probe_tpu({"HOME": "/root"}, lambda pattern: [], _never_asked) is None


def test_kaggle_tpu_env_confirmed_by_a_framework() -> None:
    confirmed = TPUInfo(backend="jax", kind="TPU v5 lite", count=8)
    environ = {"ISTPUVM": "1", "TPU_PROCESS_ADDRESSES": "local"}
    assert frameworks.tpu_signal(environ, lambda pattern: []) == ("env", "ISTPUVM=1")
    assert frameworks.probe_tpu(environ, lambda pattern: [], lambda hint: confirmed) == confirmed


def test_tpu_env_without_a_framework_answers_from_env() -> None:
    tpu = frameworks.probe_tpu({"TPU_ACCELERATOR_TYPE": "v3-8"}, lambda pattern: [], lambda hint: None)
    assert tpu == TPUInfo(backend="env", kind="v3-8", count=None)


def test_device_file_alone_needs_a_framework_to_confirm() -> None:
    def accel_files(pattern: str) -> list[str]:
        return ["/dev/accel0"] if pattern == "/dev/accel*" else []

    assert frameworks.tpu_signal({}, accel_files) == ("device", "/dev/accel0")
    assert frameworks.probe_tpu({}, accel_files, lambda hint: None) is None


def test_tpu_from_a_fake_jax(monkeypatch: pytest.MonkeyPatch) -> None:
    fake_jax = types.ModuleType("jax")
    fake_jax.__spec__ = importlib.machinery.ModuleSpec("jax", None)
    chip = types.SimpleNamespace(platform="tpu", device_kind="TPU v5 lite")
    fake_jax.devices = lambda: [chip] * 8
    monkeypatch.setitem(sys.modules, "jax", fake_jax)
    assert frameworks.ask_frameworks_for_tpu(None) == TPUInfo(backend="jax", kind="TPU v5 lite", count=8)
    fake_jax.devices = lambda: [types.SimpleNamespace(platform="cpu", device_kind="cpu")]
    assert frameworks.ask_frameworks_for_tpu(None) is None


def test_format_cudnn_version() -> None:
    assert frameworks.format_cudnn_version(8902) == "8.9.2"
    assert frameworks.format_cudnn_version(90100) == "9.1.0"
    assert frameworks.format_cudnn_version(92600) == "9.26.0"


def test_software_versions() -> None:
    import numpy

    software = frameworks.probe_software()
    assert software.python == stdlib_platform.python_version()
    assert software.benchlib == benchlib.__version__
    assert software.numpy == numpy.__version__
    import torch

    assert software.torch == torch.__version__


# --- id, label, report, the real probe ----------------------------------------------------------


def _kaggle_2x_t4(free_gib: int = 14, uuids: tuple[str, str] = ("GPU-a", "GPU-b")) -> tuple[Any, ...]:
    platform = PlatformInfo(name="kaggle", variant="interactive", signal="env KAGGLE_KERNEL_RUN_TYPE=Interactive")
    host_info = HostInfo(
        cpu=CPUInfo(model="Intel(R) Xeon(R) CPU @ 2.00GHz", logical_cores=4, physical_cores=2),
        memory_total_bytes=31 * GIB + 123_456,
    )
    gpus = [
        GPUInfo(index=i, name="Tesla T4", uuid=uuid, memory_total_bytes=15360 * MIB, memory_free_bytes=free_gib * GIB)
        for i, uuid in enumerate(uuids)
    ]
    return platform, host_info, Accelerators(nvidia=gpus)


def test_id_and_label_for_kaggle_2x_t4() -> None:
    platform, host_info, accelerators = _kaggle_2x_t4()
    assert machine_label(platform, host_info, accelerators) == "Kaggle · 2× Tesla T4"
    ident = machine_id(platform, host_info, accelerators)
    assert re.fullmatch(r"kaggle-2x-tesla-t4-[0-9a-f]{8}", ident)
    # Another session on the same kind of machine: other UUIDs, other free memory, same id.
    assert machine_id(*_kaggle_2x_t4(free_gib=3, uuids=("GPU-c", "GPU-d"))) == ident
    one_gpu = Accelerators(nvidia=accelerators.nvidia[:1])
    assert machine_id(platform, host_info, one_gpu) != ident
    l4s = Accelerators(nvidia=[gpu.model_copy(update={"name": "NVIDIA L4"}) for gpu in accelerators.nvidia])
    assert machine_id(platform, host_info, l4s) != ident


def test_two_cpus_of_one_name_with_different_flags_get_different_ids() -> None:
    # Cloud hosts name both "AMD EPYC"; only one has avx512_bf16, and its bf16 matmul is 300x faster.
    platform = PlatformInfo(name="local")
    flags = ["avx", "avx2", "fma", "avx512f"]
    without = HostInfo(cpu=CPUInfo(model="AMD EPYC", logical_cores=2, flags=flags))
    with_bf16 = HostInfo(cpu=CPUInfo(model="AMD EPYC", logical_cores=2, flags=[*flags, "avx512_bf16"]))
    assert machine_id(platform, without, Accelerators()) != machine_id(platform, with_bf16, Accelerators())
    assert machine_id(platform, without, Accelerators()) == machine_id(platform, without, Accelerators())


def test_label_for_cpu_only_and_tpu() -> None:
    platform = PlatformInfo(name="local")
    host_info = HostInfo(cpu=CPUInfo(model="AMD EPYC 7B13 64-Core Processor", logical_cores=8))
    assert machine_label(platform, host_info, Accelerators()) == "local · AMD EPYC 7B13 64-Core Processor (CPU only)"
    assert re.fullmatch(
        r"local-amd-epyc-7b13-64-core-processor-[0-9a-f]{8}", machine_id(platform, host_info, Accelerators())
    )
    tpu = Accelerators(tpu=TPUInfo(backend="jax", kind="TPU v5 lite", count=8))
    assert machine_label(PlatformInfo(name="kaggle"), host_info, tpu) == "Kaggle · 8× TPU v5 lite"
    env_tpu = Accelerators(tpu=TPUInfo(backend="env", kind="v3-8"))
    assert machine_label(PlatformInfo(name="colab"), host_info, env_tpu) == "Colab · TPU v3-8"
    assert short_cpu_name("Intel(R) Xeon(R) CPU @ 2.20GHz") == "Intel Xeon @ 2.20GHz"


def test_machine_table_shows_platform_gpus_and_both_units() -> None:
    platform, host_info, accelerators = _kaggle_2x_t4()
    accelerators.torch = TorchDevices(cuda_available=True, cuda_device_count=2, device_names=["Tesla T4"] * 2)
    machine = Machine(
        id="kaggle-2x-tesla-t4-00000000",
        label="Kaggle · 2× Tesla T4",
        platform=platform,
        host=host_info,
        accelerators=accelerators,
        software=Software(python="3.11.7", torch="2.8.0+cu126"),
    )
    out = io.StringIO()
    Console(file=out, width=250, color_system=None).print(machine_table(machine))
    text = out.getvalue()
    assert "Kaggle (interactive) — env KAGGLE_KERNEL_RUN_TYPE=Interactive" in text
    assert text.count("15.0 GiB (16.1 GB) total") == 2
    assert "CUDA: 2 device(s) — Tesla T4, Tesla T4" in text
    assert "python 3.11.7, torch 2.8.0+cu126" in text
    assert "/dev/shm" in text and "unknown" in text


def test_probe_machine_on_this_machine(tmp_path: Path) -> None:
    first = probe_machine(str(tmp_path))
    assert first.host is not None and first.host.disk_path == str(tmp_path)
    # Saved and read back, it is the same machine, less the folder (never saved).
    unsaved = first.model_copy(update={"host": first.host.model_copy(update={"disk_path": None})})
    assert Machine.model_validate_json(first.model_dump_json()) == unsaved
    assert first.host.memory_total_bytes == psutil.virtual_memory().total
    assert first.software is not None and first.software.python == stdlib_platform.python_version()
    assert re.fullmatch(rf"{first.platform.name}-[a-z0-9-]+-[0-9a-f]{{8}}", first.id)
    assert first.label.startswith(PLATFORM_NAMES[first.platform.name] + " · ")
    assert probe_machine(str(tmp_path)).id == first.id


# --- units --------------------------------------------------------------------------------------


def test_format_bytes() -> None:
    assert format_bytes(None) == "unknown"
    assert format_bytes(0) == "0 B"
    assert format_bytes(1023) == "1023 B"
    assert format_bytes(1024) == "1.0 KiB"
    assert format_bytes(1000, binary=False) == "1.0 kB"
    # A T4 as nvidia-smi reports it: 15360 MiB is 15.0 GiB but 16.1 GB.
    assert format_bytes(15360 * MIB) == "15.0 GiB"
    assert format_bytes(15360 * MIB, binary=False) == "16.1 GB"
    assert format_bytes(3 * 1024**6) == "3072.0 PiB"
    with pytest.raises(ValueError, match="negative"):
        format_bytes(-1)


def test_importing_the_probe_imports_no_framework() -> None:
    code = "import sys, benchlib.probe; print(sorted(m for m in ('torch', 'tensorflow', 'jax') if m in sys.modules))"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"


def test_machine_table_prints_brackets_literally() -> None:
    machine = Machine(
        id="local-cpu-00000000",
        label="local · [b]odd[/b] (CPU only)",
        host=HostInfo(cpu=CPUInfo(model="Vendor [bold]Chip[/bold]")),
    )
    out = io.StringIO()
    Console(file=out, width=200, color_system=None).print(machine_table(machine))
    assert "Vendor [bold]Chip[/bold]" in out.getvalue()
    assert "[b]odd[/b]" in out.getvalue()


def test_package_level_probe_is_callable_after_importing_the_subpackage():
    import benchlib
    from benchlib.probe import probe_machine  # noqa: F401  (this import used to shadow benchlib.probe)

    machine = benchlib.probe()
    assert machine.id == probe_machine().id


def test_a_results_file_does_not_keep_the_folder_it_was_written_to(tmp_path) -> None:
    # The folder can hold the user's name; `benchlib probe` prints it, the saved file leaves it out.
    from benchlib.results.schema import HostInfo

    private = tmp_path / "home" / "alice" / "runs"
    host = HostInfo(disk_path=str(private), disk_total_bytes=1)
    assert host.disk_path == str(private)
    assert "alice" not in host.model_dump_json() and "disk_path" not in host.model_dump()
    assert HostInfo.model_validate({"disk_path": str(private)}).disk_path == str(private)  # old files still load
