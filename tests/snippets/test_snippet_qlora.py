"""The QLoRA snippet, run unchanged on this CPU machine with real bitsandbytes NF4.

bitsandbytes 0.50 quantizes to NF4 and runs 4-bit matmuls on the CPU, so quantization, peft,
gradient checkpointing, autocast, the loss scaler and saving are all the real libraries, and the
snippet takes a T4's branches (no bfloat16: float16 compute with GradScaler on). The stand-in is
only what would need the network: the Hugging Face cache holds, under the snippet's ``MODEL_ID``,
a tiny random Qwen2 (2 layers, hidden 64) and a Qwen2 byte-level tokenizer with no merges, and
the hub is offline. CUDA is hidden so the run is the CPU path on any machine. A few lines run
after the snippet's text, in the same interpreter, to print what its base layers are.
"""

from __future__ import annotations

import json
import math
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from artefacts import keep_run, kept_run, made
from safetensors import safe_open
from snippet_runner import SNIPPETS, snippet_env
from tiny_models import TINY_QWEN2, cache_tiny_qwen2

pytestmark = pytest.mark.slow  # the module's one run of the snippet takes most of a minute

SNIPPET = SNIPPETS / "qlora_finetune.py"
TINY_MODELS = Path(__file__).resolve().parent / "tiny_models.py"  # makes the stand-in
LORA_TARGETS = ("q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj")
# Printed after the snippet has run, from the objects it left behind: the kind of every linear
# layer of the base model that has an adapter.
BASE_LAYERS_PROBE = """
import json as _json
_base = [m.base_layer for m in model.modules() if hasattr(m, "lora_A")]
print("BASE_LAYERS " + _json.dumps([[type(b).__module__ + "." + type(b).__name__,
      str(b.weight.dtype), getattr(b.weight, "quant_type", None)] for b in _base]))
"""


def _model_id() -> str:
    match = re.search(r'^MODEL_ID = "([^"]+)"', SNIPPET.read_text(encoding="utf-8"), re.M)
    assert match, f"{SNIPPET.name} has no MODEL_ID line"
    return match.group(1)


def _lora_parameters(config: Any, rank: int) -> int:
    """Rank x (inputs + outputs) for each of LORA_TARGETS in every layer."""
    h, i = config.hidden_size, config.intermediate_size
    kv = config.num_key_value_heads * config.hidden_size // config.num_attention_heads
    in_out = [(h, h), (h, kv), (h, kv), (h, h), (h, i), (h, i), (i, h)]  # in LORA_TARGETS' order
    return config.num_hidden_layers * sum(rank * (a + b) for a, b in in_out)


class SnippetRun:
    """What one run of the snippet left: its stdout, working folder and the tiny model's config."""

    def __init__(self, out: str, folder: Path, config: Any) -> None:
        self.out, self.folder, self.config = out, folder, config


def _run_snippet(folder: Path) -> None:
    """An artefact's make: the stand-in model in ``folder/hf``, then the snippet run in ``folder``."""
    model_id = _model_id()
    assert model_id.startswith("Qwen/Qwen2.5-"), f"the stand-in is a tiny Qwen2; make one like {model_id}"
    config = cache_tiny_qwen2(folder / "hf", model_id)
    config.to_json_file(folder / "stand-in-config.json")
    env = snippet_env(
        env={"HF_HOME": str(folder / "hf"), "HF_HUB_OFFLINE": "1", "CUDA_VISIBLE_DEVICES": "", "OMP_NUM_THREADS": "1"}
    )
    result = subprocess.run(
        [sys.executable, "-c", SNIPPET.read_text(encoding="utf-8") + BASE_LAYERS_PROBE],
        cwd=folder,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    keep_run(result, folder / "run.json")


@pytest.fixture(scope="module")
def run(pytestconfig: pytest.Config) -> SnippetRun:
    """The snippet, run once (an artefact: tests/artefacts.py) for this module's tests; it takes most of their time."""
    from transformers import Qwen2Config

    folder = made(pytestconfig, "qlora-snippet", [SNIPPET, Path(__file__).resolve(), TINY_MODELS], _run_snippet)
    result = kept_run(folder / "run.json")
    assert result.returncode == 0, f"{SNIPPET.name} failed ({result.returncode}):\n{result.stdout}\n{result.stderr}"
    return SnippetRun(result.stdout, folder, Qwen2Config.from_json_file(folder / "stand-in-config.json"))


def _lora_rank(out: str) -> int:
    setup = re.search(
        r"^no GPU, so no peak GPU memory to report \(batch \d+, seq len \d+, LoRA rank (\d+), "
        r"fp16 compute, AdamW, gradient checkpointing\)$",
        out,
        re.M,
    )
    assert setup, out
    return int(setup.group(1))


def test_prints_a_finite_falling_loss_per_step_and_the_setup(run: SnippetRun) -> None:
    steps = re.findall(r"^step (\d+)/(\d+) loss (\S+)$", run.out, re.M)
    assert steps and [int(s) for s, _, _ in steps] == list(range(1, int(steps[0][1]) + 1)), run.out
    losses = [float(loss) for _, _, loss in steps]
    assert all(math.isfinite(loss) for loss in losses), run.out
    assert losses[-1] < losses[0], f"loss did not fall: {losses}"  # about 5.56 -> 5.53 on the tiny model
    _lora_rank(run.out)  # the no-GPU line with the setup the guide compares against


def test_only_the_adapters_train(run: SnippetRun) -> None:
    lora_params = _lora_parameters(run.config, _lora_rank(run.out))
    assert re.search(
        rf"^trainable params: {lora_params:,} \|\| all params: [\d,]+ \|\| trainable%: [\d.]+$", run.out, re.M
    ), run.out


def test_base_layers_under_the_adapters_are_bitsandbytes_nf4(run: SnippetRun) -> None:
    base_layers = json.loads(re.search(r"^BASE_LAYERS (.*)$", run.out, re.M).group(1))
    assert len(base_layers) == len(LORA_TARGETS) * TINY_QWEN2["num_hidden_layers"], base_layers
    assert all(layer == ["bitsandbytes.nn.modules.Linear4bit", "torch.uint8", "nf4"] for layer in base_layers), (
        base_layers
    )


def test_adapter_folder_holds_the_adapters_only(run: SnippetRun) -> None:
    adapter = run.folder / "qlora-adapter"
    with safe_open(adapter / "adapter_model.safetensors", "pt") as weights:
        shapes = [weights.get_slice(k).get_shape() for k in weights.keys()]
        keys = list(weights.keys())
    assert keys and all(".lora_A." in k or ".lora_B." in k for k in keys), keys
    assert sum(rows * cols for rows, cols in shapes) == _lora_parameters(run.config, _lora_rank(run.out))
    adapter_config = json.loads((adapter / "adapter_config.json").read_text(encoding="utf-8"))
    assert adapter_config["base_model_name_or_path"] == _model_id()
    assert {name.rsplit(".", 1)[-1] for name in adapter_config["target_modules"]} == set(LORA_TARGETS)
