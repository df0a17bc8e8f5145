"""The committed "Can I run it?" table: complete, current, and what its pages show from it.

That every committed table matches its inputs' digests is `tests/test_tables.py`'s; this file checks
what only this table has: its rows, its cells re-predicted, and the page.
"""

from __future__ import annotations

import ast
import json
import re
from dataclasses import replace
from pathlib import Path

import pytest
from glossary_text import without_tooltips
from typer.testing import CliRunner

from benchlib import tables
from benchlib.catalog.language_models import resolve_model, shipped_models
from benchlib.catalog.reached_rates import reached_bandwidth, reached_matmul
from benchlib.cli import app
from benchlib.core.cache import cache_folder
from benchlib.predict.engines import ENGINES
from benchlib.predict.llama_cpp import fit_llama_cpp
from benchlib.predict.llm_memory import LLMPredictor, make_setup
from benchlib.predict.llm_speed import predict_llm_speed
from benchlib.predict.memory import gpu_memory
from benchlib.site import can_i_run_it as llm_fit
from benchlib.site import llm_speed
from benchlib.site.llm_speed import hours_per_million_tokens
from benchlib.tables.can_i_run_it import (
    COLUMNS,
    EAGER,
    GGUF,
    INFERENCE,
    LLAMA_CPP,
    NO_SERVED_ENGINE,
    PACKAGES,
    SERVED,
    SERVING_BATCH_CAP,
    SNIPPET_MODEL,
    SNIPPET_SETUP,
    TABLE,
    TABLE_ENGINES,
    TASKS,
    TRAINING_TASKS,
    config_digest,
    engine_digest,
    formulas_to_evaluate,
    predict_table,
    published_digest,
    read_table,
    speed_digest,
)

ROOT = Path(__file__).resolve().parents[1]
REFRESH = "refresh it with `benchlib tables --only can_i_run_it`"


def versions() -> dict[str, str]:
    """The versions this environment would predict the table with."""
    return tables.installed_versions(PACKAGES)


@pytest.fixture(scope="module")
def table():
    return read_table()


ONE_MODEL = "qwen2.5-0.5b"
ONE_MODEL_TABLE = replace(TABLE, compute=lambda on_step: predict_table(cache_folder("fit-llm"), on_step, [ONE_MODEL]))


@pytest.fixture(scope="module")
def one_model_table(tmp_path_factory) -> Path:
    """What `benchlib tables --only can_i_run_it` writes, for one model and its published
    measurements (all of them take minutes), computed now and written to a file of its own."""
    out = tmp_path_factory.mktemp("one-model") / "table.json"
    tables.write(ONE_MODEL_TABLE, tables.compute(ONE_MODEL_TABLE), out)
    return out


def test_the_table_has_every_shipped_model_task_and_gpu(table):
    on_page = [m.name for m in shipped_models().values() if m.on_page]
    assert [row["model"] for row in table["rows"]] == on_page, REFRESH
    for row in table["rows"]:
        assert set(row["cells"]) == {t.key for t in TASKS}, REFRESH
        model = resolve_model(row["model"])
        for task in TASKS:
            cells = row["cells"][task.key]
            assert set(cells) == {c.key for c in COLUMNS}, REFRESH
            if task.predicts(model):
                assert all(isinstance(v, int) and v >= 0 for v in cells.values())
            else:  # a GPTQ mixture of experts: not predicted, in every column
                assert all(v is None for v in cells.values()), (row["model"], task.key)
    assert [t["describe"] for t in table["tasks"]] == [t.setup.describe() for t in TASKS], REFRESH
    assert table["created"] and set(table["versions"]) == {"torch", "transformers", "peft", "benchlib"}


def test_the_table_was_predicted_from_the_configs_and_published_data_shipped_now(table):
    for row in table["rows"]:
        assert row["config_digest"] == config_digest(resolve_model(row["model"])), f"{row['model']} changed; {REFRESH}"
    assert table["published_digest"] == published_digest(), f"published_llm_memory.yaml changed; {REFRESH}"


@pytest.fixture(scope="module")
def formulas():
    return formulas_to_evaluate()


