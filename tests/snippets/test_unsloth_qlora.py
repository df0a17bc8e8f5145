"""unsloth_qlora.py, run unchanged on this CPU machine: twice, the second time after a save cut short.

Unsloth imports only where there is an NVIDIA (or AMD, Intel) GPU, so ``unsloth`` is the stand-in
in ``fakes/unsloth``: Unsloth's parameters, the choices of Unsloth's that change what the snippet
gets back, and the model built by transformers, bitsandbytes and peft. Everything after loading is
the real libraries: the Trainer, the collator, fp16 with its loss scaler (the snippet takes a
T4's branch, since there is no bfloat16 here), checkpoints, resuming and the saved adapter.
``google.colab`` is the fake in ``fakes/colab``. The Hugging Face cache holds, under the snippet's
``MODEL_ID``, a tiny random Qwen2 stored in NF4 as Unsloth's ``-bnb-4bit`` copies are, with a
byte-level tokenizer, and the hub is offline. CUDA is hidden so the run is the CPU path anywhere.
"""

from __future__ import annotations

import json
import math
import re
import subprocess
import sys
from pathlib import Path

import pytest
from artefacts import keep_run, kept_run, made
from safetensors import safe_open
from snippet_runner import FAKES, SNIPPETS, snippet_env
from tiny_models import cache_tiny_qwen2

from benchlib.tables.can_i_run_it import read_table

slow = pytest.mark.slow  # the tests that read the two runs of the snippet, which take most of a minute

SNIPPET = SNIPPETS / "unsloth_qlora.py"
STAND_IN = FAKES / "unsloth"
TINY_MODELS = Path(__file__).resolve().parent / "tiny_models.py"
PROJECTIONS = {"q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"}
# Printed after the snippet's text, from the model it left behind: the kind of every base layer
# under an adapter.
BASE_LAYERS_PROBE = """
import json as _json
_base = [m.base_layer for m in model.modules() if hasattr(m, "lora_A")]
print("BASE_LAYERS " + _json.dumps(sorted({(type(b).__name__, getattr(b.weight, "quant_type", None)) for b in _base})))
"""


def _constant(name: str) -> str:
    match = re.search(rf"^{name} = (.+)$", SNIPPET.read_text(encoding="utf-8"), re.M)
    assert match, f"{SNIPPET.name} has no {name} line"
    return match.group(1)


def _model_id() -> str:
    return _constant("MODEL_ID").strip('"')


def _setup() -> dict[str, int]:
    names = ("BATCH_SIZE", "SEQ_LEN", "LORA_RANK", "STEPS")
    match = re.search(
        r"^BATCH_SIZE, SEQ_LEN, LORA_RANK, STEPS = (\d+), (\d+), (\d+), (\d+)$",
        SNIPPET.read_text(encoding="utf-8"),
        re.M,
    )
    assert match, f"{SNIPPET.name} has no 'BATCH_SIZE, SEQ_LEN, LORA_RANK, STEPS = ...' line"
    return dict(zip(names, map(int, match.groups())))


def _logged_losses(out: str) -> list[float]:
    """The losses the Trainer prints every ``logging_steps``."""
    return [float(x) for x in re.findall(r"'loss': '?([^',}]+)", out)]


def _cache_bnb_4bit_copy(hf_home: Path, model_id: str) -> None:
    """The tiny Qwen2 under ``model_id``, saved quantized to NF4 like Unsloth's ``-bnb-4bit`` repositories."""
    import torch
    from transformers import AutoModelForCausalLM, BitsAndBytesConfig

    cache_tiny_qwen2(hf_home, model_id)
    snapshot = next((hf_home / "hub").glob("models--*/snapshots/*"))
    nf4 = BitsAndBytesConfig(
        load_in_4bit=True,
        bnb_4bit_quant_type="nf4",
        bnb_4bit_use_double_quant=True,
        bnb_4bit_compute_dtype=torch.float16,
    )
    AutoModelForCausalLM.from_pretrained(snapshot, quantization_config=nf4, dtype=torch.float16).save_pretrained(
        snapshot
    )


