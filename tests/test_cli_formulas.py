"""`benchlib fit` and `benchlib predict` answer for a shipped model in a setup the picker offers from
the committed formulas (benchlib/tables/llm_formulas.json), say so, and give what a trace gives
(memory within 1 %, time within 2 %: the formulas' own bounds); ``--trace``, or a table that is
missing or stale, traces as before."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from benchlib.cli import app
from benchlib.cli import formulas as cli_formulas
from benchlib.predict.formula_file import Formulas
from benchlib.tables import Table, stale_reasons
from benchlib.tables.llm_formulas import ATTENTION_PROJECTIONS, TABLE

FILE = "benchlib/tables/llm_formulas.json"
FROM_FORMULAS = f"the formulas committed in {FILE}"
TRACED = "one step traced with FakeTensorMode + MemTracker"
MEMORY, TIME = 0.01, 0.02  # the bounds (#37)
ENV = {"HF_HUB_OFFLINE": "1", "COLUMNS": "80"}

GPTQ_70B_ON_AN_A100 = ["--model", "llama-3.3-70b", "--gpu", "A100 80GB SXM", "--weights", "gptq-int4"]
QLORA_8B_ON_A_T4 = ["--model", "llama-3.1-8b", "--gpu", "T4", "--mode", "qlora", "--grad-checkpointing"]
# Phi's fused qkv_proj is among the attention projections.
LORA_PHI_ON_A_T4 = ["--model", "phi-4-mini", "--gpu", "T4", "--mode", "lora", "--grad-checkpointing"]
# GGUF files in llama.cpp: the file gpt-oss ships (MXFP4 experts) by default, and one that half fits two GPUs.
GGUF_20B_ON_A_T4 = ["--model", "gpt-oss-20b", "--gpu", "T4", "--engine", "llama.cpp"]
GGUF_70B_ON_TWO_L4S = ["--model", "llama-3.3-70b", "--gpu", "L4", "--gpus", "2", "--weights", "gguf-q5_k_m"]


def answer(*args: str) -> dict[str, Any]:
    result = CliRunner().invoke(app, [*args, "--json"], env=ENV)
    assert result.exit_code == 0, result.output
    return json.loads(result.output)


def close(got: float, expected: float, tolerance: float) -> bool:
    return got == pytest.approx(expected, rel=tolerance, abs=1)


@pytest.mark.slow
@pytest.mark.parametrize(
    "args",
    [
        [*GPTQ_70B_ON_AN_A100, "--gpus", "2", "--batch", "8", "--seq-len", "4096", "--sizes"],
        [*QLORA_8B_ON_A_T4, "--batch", "4", "--seq-len", "2048"],
        [*GGUF_20B_ON_A_T4, "--seq-len", "16384"],
        [*GGUF_70B_ON_TWO_L4S, "--seq-len", "8192"],
        [*GGUF_20B_ON_A_T4, "--seq-len", "65536", "--kv-cache", "q8_0"],
        [*QLORA_8B_ON_A_T4, "--batch", "2", "--seq-len", "1024", "--lora-rank", "64"],
        [*LORA_PHI_ON_A_T4, "--batch", "2", "--seq-len", "1024", "--lora-targets", ATTENTION_PROJECTIONS],
    ],
    ids=[
        "70B GPTQ, 2 x A100, longest context",
        "8B QLoRA, T4 (fp16), largest batch",
        "gpt-oss 20B in llama.cpp, T4",
        "70B Q5_K_M in llama.cpp, 2 x L4, some layers",
        "gpt-oss 20B in llama.cpp, q8_0 KV cache, T4",
        "8B QLoRA at rank 64, T4",
        "Phi-4-mini LoRA on the attention projections, T4",
    ],
)
def test_fit_answers_from_the_formulas_what_a_trace_answers(args: list[str]) -> None:
    fast, traced = answer("fit", *args), answer("fit", *args, "--trace")
    assert FROM_FORMULAS in fast["method"] and TRACED in traced["method"]
    assert FROM_FORMULAS not in traced["method"]
    assert set(fast) == set(traced)
    searched = "largest_context" if "largest_context" in traced else "largest_batch"
    # Something to compare: a size that fits, or in llama.cpp the layers that do (-ngl) where none does.
    assert traced[searched] > 0 or 0 < traced.get("gpu_layers", 0) < traced["layers"]
    assert fast.get("gpu_layers") == traced.get("gpu_layers")
    assert close(fast[searched], traced[searched], MEMORY)
    assert close(fast["peak_bytes"], traced["peak_bytes"], MEMORY) and fast["fits"] == traced["fits"]
    assert len(fast.get("per_gpu", [])) == len(traced.get("per_gpu", []))
    for got, expected in zip(fast.get("per_gpu", []), traced.get("per_gpu", []), strict=True):
        assert close(got, expected, MEMORY)
    for got, expected in zip(fast.get("other_sizes", []), traced.get("other_sizes", []), strict=True):
        assert close(got[searched], expected[searched], MEMORY)


@pytest.mark.slow
@pytest.mark.parametrize(
    "args",
    [
        [*GPTQ_70B_ON_AN_A100, "--batch", "8", "--seq-len", "4096"],
        [*QLORA_8B_ON_A_T4, "--batch", "4", "--seq-len", "2048", "--sizes"],
        [*GGUF_20B_ON_A_T4, "--seq-len", "16384"],
        [*LORA_PHI_ON_A_T4, "--batch", "4", "--seq-len", "2048", "--lora-targets", ATTENTION_PROJECTIONS],
    ],
    ids=[
        "70B GPTQ, A100, decode",
        "8B QLoRA, T4 (fp16), training",
        "gpt-oss 20B in llama.cpp, T4",
        "Phi-4-mini LoRA on the attention projections, T4",
    ],
)
def test_predict_answers_from_the_formulas_what_a_count_answers(args: list[str]) -> None:
    fast, traced = answer("predict", *args), answer("predict", *args, "--trace")
    assert FROM_FORMULAS in fast["method"] and FROM_FORMULAS not in traced["method"]
    assert set(fast) == set(traced)
    for field in ("training_tokens_per_s", "decode_tokens_per_s", "prefill_tokens_per_s"):
        assert (fast[field] is None) == (traced[field] is None)
        if traced[field] is not None:
            assert fast[field] == pytest.approx(traced[field], rel=TIME), field
    assert fast["dtype"] == traced["dtype"] == ("fp16" if "T4" in args else "bf16")
    if "max_concurrency" in traced:
        assert close(fast["max_concurrency"], traced["max_concurrency"], MEMORY)
    for got, expected in zip(fast.get("other_sizes", []), traced.get("other_sizes", []), strict=True):
        assert got["training_tokens_per_s"] == pytest.approx(expected["training_tokens_per_s"], rel=TIME)


def test_the_text_says_the_answer_comes_from_the_committed_formulas() -> None:
    fit = CliRunner().invoke(app, ["fit", *QLORA_8B_ON_A_T4], env=ENV)
    predict = CliRunner().invoke(app, ["predict", *QLORA_8B_ON_A_T4], env=ENV)
    assert fit.exit_code == 0 and predict.exit_code == 0, fit.output + predict.output
    # Each row's text as read, across the lines it wraps to.
    fit_text, predict_text = (" ".join(r.output.replace("│", " ").split()) for r in (fit, predict))
    assert f"how {FROM_FORMULAS}" in fit_text and "at 3 and 4 layers, extrapolated per layer to 32" in fit_text
    assert f"from {FROM_FORMULAS} (calls counted at 3 and 4 layers" in predict_text


def test_an_answer_from_the_formulas_builds_no_model() -> None:
    """Neither torch nor transformers is imported: what makes the answer take a moment, not seconds."""
    code = (
        "import sys\n"
        "from typer.testing import CliRunner\n"
        "from benchlib.cli import app\n"
        f"for command in ('fit', 'predict'):\n"
        f"    result = CliRunner().invoke(app, [command, *{QLORA_8B_ON_A_T4!r}])\n"
        "    assert result.exit_code == 0, result.output\n"
        "print(sorted(m for m in ('torch', 'transformers', 'peft') if m in sys.modules))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=ENV, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


def table_copy(folder: Path) -> Path:
    path = folder / "llm_formulas.json"
    shutil.copyfile(cli_formulas.formulas_path(), path)
    return path


def stale(folder: Path) -> Path:
    path = table_copy(folder)
    contents = json.loads(path.read_text())
    contents["inputs"]["data/language_models.yaml"] = "0" * 16  # as if a shipped config changed since
    path.write_text(json.dumps(contents))
    return path


def unreadable(folder: Path) -> Path:
    path = folder / "llm_formulas.json"
    path.write_text("{not json")
    return path


@pytest.mark.slow
@pytest.mark.parametrize(
    "make", [stale, unreadable, lambda folder: folder / "missing.json"], ids=["stale", "unreadable", "missing"]
)
def test_without_a_current_table_fit_and_predict_trace(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, make) -> None:
    path = make(tmp_path)
    monkeypatch.setattr(cli_formulas, "formulas_path", lambda: path)
    args = ["--model", "qwen2.5-0.5b", "--gpu", "T4"]
    fit = CliRunner().invoke(app, ["fit", *args, "--json"], env=ENV)
    assert fit.exit_code == 0 and "Traceback" not in fit.output, fit.output
    assert json.loads(fit.output)["method"].startswith(TRACED)
    predict = CliRunner().invoke(app, ["predict", *args], env=ENV | {"COLUMNS": "400"})
    assert predict.exit_code == 0 and "Traceback" not in predict.output, predict.output
    assert "formulas committed" not in predict.output and "│ from " not in predict.output


@dataclass(frozen=True)
class TableIn(Table):
    """The formulas table in another file, for `stale_reasons`."""

    file: Path = Path()

    @property
    def path(self) -> Path:
        return self.file


def committed_header() -> dict[str, Any]:
    header = Formulas.read(cli_formulas.formulas_path()).header
    assert header["table"] == "llm_formulas" and {"inputs", "versions", "setups"} <= set(header)
    return header


CHANGES = {
    "current": lambda h: None,
    "a local build of the same release": lambda h: h["versions"].update(torch=h["versions"]["torch"] + "+cu130"),
    "an input changed": lambda h: h["inputs"].update({"data/language_models.yaml": "0" * 16}),
    "an input gone": lambda h: h["inputs"].pop("code/benchlib/predict/formula.py"),
    "an input new": lambda h: h["inputs"].update({"code/benchlib/predict/new.py": "0" * 16}),
    "another transformers": lambda h: h["versions"].update(transformers="0.0.1"),
    "no versions": lambda h: h.pop("versions"),
}


@pytest.mark.parametrize("change", CHANGES)
def test_the_headers_staleness_is_what_stale_reasons_finds(tmp_path: Path, change: str) -> None:
    header = committed_header()
    CHANGES[change](header)
    path = tmp_path / "llm_formulas.json"
    path.write_text(json.dumps({**header, "models": []}))  # what stale_reasons reads, less the formulas
    table = TableIn(**{f.name: getattr(TABLE, f.name) for f in fields(TABLE)}, file=path)
    assert cli_formulas.stale(header) == bool(stale_reasons(table))
    assert cli_formulas.stale(header) == (change not in ("current", "a local build of the same release"))


def test_a_copy_of_the_current_table_answers_too(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The fallback above is the table's state, not the path: a current copy answers from the formulas."""
    path = table_copy(tmp_path)
    monkeypatch.setattr(cli_formulas, "formulas_path", lambda: path)
    fit = answer("fit", *QLORA_8B_ON_A_T4)
    assert fit["method"].startswith(f"the formulas committed in {path}")