def test_every_cell_is_the_committed_formulas_evaluated(table, formulas):
    """What `benchlib fit` answers from the formulas (and the picker with them), for every model
    and column; llama.cpp's tab is traced (`test_the_table_is_what_benchlib_fit_predicts_now`)."""
    for row in table["rows"]:
        model = resolve_model(row["model"])
        for task in TASKS:
            if task.engine == LLAMA_CPP or not task.predicts(model):
                continue
            found = formulas.find(row["model"], task.setup)
            for column in COLUMNS:
                answer = found.predict(gpu_memory(column.spec), gpus=column.count).largest
                assert row["cells"][task.key][column.key] == answer, (row["model"], task.key, column.key, REFRESH)
            assert row["peaks_at_one"][task.key] == found.at(1, task.setup.seq_len), (row["model"], REFRESH)


@pytest.mark.slow
def test_the_table_is_what_benchlib_fit_predicts_now(table, one_model_table):
    if table["versions"] != versions():
        pytest.skip(f"the table was predicted with {table['versions']}, this environment has {versions()}; {REFRESH}")
    row = next(r for r in table["rows"] if r["model"] == ONE_MODEL)
    (now,) = json.loads(one_model_table.read_text(encoding="utf-8"))["rows"]
    assert now["cells"] == row["cells"] and now["peaks_at_one"] == row["peaks_at_one"], REFRESH
    # And two columns of it traced, as `benchlib fit --trace` asks it: the formulas hold the traces
    # to within 1 % of memory, so the largest context or batch moves by little more.
    model = resolve_model(row["model"])
    for task in TASKS:
        if task.engine == LLAMA_CPP:  # llama.cpp's buffers, as `benchlib fit --engine llama.cpp` adds them
            setup = replace(task.setup, weights=row["gguf_weights"])
            weights = LLMPredictor(model, setup, cache_folder("fit-llm")).breakdown(1)["weights"]
            for column in (COLUMNS[0], COLUMNS[1]):
                fit = fit_llama_cpp(model, setup, gpu_memory(column.spec), weights, column.count)
                assert fit.largest_context == row["cells"][task.key][column.key], REFRESH
            continue
        # The session's cache (tests/conftest.py), where `benchlib fit-table` keeps the same traces:
        # whichever of this test and `benchlib tables` runs second in a session reuses them.
        predictor = LLMPredictor(model, task.setup, cache_folder("fit-llm"))
        for column in (COLUMNS[0], COLUMNS[1]):  # one T4, and two with the layers split
            split = predictor.split(column.count) if column.count > 1 else predictor
            answer = split.predict(gpu_memory(column.spec), verify=False).largest
            assert row["cells"][task.key][column.key] == pytest.approx(answer, rel=0.01, abs=1), (task.key, column.key)


def test_a_4_bit_file_reads_at_least_as_long_a_prompt_as_16_bit_weights_on_every_gpu(table):
    formats = [t for t in TASKS if t.setup.mode == "inference" and t is not INFERENCE]
    assert {t.setup.weights for t in formats} == {"gptq-int4", "gguf-q4_k_m"}
    for row in table["rows"]:
        for task in formats:
            for key, tokens in row["cells"][task.key].items():
                assert tokens is None or tokens >= row["cells"][INFERENCE.key][key], (row["model"], task.key, key)


def test_the_gptq_tab_says_why_a_mixture_of_experts_is_not_predicted(table):
    html = llm_fit.fit_table("inference-gptq-int4")
    moe = [r for r in table["rows"] if resolve_model(r["model"]).experts]
    assert moe, "the table has a mixture of experts to check"
    for row in moe:
        for column in COLUMNS:
            attributes, contents = _cell(html, "inference-gptq-int4", row["model"], column.key)
            assert contents.strip() == "–" and "not predicted" in attributes
    legend = without_tooltips(html[html.index("A dash: not predicted") :])
    assert all(row["title"] in legend for row in moe) and "MoE Kernel Unsupported" in legend
    assert "Memory only" in html and "tok/s" not in html


