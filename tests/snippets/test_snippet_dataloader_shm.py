"""dataloader_shm.py inside a 64 MiB /dev/shm, Docker's default and Kaggle's old size.

A private mount namespace (``unshare``) gives the snippet a real small tmpfs at /dev/shm, so
the failure it guards against is the real one, not a simulation.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from snippet_runner import python_command, snippet_env

SMALL_SHM = 'mount -t tmpfs -o size=64m tmpfs /dev/shm && exec "$@"'
NAIVE = """
import torch
from torch.utils.data import DataLoader, Dataset
class Images(Dataset):
    def __len__(self): return 512
    def __getitem__(self, i): return torch.rand(3, 224, 224), 0
for batch in DataLoader(Images(), batch_size=64, num_workers=2, timeout=120): pass
"""
# The timeout: where a worker's queue thread, not the worker, fails to allocate shared memory, the
# error is only printed and the main process waits for that batch forever; it then fails instead.


def _small_shm(command: list[str], tmp_path: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["unshare", "-rm", "sh", "-c", SMALL_SHM, "sh", *command],
        cwd=tmp_path,
        env=snippet_env((), env),
        capture_output=True,
        text=True,
        timeout=300,
    )


@pytest.fixture
def small_shm_available(tmp_path: Path) -> None:
    if shutil.which("unshare") is None:
        pytest.skip("needs util-linux unshare")
    probe = subprocess.run(["unshare", "-rm", "sh", "-c", SMALL_SHM, "sh", "true"], capture_output=True, text=True)
    if probe.returncode != 0:
        pytest.skip(f"cannot mount a private /dev/shm here: {probe.stderr.strip()}")


@pytest.mark.slow
def test_the_stand_in_reproduces_the_kaggle_failure(small_shm_available: None, tmp_path: Path) -> None:
    result = _small_shm([sys.executable, "-c", NAIVE], tmp_path, {})
    assert result.returncode != 0
    assert re.search(r"Bus error|No space left on device|shared memory", result.stderr), result.stderr[-2000:]


@pytest.mark.slow
def test_big_batches_load_in_the_main_process(small_shm_available: None, tmp_path: Path) -> None:
    result = _small_shm(python_command("dataloader_shm.py"), tmp_path, {"NUM_IMAGES": "256"})
    assert result.returncode == 0, result.stderr[-2000:]
    assert re.search(r"/dev/shm free: 6\d MiB, one batch: 37 MiB -> num_workers=0", result.stdout)
    assert "loaded 256 images" in result.stdout


@pytest.mark.slow
def test_small_batches_get_workers_back(small_shm_available: None, tmp_path: Path) -> None:
    result = _small_shm(python_command("dataloader_shm.py"), tmp_path, {"NUM_IMAGES": "256", "BATCH_SIZE": "8"})
    assert result.returncode == 0, result.stderr[-2000:]
    workers = int(re.search(r"num_workers=(\d+)", result.stdout).group(1))  # type: ignore[union-attr]
    assert workers >= 1
    assert "loaded 256 images" in result.stdout
