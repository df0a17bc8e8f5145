"""trainer_resume.py: a Hugging Face Trainer run killed with SIGKILL, then resumed, on Colab and Kaggle.

The Trainer, the model class, the tokenizer and the checkpoint files are the real libraries. The
stand-ins are only what would need the network or a notebook platform: the Hugging Face cache
holds, under the snippet's ``MODEL_ID``, a tiny random Llama (the architecture of SmolLM2) with a
byte-level tokenizer, the hub is offline, ``google.colab`` is the fake in ``fakes/colab``, and
Kaggle's folders are temporary ones. CUDA is hidden so every run takes the same CPU path.

The runs share one warm interpreter that imported the Trainer once (tests/snippets/warm_python.py):
its import takes 20 to 30 s on a 2-core machine, a run of the snippet a few seconds. A kill
is a thread started before the snippet's text that sends SIGKILL to its own process once a given
checkpoint is complete and a chosen delay has passed, as a runtime that goes away would.
"""

from __future__ import annotations

import json
import random
import re
import shutil
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
from safetensors.numpy import load_file
from snippet_runner import SNIPPETS, snippet_env
from warm_python import WarmPython

pytestmark = pytest.mark.slow  # the warm interpreter's import alone takes 20 to 30 s

SNIPPET = SNIPPETS / "trainer_resume.py"
RUN = "my-trainer-run"  # the snippet's default RUN_NAME
TOTAL, EVERY = 80, 10
LOG_EVERY = 5
SMALL_RUN = {"TOTAL_STEPS": str(TOTAL), "SAVE_EVERY_STEPS": str(EVERY), "LOG_EVERY_STEPS": str(LOG_EVERY)}
SIGKILL_EXIT = -9

# Makes the stand-in model: a tiny random Llama and a byte-level BPE tokenizer with no merges, in
# the HF cache layout under MODEL_ID. Run in the warm interpreter, which has transformers imported.
STAND_IN = """
import os, torch
from pathlib import Path
from tokenizers import pre_tokenizers
from transformers import AutoModelForCausalLM, GPT2Tokenizer, LlamaConfig
repo = Path(os.environ["HF_HOME"], "hub", "models--" + os.environ["MODEL_ID"].replace("/", "--"))
revision = "0" * 40
(repo / "refs").mkdir(parents=True)
(repo / "refs" / "main").write_text(revision)
vocab = {s: i for i, s in enumerate(sorted(pre_tokenizers.ByteLevel.alphabet()))}
vocab["<|endoftext|>"] = len(vocab)
eos = "<|endoftext|>"
GPT2Tokenizer(vocab=vocab, merges=[], bos_token=eos, eos_token=eos, unk_token=eos).save_pretrained(repo / "snapshots" / revision)
config = LlamaConfig(vocab_size=len(vocab), hidden_size=64, intermediate_size=128, num_hidden_layers=2,
                     num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=256, tie_word_embeddings=True)
torch.manual_seed(0)
AutoModelForCausalLM.from_config(config).save_pretrained(repo / "snapshots" / revision)
"""

# Run before the snippet's text: SIGKILL once KILL_AFTER names a file that exists, KILL_DELAY s later.
KILLER = """
import glob as _glob, os as _os, signal as _signal, threading as _threading, time as _time
def _kill_when_saved():
    while not _glob.glob(_os.environ["KILL_AFTER"]):
        _time.sleep(0.002)
    _time.sleep(float(_os.environ["KILL_DELAY"]))
    _os.kill(_os.getpid(), _signal.SIGKILL)
_threading.Thread(target=_kill_when_saved, daemon=True).start()
"""


def _model_id() -> str:
    match = re.search(r'^MODEL_ID = "([^"]+)"', SNIPPET.read_text(encoding="utf-8"), re.M)
    assert match, f"{SNIPPET.name} has no MODEL_ID line"
    return match.group(1)