def test_every_cell_that_fits_the_inference_context_has_a_decode_rate_per_engine(table):
    for row in table["rows"]:
        assert set(row["decode_tokens_per_s"]) == set(TABLE_ENGINES), REFRESH
        for engine, rates in row["decode_tokens_per_s"].items():
            fits = row["cells"][(GGUF if engine == LLAMA_CPP else INFERENCE).key]
            assert set(rates) == {c.key for c in COLUMNS}, REFRESH
            for key, rate in rates.items():
                runs = fits[key] >= INFERENCE.setup.seq_len and not (engine == SERVED and key in NO_SERVED_ENGINE)
                assert (rate is not None) == runs, (row["model"], engine, key)
                assert rate is None or rate > 0
        for key, serving in row["serving"].items():
            assert (serving is not None) == (row["decode_tokens_per_s"][SERVED][key] is not None), (row["model"], key)
            if serving is not None:
                assert serving["batch"] == max(1, min(serving["max_concurrency"], SERVING_BATCH_CAP))
                # Many sequences at once generate more in all than one does.
                assert serving["tokens_per_s"] >= row["decode_tokens_per_s"][SERVED][key] * 0.99
    assert table["speed"]["seq_len"] == INFERENCE.setup.seq_len and table["speed"]["batch"] == INFERENCE.setup.batch
    assert table["speed"]["engine_digest"] == engine_digest(), f"an engine's constants changed; {REFRESH}"


def test_every_training_cell_that_fits_has_a_training_rate(table):
    for row in table["rows"]:
        for task in TRAINING_TASKS:
            for column in COLUMNS:
                rate = row["training_tokens_per_s"][task.key][column.key]
                fits = row["cells"][task.key][column.key] > 0 and column.count == 1
                assert (rate is not None) == fits, (row["model"], task.key, column.key)
                assert rate is None or rate > 0


def _formula_speed(formulas, name: str, column, setup, engine: str, batch: int | None = None):
    """`benchlib predict` from the committed formulas (the table's source) at ``batch`` sequences."""
    found = formulas.find(name, setup)
    calls = found.calls(batch)
    return predict_llm_speed(found.model, column.spec, setup, ENGINES[engine], concurrency=False, counted=calls)


def test_the_speeds_are_what_benchlib_predict_answers_from_the_formulas(table, formulas):
    """Every model's decode and serving rates on the T4 (fp16) and the H100 (bf16), and its training
    rates at each cell's own batch, as `benchlib predict` gives them from the committed formulas."""
    assert table["speed"]["rates_digest"] == speed_digest(), (
        f"a column GPU's specs or speed constants changed; {REFRESH}"
    )
    columns = (COLUMNS[0], next(c for c in COLUMNS if c.key == "h100"))
    for row in table["rows"]:
        name = row["model"]
        for column in columns:
            dtype = table["speed"]["dtypes"][column.key]
            if row["decode_tokens_per_s"][EAGER][column.key] is not None:
                one = make_setup("inference", dtype=dtype, seq_len=INFERENCE.setup.seq_len)
                for engine in (EAGER, SERVED):
                    expected = _formula_speed(formulas, name, column, one, engine).decode_tokens_per_s
                    assert row["decode_tokens_per_s"][engine][column.key] == pytest.approx(expected, rel=1e-9), name
                serving = row["serving"][column.key]
                assert serving["max_concurrency"] == formulas.find(name, one).concurrency(column.spec).sequences
                many = replace(one, batch=serving["batch"])
                served = _formula_speed(formulas, name, column, many, SERVED, serving["batch"])
                assert serving["tokens_per_s"] == pytest.approx(served.decode_tokens_per_s, rel=1e-9), name
            for task in TRAINING_TASKS:
                batch = row["cells"][task.key][column.key]
                if not batch:
                    continue
                # Full fine-tuning on a T4 holds its weights (and everything else in bf16) in fp16.
                half = {f: dtype for f in ("weights", "kv_cache") if getattr(task.setup, f) == "bf16"}
                setup = replace(task.setup, dtype=dtype, batch=batch, **half)
                step = _formula_speed(formulas, name, column, setup, EAGER, batch).train
                rate = batch * task.setup.seq_len / step.seconds
                assert row["training_tokens_per_s"][task.key][column.key] == pytest.approx(rate, rel=1e-9), name


