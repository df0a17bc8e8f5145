"""The committed formulas as `benchlib.predict.formula_file` reads them: written by
`benchlib.predict.formula_json.entry` and evaluated with numpy alone, they give what
`benchlib.predict.formula` gives (memory, and each call's FLOPs and bytes, within 0.1 %: what
writing them down loses), and a setup finds its committed entry only where it is one of them."""

from __future__ import annotations

import json
import random
from dataclasses import asdict, replace
from pathlib import Path
from typing import Any

import pytest
from tiny_configs import TINY_QWEN2

from benchlib.catalog.language_models import ShippedModel, resolve_model, shipped_models
from benchlib.predict import formula, formula_json
from benchlib.predict.formula_file import FormulaModel, Formulas, ModelFormulas, setup_key, shipped_name
from benchlib.predict.llm_memory import make_setup
from benchlib.predict.llm_speed import CountedCall, InferenceCalls
from benchlib.tables import llm_formulas
from benchlib.tables.llm_formulas import ATTENTION_PROJECTIONS

WRITTEN = 1e-3  # what seven significant digits and the rounding of a moment may lose
# Small decoders, 6 layers so that a trace is reduced and the layers can be split: a dense one, and a
# mixture of experts with a sliding window (two pieces of lengths, and the share of experts touched).
DENSE = TINY_QWEN2
MOE = DENSE | {
    "model_type": "mixtral",
    "architectures": ["MixtralForCausalLM"],
    "num_local_experts": 4,
    "num_experts_per_tok": 2,
    "sliding_window": 128,
}
CASES = {
    "dense inference": (DENSE, "inference-bf16"),
    "dense qlora": (DENSE, "qlora"),
    "moe with a window, inference": (MOE, "inference-gptq-int4"),
}


class Made:
    """One case's written entry, the formulas it was written from, and the file's reading of it."""

    def __init__(self, config: Path, key: str) -> None:
        made: dict[str, Any] = {}

        def kept(name: str, make: Any) -> Any:
            # entry() derives the formulas once; the test compares with those very formulas.
            return lambda model, setup: made.setdefault(name, make(model, setup))

        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(formula_json, "memory_formula", kept("memory", formula.memory_formula))
            patch.setattr(formula_json, "time_formula", kept("time", formula.time_formula))
            written = formula_json.entry(str(config), llm_formulas.SETUPS[key])
        assert "memory" in written, written
        # Through JSON, as the committed file holds it.
        self.written = json.loads(json.dumps(written))
        self.memory: formula.MemoryFormula = made["memory"]
        self.time: formula.TimeFormula = made["time"]
        self.model = resolve_model(str(config))
        self.key = key

    def read(self, **sizes: Any) -> ModelFormulas:
        """The file's formulas, asked about as the committed setup at ``sizes`` (batch, seq_len, dtype)."""
        setups = llm_formulas.SETUPS
        table = Formulas(Path("llm_formulas.json"), {"setups": {k: asdict(s) for k, s in setups.items()}})
        config = json.loads(json.dumps(self.model.config.to_dict()))
        shipped = ShippedModel(self.model.name, "", "a small decoder", "", config, "")
        window = self.written["memory"]["pieces"][0]["upto"] + 1 if len(self.written["memory"]["pieces"]) > 1 else None
        model = FormulaModel(shipped, self.model.max_positions(), self.model.depth, window)
        setup = replace(setups[self.key], **sizes)
        return ModelFormulas(model, self.key, setup, self.written["memory"], self.written["time"], table)


class Cases(dict[str, Made]):
    """Each case made on first use, once per module."""

    def __init__(self, folder: Path) -> None:
        super().__init__()
        self.folder = folder

    def __missing__(self, case: str) -> Made:
        config, key = CASES[case]
        path = self.folder / f"{case.replace(' ', '_').replace(',', '')}.json"
        path.write_text(json.dumps(config))
        self[case] = Made(path, key)
        return self[case]


@pytest.fixture(scope="module")
def made(tmp_path_factory: pytest.TempPathFactory) -> Cases:
    return Cases(tmp_path_factory.mktemp("configs"))


def sizes(seed: int, longest: int) -> list[tuple[int, int]]:
    rng = random.Random(seed)
    # Both formulas of a length (one sequence, several) and both pieces of a window.
    return [
        (1, 127),
        (3, 128),
        (1, 1),
        *((rng.choice([1, rng.randint(2, 64)]), rng.randint(1, longest)) for _ in range(12)),
    ]