class TrainerRuns:
    """Runs the snippet in the module's warm interpreter, in the given folder and with the given settings."""

    def __init__(self, python: WarmPython, env: dict[str, str]) -> None:
        self.python, self.env = python, env

    def run(self, cwd: Path, env: dict[str, str], *, fakes: tuple[str, ...] = (), kill: bool = False) -> str:
        code = (KILLER if kill else "") + SNIPPET.read_text(encoding="utf-8")
        result = self.python.run(code, cwd, snippet_env(fakes, {**self.env, **env}), timeout=300)
        expected = SIGKILL_EXIT if kill else 0
        assert result.returncode == expected, (
            f"{SNIPPET.name} exited {result.returncode}, not {expected}:\n{result.stdout}\n{result.stderr[-4000:]}"
        )
        return result.stdout


@pytest.fixture(scope="module")
def trainer_runs(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TrainerRuns]:
    model_id = _model_id()
    assert model_id.startswith("HuggingFaceTB/SmolLM2-"), f"the stand-in is a tiny Llama; make one like {model_id}"
    hf_home = tmp_path_factory.mktemp("hf")
    # Read while torch and huggingface_hub are imported, so the warm interpreter starts with them.
    env = {"HF_HOME": str(hf_home), "HF_HUB_OFFLINE": "1", "CUDA_VISIBLE_DEVICES": "", "OMP_NUM_THREADS": "1"}
    # A cell's output shows as it is printed; unbuffered, a killed run's output is all there too.
    env["PYTHONUNBUFFERED"] = "1"
    python = WarmPython(
        ("torch", "transformers.trainer", "transformers.models.llama.modeling_llama"), snippet_env(env=env)
    )
    try:
        made = python.run(STAND_IN, hf_home, snippet_env(env={**env, "MODEL_ID": model_id}), timeout=600)
        assert made.returncode == 0, made.stderr[-4000:]
        yield TrainerRuns(python, {**env, **SMALL_RUN})
    finally:
        python.close()


@pytest.fixture(scope="module")
def reference(trainer_runs: TrainerRuns, tmp_path_factory: pytest.TempPathFactory) -> tuple[str, Path]:
    """An uninterrupted run on Colab: its output and its run folder on the stand-in Drive."""
    folder = tmp_path_factory.mktemp("reference")
    out = trainer_runs.run(folder, {"DRIVE_MOUNTPOINT": str(folder / "drive")}, fakes=("colab",))
    # A first run starts from the model, without asking the Trainer to resume (that would raise).
    assert "resuming" not in out and _steps_trained(out) == TOTAL, out
    return out, folder / "drive" / "MyDrive" / "checkpoints" / RUN


def _finished(out: str) -> str:
    match = re.search(rf"^finished at step {TOTAL}, last logged loss ([\d.]+)$", out, re.M)
    assert match, out
    return match.group(1)


def _steps_trained(out: str) -> int:
    """The steps this run trained, from the Trainer's loss lines (one every LOG_EVERY steps)."""
    return LOG_EVERY * len(re.findall(r"^\{'loss': ", out, re.M))


def _newest_complete(run_dir: Path) -> int:
    """The step of the newest checkpoint whose trainer_state.json (the Trainer writes it last) reads
    whole and names that step: what a rerun resumes from."""
    complete = []
    for state_file in run_dir.glob("checkpoint-*/trainer_state.json"):
        step = int(state_file.parent.name.removeprefix("checkpoint-"))
        try:
            if json.loads(state_file.read_text(encoding="utf-8"))["global_step"] == step:
                complete.append(step)
        except ValueError:
            pass  # cut short by the kill, as the snippet's check allows for
    assert complete, f"no complete checkpoint in {run_dir}"
    return max(complete)


def _assert_same_model(run_dir: Path, reference_dir: Path) -> None:
    final = load_file(run_dir / "final" / "model.safetensors")
    expected = load_file(reference_dir / "final" / "model.safetensors")
    assert final.keys() == expected.keys()
    for name, weights in expected.items():
        np.testing.assert_allclose(final[name], weights, atol=1e-6, err_msg=name)