@pytest.mark.slow
def test_the_speeds_are_within_2_percent_of_traced_counts(table):
    """One model's decode, serving and training rates against `benchlib predict --trace`: the
    formulas hold a call's time to 2 % of a full count's."""
    if table["versions"] != versions():
        pytest.skip(f"the table was predicted with {table['versions']}, this environment has {versions()}; {REFRESH}")
    row = next(r for r in table["rows"] if r["model"] == ONE_MODEL)
    model = resolve_model(row["model"])
    for column in (COLUMNS[0], next(c for c in COLUMNS if c.key == "h100")):  # fp16 on the T4, bf16 on the H100
        dtype = table["speed"]["dtypes"][column.key]
        assert dtype == ("fp16" if column.key == "t4" else "bf16")
        one = make_setup("inference", dtype=dtype, seq_len=INFERENCE.setup.seq_len)
        for engine in (EAGER, SERVED):
            predicted = predict_llm_speed(model, column.spec, one, ENGINES[engine], concurrency=engine == SERVED)
            assert row["decode_tokens_per_s"][engine][column.key] == pytest.approx(
                predicted.decode_tokens_per_s, rel=0.02
            )
        gguf = replace(GGUF.setup, weights=row["gguf_weights"])
        in_llama_cpp = predict_llm_speed(model, column.spec, gguf, ENGINES[LLAMA_CPP], concurrency=False)
        assert row["decode_tokens_per_s"][LLAMA_CPP][column.key] == pytest.approx(
            in_llama_cpp.decode_tokens_per_s, rel=1e-9
        ), REFRESH
        serving = row["serving"][column.key]
        assert serving["max_concurrency"] == pytest.approx(predicted.concurrency.sequences, rel=0.01)
        many = make_setup("inference", dtype=dtype, batch=serving["batch"], seq_len=INFERENCE.setup.seq_len)
        served = predict_llm_speed(model, column.spec, many, ENGINES[SERVED], concurrency=False)
        assert serving["tokens_per_s"] == pytest.approx(served.decode_tokens_per_s, rel=0.02)
        task = next(t for t in TRAINING_TASKS if t.key == "qlora")
        batch = row["cells"][task.key][column.key]
        setup = replace(task.setup, dtype=dtype, batch=batch)
        step = predict_llm_speed(model, column.spec, setup, ENGINES[EAGER]).train
        traced = batch * task.setup.seq_len / step.seconds
        assert row["training_tokens_per_s"][task.key][column.key] == pytest.approx(traced, rel=0.02), column.key
    # The pair runs its halves in turn under generate(); vLLM's tensor parallelism is not predicted.
    assert row["decode_tokens_per_s"][EAGER]["t4x2"] == row["decode_tokens_per_s"][EAGER]["t4"]
    assert row["decode_tokens_per_s"][SERVED]["t4x2"] is None and row["serving"]["t4x2"] is None


def _reached(column) -> tuple[float, float]:
    """The most a GPU was reported to reach: bytes/s and FLOP/s (its spec peaks where nothing is reported)."""
    spec = column.spec
    bandwidth = reached_bandwidth(spec.name)
    matmul = reached_matmul(spec.name)
    peak = max(f.value for f in (spec.fp16_tensor_tflops, spec.bf16_tensor_tflops, spec.fp16_tflops) if f is not None)
    return (
        (bandwidth.value if bandwidth else spec.bandwidth_gbps.value) * 1e9,
        max(matmul.value if matmul else 0.0, peak) * 1e12,
    )


