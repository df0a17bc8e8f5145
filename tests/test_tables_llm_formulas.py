"""The committed formulas: every model the page shows, every setup the picker offers, and a reason
wherever a setup has none."""

from __future__ import annotations

import json
from concurrent.futures import Future
from dataclasses import asdict, replace

import pytest

from benchlib import tables
from benchlib.catalog.language_models import resolve_model
from benchlib.core.package_data import data_file
from benchlib.predict.llama_cpp import shape_of
from benchlib.predict.llm_memory import LLMPredictor
from benchlib.predict.weight_formats import GGUF_FORMATS
from benchlib.tables import llm_formulas
from benchlib.tables.llm_formulas import NAME, SETUPS, predicted_models


@pytest.fixture(scope="module")
def table() -> dict:
    return tables.read(NAME)


def test_every_shown_model_has_every_setup_the_picker_offers(table):
    assert [m["model"] for m in table["models"]] == predicted_models()
    assert list(table["setups"]) == list(SETUPS)
    for row in table["models"]:
        assert list(row["setups"]) == list(SETUPS), row["model"]


def test_a_setup_without_formulas_says_why_in_a_sentence(table):
    for row in table["models"]:
        for key, entry in row["setups"].items():
            if "memory" in entry:
                assert set(entry) == {"memory", "time"}, (row["model"], key)
            else:
                assert len(entry["not_predicted"].split()) >= 5, (row["model"], key, entry)


def test_the_index_ahead_of_the_formulas_is_each_models_title_context_and_setups_without_them(table):
    assert table["index"] == [
        {
            "model": row["model"],
            "title": row["title"],
            "max_positions": row["max_positions"],
            "not_predicted": {k: e["not_predicted"] for k, e in row["setups"].items() if "memory" not in e},
        }
        for row in table["models"]
    ]
    assert list(table)[-2:] == ["index", "models"], "the models come last, so the header reads without them"


def test_the_issues_two_questions_have_formulas(table):
    """Llama 3.3 70B in GPTQ int4 (inference) and Llama 3.1 8B in QLoRA: the questions issue 37 asks."""
    rows = {m["model"]: m["setups"] for m in table["models"]}
    assert "memory" in rows["llama-3.3-70b"]["inference-gptq-int4"]
    assert "memory" in rows["llama-3.1-8b"]["qlora"]
    assert set(rows["llama-3.1-8b"]["qlora"]["time"]["calls"]) == {"train"}
    assert set(rows["llama-3.3-70b"]["inference-gptq-int4"]["time"]["calls"]) == {"prefill", "decode"}


def test_every_dense_model_has_formulas_for_bf16_inference_and_each_way_of_fine_tuning(table):
    for row in table["models"]:
        for key in ("inference-bf16", "qlora", "lora", "train"):
            assert "memory" in row["setups"][key], (row["model"], key, row["setups"][key].get("not_predicted"))


def test_each_gguf_file_with_formulas_has_its_llama_cpp_shape_and_no_other_setup_has_one(table):
    for row in table["models"]:
        gguf = [k for k, e in row["setups"].items() if "memory" in e and SETUPS[k].weights in GGUF_FORMATS]
        assert list(row["llama_cpp"]) == gguf, row["model"]
    assert "inference-gguf-mxfp4" in next(m for m in table["models"] if m["model"] == "gpt-oss-20b")["llama_cpp"]


@pytest.mark.slow
def test_a_gguf_files_shape_is_its_config_and_the_tensors_a_trace_counts(table):
    """The shape's weights come from the memory formula at one token; a trace gives the same within
    the formulas' rounding (seven significant digits), and the config the rest exactly."""
    name, key = "llama-3.2-1b", "inference-gguf-q4_k_m"
    model, setup = resolve_model(name), SETUPS[key]
    traced = asdict(shape_of(model, setup, LLMPredictor(model, setup).breakdown(1)["weights"]))
    written = next(m for m in table["models"] if m["model"] == name)["llama_cpp"][key]
    assert written["layer_bytes"] == pytest.approx(traced.pop("layer_bytes"), rel=1e-6)
    assert {k: v for k, v in written.items() if k != "layer_bytes"} == traced