def _run_snippet(folder: Path, name: str) -> None:
    env = snippet_env(
        ["colab", "unsloth"],
        {
            "HF_HOME": str(folder / "hf"),
            "HF_HUB_OFFLINE": "1",
            "CUDA_VISIBLE_DEVICES": "",
            "OMP_NUM_THREADS": "1",
            "DRIVE_MOUNTPOINT": str(folder / "drive"),
            "FAKE_COLAB_LOG": str(folder / f"{name}-colab.log"),
            "FAKE_UNSLOTH_LOG": str(folder / f"{name}-unsloth.log"),
        },
    )
    result = subprocess.run(
        [sys.executable, "-c", SNIPPET.read_text(encoding="utf-8") + BASE_LAYERS_PROBE],
        cwd=folder,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    keep_run(result, folder / f"{name}.json")


def _make(folder: Path) -> None:
    """An artefact's make: the stand-in model, a first run, then a second after cutting its last save short."""
    _cache_bnb_4bit_copy(folder / "hf", _model_id())
    _run_snippet(folder, "first")
    checkpoints = sorted(p.name for p in folder.glob("drive/MyDrive/checkpoints/*/checkpoint-*"))
    (folder / "first-checkpoints.json").write_text(json.dumps(checkpoints))
    if checkpoints:  # as a runtime that stopped mid-save leaves the newest: without trainer_state.json
        newest = max(folder.glob("drive/MyDrive/checkpoints/*/checkpoint-*"), key=lambda p: int(p.name.split("-")[1]))
        (newest / "trainer_state.json").unlink()
    _run_snippet(folder, "second")


class Runs:
    """What the two runs left: their outcomes, what they asked the stand-ins for, and the Drive folder."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.first, self.second = kept_run(folder / "first.json"), kept_run(folder / "second.json")
        for name, result in (("first", self.first), ("second", self.second)):
            assert result.returncode == 0, (
                f"{SNIPPET.name}, {name} run, failed ({result.returncode}):\n{result.stdout}\n{result.stderr}"
            )
        self.first_checkpoints = json.loads((folder / "first-checkpoints.json").read_text())
        runs = list((folder / "drive" / "MyDrive" / "checkpoints").iterdir())
        assert len(runs) == 1, runs
        self.output_dir = runs[0]

    def calls(self, name: str, fake: str) -> list[dict]:
        path = self.folder / f"{name}-{fake}.log"
        return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()] if path.exists() else []


@pytest.fixture(scope="module")
def runs(pytestconfig: pytest.Config) -> Runs:
    """The two runs, made once (an artefact: tests/artefacts.py) for this module's tests."""
    return Runs(
        made(
            pytestconfig,
            "unsloth-snippet",
            [SNIPPET, Path(__file__).resolve(), TINY_MODELS, STAND_IN, FAKES / "colab"],
            _make,
        )
    )


def test_batch_length_and_rank_are_what_the_guide_predicts_fits_a_t4() -> None:
    table = read_table()
    task = next(t for t in table["tasks"] if t["key"] == "qlora")
    row = next(r for r in table["rows"] if r["model"] == "llama-3.1-8b")
    predicted = {
        "BATCH_SIZE": row["cells"]["qlora"]["t4"],
        "SEQ_LEN": task["setup"]["seq_len"],
        "LORA_RANK": task["setup"]["lora_rank"],
    }
    setup = _setup()
    assert {k: setup[k] for k in predicted} == predicted, (
        f"{SNIPPET.name}: set BATCH_SIZE, SEQ_LEN, LORA_RANK to the QLoRA table's T4 cell for Llama 3.1 8B"
    )
    assert task["setup"]["grad_checkpointing"], "the table's batch assumes gradient checkpointing, as the snippet uses"


@slow
def test_unsloth_comes_before_transformers_and_peft(runs: Runs) -> None:
    imported = [c for c in runs.calls("first", "unsloth") if c["event"] == "import"]
    assert imported == [{"event": "import", "already_imported": []}], imported


@slow
def test_loads_unsloths_4bit_copy_in_nf4_with_adapters_on_every_projection(runs: Runs) -> None:
    calls = {c["event"]: c for c in runs.calls("first", "unsloth")}
    load, peft = calls["from_pretrained"], calls["get_peft_model"]
    assert load["model_name"] == _model_id() and _model_id().endswith("-bnb-4bit"), load
    assert (load["load_in_4bit"], load["dtype"], load["max_seq_length"]) == (True, None, _setup()["SEQ_LEN"]), load
    assert set(peft["target_modules"]) == PROJECTIONS and peft["r"] == _setup()["LORA_RANK"], peft
    assert (peft["lora_dropout"], peft["bias"]) == (0, "none"), "Unsloth's fast path needs both"
    base_layers = json.loads(re.search(r"^BASE_LAYERS (.*)$", runs.first.stdout, re.M).group(1))
    assert base_layers == [["Linear4bit", "nf4"]], base_layers


@slow
def test_trains_every_step_with_a_finite_falling_loss(runs: Runs) -> None:
    losses = _logged_losses(runs.first.stdout)
    assert len(losses) >= 2 and all(math.isfinite(x) for x in losses), runs.first.stdout
    assert losses[-1] < losses[0], f"loss did not fall: {losses}"
    assert re.search(rf"^finished at step {_setup()['STEPS']}, last logged loss [\d.]+$", runs.first.stdout, re.M)


@slow
def test_checkpoints_and_the_adapter_are_on_drive(runs: Runs) -> None:
    assert runs.first_checkpoints, "the first run saved no checkpoint on Drive"
    assert len(runs.first_checkpoints) <= 2, f"save_total_limit keeps two: {runs.first_checkpoints}"
    for run in ("first", "second"):
        events = [c["event"] for c in runs.calls(run, "colab")]
        assert events[0] == "mount" and events[-1] == "flush_and_unmount", (run, events)
    adapter = runs.output_dir / "adapter"
    with safe_open(adapter / "adapter_model.safetensors", "pt") as weights:
        keys = list(weights.keys())
        count = sum(math.prod(weights.get_slice(k).get_shape()) for k in keys)
    assert keys and all(".lora_A." in k or ".lora_B." in k for k in keys), keys
    trainable = re.search(r"^trainable params: ([\d,]+) \|\|", runs.first.stdout, re.M)
    assert trainable and int(trainable.group(1).replace(",", "")) == count, "the adapter holds only the trained weights"
    config = json.loads((adapter / "adapter_config.json").read_text(encoding="utf-8"))
    assert config["base_model_name_or_path"] == _model_id()
    assert (adapter / "tokenizer_config.json").exists()


@slow
def test_rerun_after_a_save_cut_short_resumes_from_the_checkpoint_before(runs: Runs) -> None:
    steps = sorted(int(name.split("-")[1]) for name in runs.first_checkpoints)
    assert len(steps) == 2, f"needs two checkpoints to fall back on: {runs.first_checkpoints}"
    removed = re.search(r"^removed (.+): the runtime stopped while saving it$", runs.second.stdout, re.M)
    assert removed and Path(removed.group(1)).name == f"checkpoint-{steps[-1]}", runs.second.stdout
    resumed = re.search(r"^resuming from (.+)$", runs.second.stdout, re.M)
    assert resumed and Path(resumed.group(1)).name == f"checkpoint-{steps[0]}", runs.second.stdout
    assert re.search(rf"^finished at step {_setup()['STEPS']}, ", runs.second.stdout, re.M), runs.second.stdout
    again = _logged_losses(runs.second.stdout)
    assert again and again == _logged_losses(runs.first.stdout)[-len(again) :], "the resumed steps differ"
    newest = runs.output_dir / f"checkpoint-{steps[-1]}"
    assert (newest / "trainer_state.json").exists(), "the step cut short was trained and saved again"