def test_no_cell_is_faster_than_its_gpu_can_reach(table):
    """Every predicted speed of the committed table, times what one of its tokens moves and computes,
    is within the GPU's reached bandwidth and matmul rate (its spec peaks where none is reported)."""
    checked = 0
    for row in table["rows"]:
        work = row["work"]
        cells = [
            (rate, work["decode"][engine][key], key)
            for engine, rates in row["decode_tokens_per_s"].items()
            for key, rate in rates.items()
        ]
        cells += [(s["tokens_per_s"], work["serving"][key], key) for key, s in row["serving"].items() if s]
        cells += [
            (rate, work["training"][task][key], key)
            for task, rates in row["training_tokens_per_s"].items()
            for key, rate in rates.items()
        ]
        for rate, per_token, key in cells:
            if rate is None:
                continue
            bandwidth, flops = _reached(next(c for c in COLUMNS if c.key == key))
            assert rate * per_token["bytes_per_token"] <= bandwidth * 1.0001, (row["model"], key, rate)
            assert rate * per_token["flops_per_token"] <= flops * 1.0001, (row["model"], key, rate)
            checked += 1
    assert checked > 1000, "the bound test checked the table's cells"


def test_bigger_gpus_never_fit_less(table):
    order = sorted((c for c in COLUMNS if c.count == 1), key=lambda c: gpu_memory(c.spec).tensor_budget)
    pair = next(c for c in COLUMNS if c.count > 1)
    single = next(c for c in COLUMNS if c.count == 1 and c.gpu == pair.gpu)
    for row in table["rows"]:
        for task, cells in row["cells"].items():
            if None in cells.values():  # not predicted (a GPTQ mixture of experts): nothing to order
                assert set(cells.values()) == {None}
                continue
            values = [cells[c.key] for c in order]
            assert values == sorted(values), (row["model"], task, values)
            assert cells[pair.key] >= cells[single.key], (row["model"], task, "two GPUs fit less than one")


def test_the_qlora_snippet_is_the_setup_the_page_predicts():
    tree = ast.parse((ROOT / "snippets" / "qlora_finetune.py").read_text(encoding="utf-8"))
    constants: dict[str, object] = {}
    for node in tree.body:
        if isinstance(node, ast.Assign) and isinstance(node.targets[0], (ast.Name, ast.Tuple)):
            names = node.targets[0].elts if isinstance(node.targets[0], ast.Tuple) else [node.targets[0]]
            values = node.value.elts if isinstance(node.value, ast.Tuple) else [node.value]
            for name, value in zip(names, values):
                if isinstance(name, ast.Name) and isinstance(value, ast.Constant):
                    constants[name.id] = value.value
    assert constants["MODEL_ID"] == shipped_models()[SNIPPET_MODEL].hf_id
    assert (constants["BATCH_SIZE"], constants["SEQ_LEN"], constants["LORA_RANK"]) == (
        SNIPPET_SETUP.batch,
        SNIPPET_SETUP.seq_len,
        SNIPPET_SETUP.lora_rank,
    )
    source = ast.unparse(tree)
    assert "use_gradient_checkpointing=True" in source and "target_modules='all-linear'" in source


def test_the_page_tables_show_every_model_and_gpu(table):
    html = llm_fit.fit_table("qlora")
    for row in table["rows"]:
        assert f'id="qlora-{row["model"]}"' in html and row["title"] in html
    assert html.count('data-gpu="t4x2"') == len(table["rows"])
    assert "✗: does not fit" in html


def _cell(html: str, task: str, model: str, key: str) -> tuple[str, str]:
    """The attributes and the contents of one cell of a task's table."""
    return re.search(rf'<tr id="{task}-{re.escape(model)}".*?<td data-gpu="{key}"([^>]*)>(.*?)</td>', html).group(1, 2)


def _shown(text: str) -> float:
    return float(text.replace(",", ""))


def test_the_inference_table_shows_both_engines_decode_speed_where_the_model_fits(table):
    html = llm_fit.fit_table("inference")
    for row in table["rows"]:
        for key, eager in row["decode_tokens_per_s"][EAGER].items():
            served = row["decode_tokens_per_s"][SERVED][key]
            attributes, contents = _cell(html, "inference", row["model"], key)
            if eager is None:
                assert "tok/s" not in contents and "data-tokens-per-s" not in attributes
                continue
            shown = re.search(r"([\d,.]+) / ([\d,.]+|–) tok/s", contents)
            assert _shown(shown.group(1)) == pytest.approx(eager, rel=0.05) and "(predicted)" in attributes
            if served is None:
                assert shown.group(2) == "–"
            else:
                assert _shown(shown.group(2)) == pytest.approx(served, rel=0.05)
    legend = re.search(r"<strong>tok/s</strong>(.*?)</p>", html).group(1)
    assert "<strong>predicted</strong> decode speed" in legend and "<code>model.generate()</code>" in legend
    assert "served engine such as vLLM" in legend
    for engine in (EAGER, SERVED):
        assert llm_speed.error_text(engine, "decode") in legend
    assert 'href="../../benchmarks/methodology/#how-speed-is-predicted"' in legend
    for why in NO_SERVED_ENGINE.values():
        assert why in legend
    assert "tok/s" in llm_fit.fit_table("qlora") and "generate()" not in llm_fit.fit_table("qlora")


