"""drive_checkpoint.py, drive_copy_data.py and kaggle_persist.py: killed, restarted, moved."""

from __future__ import annotations

import json
import random
import re
import signal
import subprocess
import zipfile
from pathlib import Path

import pytest
import torch
from snippet_runner import RunSnippet, python_command, snippet_env

TOTAL, EVERY = 300, 10
SMALL_RUN = {
    "TOTAL_STEPS": str(TOTAL),
    "SAVE_EVERY_STEPS": str(EVERY),
    "SAVE_EVERY_SECONDS": "3600",
    "LOG_EVERY_STEPS": "1",
    "OMP_NUM_THREADS": "1",
}


def _drive_env(tmp_path: Path, mount: str) -> dict[str, str]:
    return {**SMALL_RUN, "DRIVE_MOUNTPOINT": str(tmp_path / mount), "FAKE_COLAB_LOG": str(tmp_path / f"{mount}.log")}


def _checkpoint(tmp_path: Path, mount: str) -> Path:
    return tmp_path / mount / "MyDrive" / "checkpoints" / "my-run" / "checkpoint.pt"


def _final_loss(out: str) -> float:
    match = re.search(rf"finished {TOTAL} steps, final loss ([\d.]+)", out)
    assert match, out
    return float(match.group(1))


def _run_until_killed(tmp_path: Path, env: dict[str, str], rng: random.Random) -> tuple[list[str], int]:
    """Start the snippet, SIGKILL it at a random moment after its first save; return its output."""
    proc = subprocess.Popen(
        python_command("drive_checkpoint.py"),
        cwd=tmp_path,
        env=snippet_env(["colab"], env),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None
    lines: list[str] = []
    saves_to_see = rng.randint(1, 4)
    for line in proc.stdout:
        lines.append(line.rstrip("\n"))
        if line.startswith("saved step"):
            saves_to_see -= 1
            if saves_to_see == 0:
                break
    try:
        proc.wait(timeout=rng.uniform(0.0, 0.1))  # lands mid-step or mid-save
    except subprocess.TimeoutExpired:
        pass
    proc.send_signal(signal.SIGKILL)
    rest, err = proc.communicate(timeout=30)
    lines += rest.splitlines()
    assert proc.returncode == -signal.SIGKILL, f"finished before the kill:\n{err}"
    return lines, proc.returncode


@pytest.mark.slow
def test_drive_checkpoint_survives_sigkill_and_resumes(run_snippet: RunSnippet, tmp_path: Path) -> None:
    reference = _final_loss(run_snippet("drive_checkpoint.py", fakes=["colab"], env=_drive_env(tmp_path, "ref")).stdout)

    env = _drive_env(tmp_path, "drive")
    checkpoint = _checkpoint(tmp_path, "drive")
    rng = random.Random(20261121)
    saved_before = 0
    for _ in range(4):
        lines, _ = _run_until_killed(tmp_path, env, rng)
        if saved_before:
            assert lines[1] == f"resumed from step {saved_before}"  # after "Mounted at ..."
        # The checkpoint must load after every kill: the rename is atomic, a torn file never appears.
        state = torch.load(checkpoint, map_location="cpu")
        saved = state["step"]
        done = max(int(m.group(1)) for line in lines if (m := re.match(r"step (\d+) loss", line)))
        assert saved_before <= saved <= done < TOTAL
        assert done - saved <= EVERY, f"lost {done - saved} steps, more than one save interval"
        saved_before = saved

    out = run_snippet("drive_checkpoint.py", fakes=["colab"], env=env).stdout
    assert f"resumed from step {saved_before}" in out
    # Same batches, same model and optimizer state: the interrupted run ends where the clean one did.
    assert _final_loss(out) == pytest.approx(reference, abs=1e-5)
    events = [json.loads(line)["event"] for line in (tmp_path / "drive.log").read_text().splitlines()]
    assert events.count("mount") == 5 and events[-1] == "flush_and_unmount"


@pytest.mark.slow
def test_drive_checkpoint_also_saves_by_time(run_snippet: RunSnippet, tmp_path: Path) -> None:
    env = {
        **_drive_env(tmp_path, "drive"),
        "TOTAL_STEPS": "60",
        "SAVE_EVERY_STEPS": "100000",
        "SAVE_EVERY_SECONDS": "0.05",
    }
    out = run_snippet("drive_checkpoint.py", fakes=["colab"], env=env).stdout
    saved = [int(n) for n in re.findall(r"^saved step (\d+)$", out, re.M)]
    assert saved[-1] == 60 and len(saved) > 1, out  # timed saves before the final one


@pytest.mark.slow
def test_drive_checkpoint_rerun_after_the_end_only_reports(run_snippet: RunSnippet, tmp_path: Path) -> None:
    env = {**_drive_env(tmp_path, "drive"), "TOTAL_STEPS": "20"}
    run_snippet("drive_checkpoint.py", fakes=["colab"], env=env)
    out = run_snippet("drive_checkpoint.py", fakes=["colab"], env=env).stdout
    assert "resumed from step 20" in out and "already finished" in out and "saved step" not in out
    assert "should now be visible in Drive" in out


def test_drive_copy_data_unpacks_on_local_disk(run_snippet: RunSnippet, tmp_path: Path) -> None:
    datasets = tmp_path / "drive" / "MyDrive" / "datasets"
    datasets.mkdir(parents=True)
    with zipfile.ZipFile(datasets / "my-dataset.zip", "w") as archive:
        for i in range(300):
            archive.writestr(f"images/{i:04d}.txt", f"sample {i}")
    local = tmp_path / "local-data"
    env = {"DRIVE_MOUNTPOINT": str(tmp_path / "drive"), "LOCAL_DATA_DIR": str(local)}
    out = run_snippet("drive_copy_data.py", fakes=["colab"], env=env).stdout
    assert f"300 files unpacked into {local}" in out
    assert (local / "images" / "0299.txt").read_text() == "sample 299"
    assert not (local / "my-dataset.zip").exists()  # the copied archive is removed after unpacking


@pytest.mark.slow
def test_kaggle_persist_continues_from_the_previous_version(run_snippet: RunSnippet, tmp_path: Path) -> None:
    first, second = tmp_path / "session1" / "working", tmp_path / "session2" / "working"
    first.mkdir(parents=True)
    second.mkdir(parents=True)
    base = {"SAVE_EVERY_STEPS": "20", "OMP_NUM_THREADS": "1", "PREVIOUS_OUTPUT": str(tmp_path / "absent")}
    out1 = run_snippet("kaggle_persist.py", env={**base, "KAGGLE_WORKING_DIR": str(first), "TOTAL_STEPS": "40"}).stdout
    assert "resumed" not in out1 and "saved step 40" in out1

    # A new session starts with an empty /kaggle/working; the last version's output is an input.
    env = {**base, "KAGGLE_WORKING_DIR": str(second), "PREVIOUS_OUTPUT": str(first), "TOTAL_STEPS": "80"}
    out2 = run_snippet("kaggle_persist.py", env=env).stdout
    assert f"copied the previous version's checkpoint from {first / 'checkpoint.pt'}" in out2
    assert "resumed from step 40" in out2 and "saved step 60" in out2
    assert torch.load(second / "checkpoint.pt")["step"] == 80
    assert torch.load(first / "checkpoint.pt")["step"] == 40  # the input copy is left alone
