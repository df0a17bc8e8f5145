"""check_gpu.py, profile_hardware.py and hardware.sh, with and without a (stand-in) T4."""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

import pytest
from snippet_runner import SNIPPETS, RunSnippet


@pytest.mark.slow
def test_check_gpu_says_how_to_get_one_when_there_is_none(run_snippet: RunSnippet, no_gpu_path: str) -> None:
    out = run_snippet("check_gpu.py", env={"PATH": no_gpu_path}).stdout
    assert "No NVIDIA GPU visible" in out
    assert "Runtime > Change runtime type" in out and "GPU T4 x2" in out
    assert re.search(r"^PyTorch \S+: CUDA available = (True|False)$", out, re.M)


@pytest.mark.slow
def test_check_gpu_reports_a_t4_in_mib_and_gb_and_no_bfloat16(run_snippet: RunSnippet, fake_gpu_bin: Path) -> None:
    out = run_snippet("check_gpu.py", env={"PATH": f"{fake_gpu_bin}{os.pathsep}{os.environ['PATH']}"}).stdout
    # 15360 MiB is 15360 * 2**20 bytes = 16.1 GB: the "16 GB" card in nvidia-smi's MiB.
    assert "GPU 0: Tesla T4, 15360 MiB = 16.1 GB, driver 550.54.15, compute capability 7.5" in out
    assert "bfloat16 in hardware: no, use float16" in out


@pytest.mark.slow
def test_check_gpu_lists_both_kaggle_t4s(run_snippet: RunSnippet, fake_gpu_bin: Path) -> None:
    env = {"PATH": f"{fake_gpu_bin}{os.pathsep}{os.environ['PATH']}", "FAKE_GPU_COUNT": "2"}
    out = run_snippet("check_gpu.py", env=env).stdout
    assert "GPU 0: Tesla T4" in out and "GPU 1: Tesla T4" in out


@pytest.mark.slow
def test_check_gpu_copes_with_a_driver_without_compute_cap(run_snippet: RunSnippet, fake_gpu_bin: Path) -> None:
    env = {"PATH": f"{fake_gpu_bin}{os.pathsep}{os.environ['PATH']}", "FAKE_NVSMI_OLD": "1"}
    out = run_snippet("check_gpu.py", env=env).stdout
    assert "GPU 0: Tesla T4, 15360 MiB = 16.1 GB, driver 550.54.15\n" in out
    assert "compute capability" not in out


def _meminfo_kib(key: str) -> int:
    for line in Path("/proc/meminfo").read_text().splitlines():
        if line.startswith(key + ":"):
            return int(line.split()[1])
    raise KeyError(key)


def test_profile_hardware_matches_proc_meminfo_in_both_units(run_snippet: RunSnippet, fake_gpu_bin: Path) -> None:
    out = run_snippet("profile_hardware.py", env={"PATH": f"{fake_gpu_bin}{os.pathsep}{os.environ['PATH']}"}).stdout
    total = _meminfo_kib("MemTotal") * 1024
    assert f"RAM:  total {total / 2**30:.1f} GiB = {total / 1e9:.1f} GB" in out
    assert re.search(r"^Disk /dev/shm: total [\d.]+ GiB = [\d.]+ GB", out, re.M)
    assert f"{os.cpu_count()} logical cores" in out
    assert "GPU:  Tesla T4, 15.0 GiB = 16.1 GB" in out


def test_hardware_sh_runs_the_seed_commands(fake_gpu_bin: Path, tmp_path: Path) -> None:
    env = {**os.environ, "PATH": f"{fake_gpu_bin}{os.pathsep}{os.environ['PATH']}"}
    result = subprocess.run(
        ["bash", str(SNIPPETS / "hardware.sh")], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 0, result.stderr
    assert "Tesla T4" in result.stdout
    assert re.search(r"^MemTotal:\s+\d+ kB$", result.stdout, re.M)
    assert "/dev/shm" in result.stdout
    lines = result.stdout.splitlines()
    model = next(i for i, line in enumerate(lines) if line.startswith("model name"))
    assert lines[model + 1].strip() == str(os.cpu_count())  # the core count follows the CPU model