def test_the_training_tables_show_tokens_per_second_and_hours_per_million_next_to_each_batch(table):
    for task in TRAINING_TASKS:
        html = llm_fit.fit_table(task.key)
        for row in table["rows"]:
            for key, rate in row["training_tokens_per_s"][task.key].items():
                attributes, contents = _cell(html, task.key, row["model"], key)
                if rate is None:
                    assert "tok/s" not in contents
                    continue
                assert contents.startswith(str(row["cells"][task.key][key]))
                shown = re.search(r"([\d,.]+) tok/s<br>([\d,.]+) h/M", contents)
                assert _shown(shown.group(1)) == pytest.approx(rate, rel=0.05)
                assert _shown(shown.group(2)) == pytest.approx(hours_per_million_tokens(rate), rel=0.05)
        legend = re.search(r"<strong>tok/s</strong> and <strong>h/M</strong>(.*?)</p>", html).group(1)
        assert "hours per million training tokens" in legend
        assert llm_speed.error_text(EAGER, "training") in legend


def test_the_llama_cpp_tab_names_each_file_and_shows_its_decode_speed(table):
    html = llm_fit.fit_table(GGUF.key)
    for row in table["rows"]:
        for key, rate in row["decode_tokens_per_s"][LLAMA_CPP].items():
            attributes, contents = _cell(html, GGUF.key, row["model"], key)
            if row["cells"][GGUF.key][key]:
                assert ("MXFP4" if row["gguf_weights"] == "gguf-mxfp4" else "Q4_K_M") in attributes
            if rate is None:
                assert "tok/s" not in contents
            else:
                assert _shown(re.search(r"([\d,.]+) tok/s", contents).group(1)) == pytest.approx(rate, rel=0.05)
    legend = html[html.index("In llama.cpp") :]
    assert (
        "<code>-ngl 99</code>" in legend
        and "gpt-oss-20b" in legend
        and llm_speed.error_text(LLAMA_CPP, "decode") in legend
    )
    # OpenAI ships gpt-oss-20b to run in 16 GB: in llama.cpp it reads its whole context on a T4.
    gpt_oss = next(r for r in table["rows"] if r["model"] == "gpt-oss-20b")
    assert gpt_oss["gguf_weights"] == "gguf-mxfp4" and gpt_oss["cells"][GGUF.key]["t4"] == gpt_oss["max_positions"]
    assert _cell(html, GGUF.key, "gpt-oss-20b", "t4")[1].startswith("128K*")


def test_a_speed_nobody_checked_says_so_and_a_checked_one_gives_its_held_out_error(monkeypatch):
    monkeypatch.setattr(llm_speed, "held_out_error", lambda engine, kind: None)
    assert llm_speed.error_text(EAGER, "training") == "not yet checked against a published measurement"
    summary = {"held_out_median_abs_error": 0.184, "held_out_rows": 37}
    monkeypatch.setattr(llm_speed, "held_out_error", lambda engine, kind: summary)
    assert llm_speed.error_text(SERVED, "decode") == (
        "a median error of 18% on 37 published measurements held out of the fit"
    )
    assert "a median error of 18%" in llm_fit.fit_table("inference")


def test_the_published_comparison_shows_each_row_with_its_source(table):
    html = llm_fit.published_comparison()
    assert f"{table['median_abs_error']:.1%}" in html
    compared = [r for r in table["published"] if not r["left_out"]]
    assert html.count("<tr><td>") == len(compared) >= 10
    for r in table["published"]:
        assert r["url"].startswith("https://") and r["measure"] and r["quote"]