@pytest.mark.slow
@pytest.mark.parametrize("case", CASES)
def test_the_files_memory_is_the_formulas(made: Cases, case: str) -> None:
    m = made[case]
    read = m.read()
    assert read.plan == m.memory.predictor.plan
    split = replace(m.memory, predictor=m.memory.predictor.split(2))
    for batch, length in sizes(37, m.model.max_positions()):
        for gpus, expected in ((1, m.memory.at(batch, length)), (2, split.at(batch, length))):
            got = read.at(batch, length, gpus)
            assert set(got) == set(expected)
            # The breakdown a reader sees adds up to the peak, as a trace's does.
            assert got["total"] == sum(got[kind] for kind in read.kinds if kind != "total"), (case, batch, length)
            for figure, value in expected.items():
                # Each GPU's peak and the total within 0.1 %; a kind within 0.1 % of the total
                # (two moments within a rounding of each other may trade places).
                scale = value if figure == "total" or figure.startswith("gpu") else expected["total"]
                assert abs(got[figure] - value) <= WRITTEN * scale, (case, batch, length, gpus, figure)
    budget = m.memory.peak(4, 300)
    for asked in ({"batch": 4}, {"length": 300}):
        assert read.largest(budget, **asked) == pytest.approx(m.memory.largest(budget, **asked), rel=WRITTEN, abs=1)


def totals(call: CountedCall) -> tuple[int, int]:
    """The whole model's FLOPs and bytes of a call, added up over the plan's traced depths."""
    flops = call.plan.combine([sum(op.flops for op in ops) for ops in call.ops])
    moved = call.plan.combine([sum(op.bytes for op in ops) for ops in call.ops])
    return flops, moved


def named_calls(calls: InferenceCalls | CountedCall) -> dict[str, CountedCall | None]:
    if isinstance(calls, CountedCall):
        return {"train": calls}
    return {"prefill": calls.prefill, "decode": calls.decode}


@pytest.mark.slow
@pytest.mark.parametrize("case", CASES)
def test_the_files_calls_are_the_formulas(made: Cases, case: str) -> None:
    m = made[case]
    read = m.read()
    for batch, length in sizes(38, m.model.max_positions()):
        t = m.time
        expected = named_calls(t.training(batch, length) if t.train else t.inference(batch, length))
        got = named_calls(read.calls(batch, length))
        assert set(got) == set(expected)
        for name, call in expected.items():
            assert call is not None and got[name] is not None
            assert got[name].tokens_per_call == call.tokens_per_call
            assert [len(ops) for ops in got[name].ops] == [len(ops) for ops in call.ops]
            for have, want in zip(totals(got[name]), totals(call), strict=True):
                assert have == pytest.approx(want, rel=WRITTEN), (case, batch, length, name)


@pytest.mark.slow
def test_fp16_runs_the_same_ops_at_its_own_peak(made: Cases) -> None:
    m = made["dense qlora"]
    bf16, fp16 = (m.read(dtype=d).calls(2, 100) for d in ("bf16", "fp16"))
    assert isinstance(bf16, CountedCall) and isinstance(fp16, CountedCall)
    relabelled = [[replace(op, dtype="fp16") if op.dtype == "bf16" else op for op in ops] for ops in bf16.ops]
    assert [list(ops) for ops in fp16.ops] == relabelled
    assert any(op.dtype == "fp16" for ops in fp16.ops for op in ops)


# ----------------------------------------------------------------------------- finding an entry (fast)


def table_of(setups: dict[str, Any]) -> Formulas:
    """A table of two shipped models: one with formulas (a stand-in entry), one the table couldn't predict."""
    return Formulas.of(table_contents(setups), Path("llm_formulas.json"))


def table_contents(setups: dict[str, Any]) -> dict[str, Any]:
    """`table_of`'s contents, as the file holds them."""
    first, second = list(shipped_models())[:2]
    stand_in = {
        "kinds": ["weights", "total"],
        "plan": {"coefficients": [1], "layers": [None], "full": []},
        "embedding_bytes": None,
        "tied": False,
        "pieces": [{"upto": 1024, "one": [], "many": []}],
    }
    contents = {
        "setups": {k: {**asdict(s), "describe": s.describe()} for k, s in setups.items()},
        "versions": {"torch": "2.9.1", "transformers": "4.57.3", "peft": "0.18.0", "benchlib": "0.1.0"},
        "models": [
            {"model": first, "max_positions": 1024, "setups": {"qlora": {"memory": stand_in, "time": {}}}},
            {"model": second, "max_positions": 1024, "setups": {"qlora": {"not_predicted": "why"}}},
        ],
    }
    return json.loads(json.dumps(contents))


def test_a_row_read_from_the_file_is_the_models_and_not_its_entry_in_the_index(tmp_path) -> None:
    """The index ahead of the formulas begins each model's entry as its row does."""
    contents = table_contents(llm_formulas.SETUPS)
    rows = contents.pop("models")
    index = [{"model": row["model"], "max_positions": 1024, "not_predicted": {}} for row in rows]
    path = tmp_path / "llm_formulas.json"
    path.write_text(json.dumps({"table": "llm_formulas", **contents, "index": index, "models": rows}), encoding="utf-8")
    table = Formulas.read(path)
    assert table.header["index"] == index and "models" not in table.header
    assert table.row(rows[0]["model"]) == rows[0]
    assert table.find(rows[0]["model"], make_setup("qlora", grad_checkpointing=True)) is not None