# ----------------------------------------------------------------------------- reuse

TWO = ["qwen2.5-0.5b", "llama-3.2-1b"]


class InlinePool:
    """The process pool, run in this process."""

    def __init__(self, *args: object, **kwargs: object) -> None:
        pass

    def __enter__(self) -> InlinePool:
        return self

    def __exit__(self, *exc: object) -> None:
        return None

    def submit(self, fn, job):
        future = Future()
        future.set_result(fn(job))
        return future


@pytest.fixture
def run(monkeypatch, tmp_path):
    """``run(committed)``: two models' table computed with ``committed`` as the committed file
    (None: there is none), each entry a stub; returns the table and the jobs computed."""
    monkeypatch.setattr(llm_formulas, "ProcessPoolExecutor", InlinePool)
    # The order of the jobs (by how long each traces) is not what is tested here.
    monkeypatch.setattr(llm_formulas, "_work", lambda job: 1)
    monkeypatch.setattr(llm_formulas, "_entry_of", lambda job: (*job, {"not_predicted": f"computed for {job}"}))

    def run(committed: dict | None) -> tuple[dict, list[tuple[str, str]]]:
        monkeypatch.setattr(tables, "committed_to_reuse", lambda name: committed)
        steps: list[str] = []
        table = llm_formulas.compute_table(steps.append, TWO)
        jobs = [tuple(step.split(": ")) for step in steps if not step.endswith("(unchanged)")]
        assert len(steps) == len(TWO) * len(SETUPS)
        return json.loads(json.dumps(table)), sorted(jobs)

    return run


def every(models: list[str], keys: list[str] | dict) -> list[tuple[str, str]]:
    return sorted((model, key) for model in models for key in keys)


def edited_models_yaml(monkeypatch, tmp_path, old: str, new: str) -> None:
    """language_models.yaml with its first ``old`` replaced by ``new``, as the tables read it."""
    text = data_file("language_models.yaml").read_text(encoding="utf-8")
    assert old in text
    edited = tmp_path / "language_models.yaml"
    edited.write_text(text.replace(old, new, 1), encoding="utf-8")
    monkeypatch.setattr(tables, "data_file", lambda name: edited if name == "language_models.yaml" else data_file(name))


def test_a_second_run_copies_every_entry_whose_inputs_are_unchanged(run):
    first, computed = run(None)
    assert computed == every(TWO, SETUPS)
    second, computed = run(first)
    assert computed == []
    assert second["models"] == first["models"]


def test_a_changed_config_computes_that_models_entries_again_and_a_prose_edit_none(run, monkeypatch, tmp_path):
    first, _ = run(None)
    # qwen2.5-0.5b comes first in the file: its note on how it was checked is prose.
    edited_models_yaml(monkeypatch, tmp_path, "checked: litgpt/config.py", "checked: again, litgpt/config.py")
    assert run(first)[1] == []
    edited_models_yaml(monkeypatch, tmp_path, "hidden_size: 896", "hidden_size: 960")
    assert run(first)[1] == every(["qwen2.5-0.5b"], SETUPS)


def test_a_changed_setup_or_code_computes_its_entries_again(run, monkeypatch):
    first, _ = run(None)
    monkeypatch.setitem(SETUPS, "lora", replace(SETUPS["lora"], lora_rank=SETUPS["lora"].lora_rank * 2))
    assert run(first)[1] == every(TWO, ["lora"])
    monkeypatch.setitem(SETUPS, "lora", replace(SETUPS["lora"], lora_rank=SETUPS["lora"].lora_rank // 2))
    code = llm_formulas.shared_inputs()["code"]
    monkeypatch.setattr(
        llm_formulas, "code_digests", lambda module: {**code, "code/benchlib/predict/formula.py": "new"}
    )
    assert run(first)[1] == every(TWO, SETUPS)


def test_fresh_reuses_no_committed_table(monkeypatch):
    monkeypatch.setattr(tables, "read", lambda name: {"table": name})
    try:
        tables.reuse_committed(False)
        assert tables.committed_to_reuse(NAME) is None
    finally:
        tables.reuse_committed(True)
    assert tables.committed_to_reuse(NAME) == {"table": NAME}