def test_platform_pages_name_the_largest_model_and_link_the_table():
    html = llm_fit.on_platform(["t4x2"], "platforms/kaggle.md")
    assert "On T4 ×2" in html and "the layers split over both" in html and 'href="../../gpus/can-i-run-it/"' in html
    # Each task is named whole: "llama.cpp, GGUF Q4_K_M (gpt-oss: its own MXFP4)", not cut at its first colon.
    assert "(gpt-oss: its own MXFP4): up to" in html
    for item in re.findall(r"<li>([^<]*): (?:up to|none)", html):
        assert item.count("(") == item.count(")"), item


@pytest.mark.slow
def test_the_table_for_one_model_is_written_whole_for_the_site_to_read(one_model_table):
    written = json.loads(one_model_table.read_text(encoding="utf-8"))
    assert [r["model"] for r in written["rows"]] == [ONE_MODEL]
    assert {r["model"] for r in written["published"]} == {"Qwen/Qwen2.5-0.5B-Instruct"}
    assert tables.read("can_i_run_it", one_model_table)["rows"] == written["rows"]
    assert "median error of" in " ".join(TABLE.summary(written).split())
    assert [p.name for p in one_model_table.parent.iterdir()] == ["table.json"]  # no temporary file left behind


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--only", "llama-9b"], "--only: llama-9b is not a table"),
        (["--out", "/nonexistent/folder"], "the folder /nonexistent/folder does not exist"),
    ],
)
def test_benchlib_tables_rejects_bad_input_by_name(args, message):
    result = CliRunner().invoke(app, ["tables", *args])
    assert result.exit_code == 2
    assert message in " ".join(result.output.split())


def test_benchlib_tables_computes_the_formulas_before_the_table_evaluated_from_them():
    chosen = tables.in_order(tables.all_tables()[name] for name in (TABLE.name, "llm_formulas"))
    assert [t.name for t in chosen] == ["llm_formulas", TABLE.name]
    assert "table/llm_formulas.json" in TABLE.inputs()


def test_the_table_is_not_computed_from_stale_formulas(monkeypatch, tmp_path):
    """Cells from formulas that no longer match their inputs would be old answers: the command
    says which file, why, and what to run, and writes nothing."""
    real = tables.stale_reasons
    monkeypatch.setattr(
        tables,
        "stale_reasons",
        lambda table, path=None: (
            ["code/benchlib/predict/count.py changed"] if table.name == "llm_formulas" else real(table, path)
        ),
    )
    result = CliRunner().invoke(app, ["tables", "--only", TABLE.name, "--out", str(tmp_path)])
    said = " ".join(result.output.split())
    assert result.exit_code == 1 and "Traceback" not in said
    assert "llm_formulas.json" in said and "count.py changed" in said
    assert "benchlib tables --only llm_formulas" in said
    assert not list(tmp_path.iterdir())


def test_a_table_written_with_out_is_the_one_the_tables_after_it_read(monkeypatch, tmp_path):
    """`benchlib tables --out DIR` writes llm_formulas to DIR, committed ones untouched: can_i_run_it,
    computed next, is evaluated from (and records the digest of) the one in DIR, not a stale one."""
    committed = tables.all_tables()["llm_formulas"].path
    copy = tmp_path / committed.name
    copy.write_text(committed.read_text(encoding="utf-8").replace('"inputs":{', '"inputs":{"new":"x",', 1))
    real = tables.stale_reasons
    monkeypatch.setattr(
        tables,
        "stale_reasons",
        lambda table, path=None: [] if path == copy else real(table, path),
    )
    monkeypatch.setattr(tables, "_WRITTEN", {})
    before = TABLE.inputs()["table/llm_formulas.json"]
    tables.wrote("llm_formulas", copy)
    assert formulas_to_evaluate().path == copy
    assert TABLE.inputs()["table/llm_formulas.json"] != before
    tables.forget_written()
    assert formulas_to_evaluate().path == committed and TABLE.inputs()["table/llm_formulas.json"] == before