def test_killed_on_colab_resumes_from_drive_and_ends_like_an_uninterrupted_run(
    trainer_runs: TrainerRuns, reference: tuple[str, Path], tmp_path: Path
) -> None:
    reference_out, reference_dir = reference
    env = {"DRIVE_MOUNTPOINT": str(tmp_path / "drive"), "FAKE_COLAB_LOG": str(tmp_path / "drive.log")}
    run_dir = tmp_path / "drive" / "MyDrive" / "checkpoints" / RUN
    rng = random.Random(20261121)

    saved = 0
    for kill_after in (2 * EVERY, 5 * EVERY):
        # Killed once checkpoint kill_after is complete, within 0.1 s: mid-step or in the next save.
        kill = {"KILL_AFTER": str(run_dir / f"checkpoint-{kill_after}" / "trainer_state.json")}
        out = trainer_runs.run(
            tmp_path, {**env, **kill, "KILL_DELAY": f"{rng.uniform(0, 0.1):.3f}"}, fakes=("colab",), kill=True
        )
        if saved:
            assert f"resuming from {run_dir / f'checkpoint-{saved}'}" in out
        logged = saved + _steps_trained(out)  # the last step whose loss the reader saw
        saved = _newest_complete(run_dir)
        assert kill_after <= saved <= logged < TOTAL
        assert logged - saved <= EVERY, f"lost {logged - saved} steps, more than one save interval"

    # A save the runtime cut short: the folder is there, trainer_state.json (written last) is not.
    cut = run_dir / f"checkpoint-{saved + EVERY}"
    if not cut.exists():
        shutil.copytree(run_dir / f"checkpoint-{saved}", cut)
    (cut / "trainer_state.json").unlink(missing_ok=True)

    out = trainer_runs.run(tmp_path, env, fakes=("colab",))
    assert f"removed {cut}: the runtime stopped while saving it" in out
    assert f"resuming from {run_dir / f'checkpoint-{saved}'}" in out
    assert _steps_trained(out) == TOTAL - saved  # only the steps after the checkpoint
    # Same batches, same weights, optimizer and random state: it ends where the uninterrupted run did.
    assert _finished(out) == _finished(reference_out)
    _assert_same_model(run_dir, reference_dir)
    assert sorted(p.name for p in run_dir.iterdir()) == [f"checkpoint-{TOTAL - EVERY}", f"checkpoint-{TOTAL}", "final"]

    # Run again after the end: nothing left to train, the same final line.
    again = trainer_runs.run(tmp_path, env, fakes=("colab",))
    assert f"resuming from {run_dir / f'checkpoint-{TOTAL}'}" in again
    assert _steps_trained(again) == 0
    assert _finished(again) == _finished(reference_out)
    events = [json.loads(line)["event"] for line in (tmp_path / "drive.log").read_text().splitlines()]
    assert events.count("mount") == 4 and events[-1] == "flush_and_unmount"


def test_kaggle_session_continues_from_the_previous_versions_output(
    trainer_runs: TrainerRuns, reference: tuple[str, Path], tmp_path: Path
) -> None:
    reference_out, reference_dir = reference
    first, second = tmp_path / "session1" / "working", tmp_path / "session2" / "working"
    first.mkdir(parents=True)
    second.mkdir(parents=True)
    absent = str(tmp_path / "no-input")
    kill = {"KILL_AFTER": str(first / RUN / "checkpoint-30" / "trainer_state.json"), "KILL_DELAY": "0"}
    trainer_runs.run(tmp_path, {"KAGGLE_WORKING_DIR": str(first), "PREVIOUS_OUTPUT": absent, **kill}, kill=True)
    saved = _newest_complete(first / RUN)

    # A new session starts with an empty /kaggle/working; the last version's output is an input.
    out = trainer_runs.run(tmp_path, {"KAGGLE_WORKING_DIR": str(second), "PREVIOUS_OUTPUT": str(first)})
    assert f"copied the previous version's checkpoints from {first / RUN}" in out
    assert f"resuming from {second / RUN / f'checkpoint-{saved}'}" in out
    assert _steps_trained(out) == TOTAL - saved
    assert _finished(out) == _finished(reference_out)
    _assert_same_model(second / RUN, reference_dir)
    assert _newest_complete(first / RUN) == saved and not (first / RUN / "final").exists()  # the input is left alone