def test_a_setup_finds_the_committed_one_it_differs_from_only_in_size_and_half_precision() -> None:
    setups = llm_formulas.SETUPS
    assert setup_key(setups, make_setup("inference", batch=8, seq_len=4096)) == "inference-bf16"
    assert setup_key(setups, make_setup("inference", dtype="fp16")) == "inference-bf16"
    assert setup_key(setups, make_setup("inference", weights="gptq-int4", dtype="fp16")) == "inference-gptq-int4"
    assert setup_key(setups, make_setup("qlora", grad_checkpointing=True, dtype="fp16", batch=4)) == "qlora"
    assert setup_key(setups, make_setup("train", dtype="fp16", grad_checkpointing=True)) == "train"
    assert setup_key(setups, make_setup("inference", dtype="fp16", kv_cache="fp8")) == "inference-bf16-kv-fp8"
    assert setup_key(setups, make_setup("inference", weights="awq-int4")) == "inference-awq-int4"
    assert setup_key(setups, make_setup("qlora")) == "qlora-no-checkpointing"
    assert setup_key(setups, make_setup("qlora", grad_checkpointing=True, lora_rank=64)) == "qlora-r64"
    attention = make_setup("lora", grad_checkpointing=True, lora_targets=ATTENTION_PROJECTIONS)
    assert setup_key(setups, attention) == "lora-attention"
    gguf_q8_0 = make_setup("inference", weights="gguf-q4_k_m", dtype="fp16", kv_cache="q8_0")
    assert setup_key(setups, gguf_q8_0) == "inference-gguf-q4_k_m", "llama.cpp's cache type is its shape's"
    # Anything else is another setup, traced.
    assert setup_key(setups, make_setup("qlora", grad_checkpointing=True, lora_rank=32)) is None
    assert setup_key(setups, make_setup("lora", grad_checkpointing=True, lora_rank=32)) is None
    assert setup_key(setups, make_setup("lora", grad_checkpointing=True, lora_targets="q_proj,v_proj")) is None
    assert setup_key(setups, make_setup("inference", kv_cache="q8_0")) is None
    assert setup_key(setups, make_setup("inference", weights="fp8", kv_cache="fp8")) is None
    assert setup_key(setups, make_setup("inference", dtype="fp16", kv_cache="bf16")) is None
    assert setup_key(setups, make_setup("train", grad_checkpointing=True)) is None  # fp32 compute


def test_a_gguf_file_with_a_q8_0_cache_is_its_f16_entry_with_the_cache_in_its_bytes() -> None:
    """llama.cpp's cache type changes no op the formulas count, only the KV cache's bytes."""
    table = Formulas.read(llm_formulas.TABLE.path)
    asked = {
        cache: make_setup("inference", weights="gguf-q4_k_m", dtype="fp16", kv_cache=cache)
        for cache in ("fp16", "q8_0")
    }
    f16, q8_0 = (table.find("llama-3.1-8b", setup) for setup in asked.values())
    assert f16 is not None and q8_0 is not None and f16.key == q8_0.key == "inference-gguf-q4_k_m"
    f16_shape, q8_0_shape = f16.llama_cpp_shape(), q8_0.llama_cpp_shape()
    assert f16_shape is not None and q8_0_shape is not None
    assert q8_0_shape.kv_bytes_per_cell == f16_shape.kv_bytes_per_cell * 17 // 32  # 34 bytes per 32 values, not 64
    assert replace(q8_0_shape, kv_bytes_per_cell=f16_shape.kv_bytes_per_cell) == f16_shape
    # Another format's q8_0 cache is no committed setup: traced.
    assert table.find("llama-3.1-8b", make_setup("inference", kv_cache="q8_0")) is None


def test_a_model_finds_its_entry_by_any_of_its_names_unless_the_table_could_not_predict_it() -> None:
    table = table_of(llm_formulas.SETUPS)
    first, second = list(shipped_models().values())[:2]
    assert shipped_name(first.name) == first.name and shipped_name(first.hf_id.upper()) == first.name
    assert shipped_name("./my-config.json") is None
    asked = make_setup("qlora", grad_checkpointing=True, batch=4, seq_len=512)
    found = table.find(first.name, asked)
    assert found is not None and found.key == "qlora" and found.setup == asked
    assert found.model.title == first.title and found.model.max_positions() == 1024
    assert table.find(second.name, asked) is None  # not_predicted
    assert table.find(first.name, make_setup("inference")) is None  # not in this table
    assert table.find("another-model", asked) is None
