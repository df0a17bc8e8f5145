"""The buying guide's blocks render from data and results, escape what they show, and the page types no numbers."""

from __future__ import annotations

import json
import re
import statistics
from datetime import date, datetime, timezone
from html import unescape
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from site_samples import measurement, results_file

from benchlib import tables
from benchlib.catalog.gpus import find_accelerator, find_gpu
from benchlib.core.paths import reported_dir
from benchlib.measure.max_batch import SEARCH_SUITE, SearchResult, TrialOutcome, TrialRequest, write_search
from benchlib.predict.memory import Predictor, gpu_memory, memory_limit
from benchlib.results.load import load_results
from benchlib.results.schema import (
    Accelerators,
    GPUInfo,
    Machine,
    Metric,
    Provenance,
    Software,
)
from benchlib.results.store import new_results, write_results
from benchlib.site import buying_guide as blocks
from benchlib.site.sources import MissingTableStopsTheBuild
from benchlib.tables import buying_guide as table
from benchlib.tables import searched
from benchlib.tables.speed_check import speed_check

ROOT = Path(__file__).resolve().parents[1]
PAGE = ROOT / "docs" / "gpus" / "buying-guide.md"
HOSTILE = "<script>window.__xss=1</script>"
SMALL_GPUS = ("T4", "V100 SXM2 16GB", "V100 PCIe 16GB", "A100 40GB SXM")


@pytest.fixture(scope="module")
def frame():
    """Predictions as the blocks receive them; the batch sizes are test inputs, distinct per cell."""
    rows = [
        {
            "model": model,
            "dtype": dtype,
            "gpu": gpu,
            "usable_bytes": gpu_memory(find_gpu(gpu)).usable_bytes,
            "max_batch": 0 if (model, gpu) == ("gpt2_small", "T4") and dtype == "fp32" else 1000 * i + 10 * j + k,
        }
        for i, model in enumerate(table.MATRIX_MODELS)
        for j, dtype in enumerate(table.MATRIX_DTYPES)
        for k, gpu in enumerate(SMALL_GPUS)
    ]
    return pd.DataFrame(rows)


@pytest.mark.slow  # over 3 s here: kept out of the fast command (README command 3)
def test_predictions_agree_with_a_verified_prediction_per_gpu(tmp_path):
    rows = table.predictions(
        models=("unet",), dtypes=("fp16",), gpus=("T4", "A100 40GB SXM"), size="small", cache=tmp_path
    )
    assert len(rows) == 2
    for row in rows:
        verified = Predictor("unet", dtype="fp16", size="small", foreach=True).predict(gpu_memory(find_gpu(row["gpu"])))
        assert row["max_batch"] == verified.max_batch > 0


@pytest.mark.slow
def test_the_committed_predictions_are_what_benchlib_fit_predicts_now():
    """One cell of the committed table, traced again (the smallest model); the digests are test_tables.py's."""
    committed = tables.read("buying_guide")
    if committed["versions"] != tables.installed_versions(table.PACKAGES):
        pytest.skip(f"the table was predicted with {committed['versions']}; refresh it with `benchlib tables`")
    gpus = ("T4", "H100 SXM")
    rows = {(r["gpu"], r["dtype"]): r["max_batch"] for r in committed["predictions"] if r["model"] == "unet"}
    for row in table.predictions(models=("unet",), gpus=gpus):
        assert rows[row["gpu"], row["dtype"]] == row["max_batch"], (
            "refresh it with `benchlib tables --only buying_guide`"
        )


def test_the_matrix_covers_every_model_dtype_and_gpu_with_memory():
    committed = tables.read("buying_guide")
    cells = {(r["model"], r["dtype"], r["gpu"]) for r in committed["predictions"]}
    expected = {(m, d, g) for m in table.MATRIX_MODELS for d in table.MATRIX_DTYPES for g in table.gpu_names()}
    assert cells == expected, "refresh it with `benchlib tables --only buying_guide`"
    assert blocks.gpu_names() == table.gpu_names()
    assert [m["name"] for m in committed["models"]] == list(table.MATRIX_MODELS)


def chart_spec(html: str) -> dict:
    return json.loads(unescape(re.search(r'class="bench-chart__view"[^>]*data-spec="([^"]*)"', html).group(1)))


def test_matrix_shows_every_prediction_in_its_cell(frame):
    html = blocks.what_fits(frame)
    for _, row in frame.iterrows():
        if row["gpu"] == "V100 SXM2 16GB":
            continue  # shares the row of the PCIe card, which has the same usable memory
        cell = re.search(rf'<td data-model="{row["model"]}" data-gpu="{re.escape(row["gpu"])}">(.*?)</td>', html).group(
            1
        )
        shown = re.search(rf'<span data-dtype="{row["dtype"]}"[^>]*>([^<]*)</span>', cell).group(1)
        assert shown == ("✗" if row["max_batch"] == 0 else f"{row['max_batch']:,}")


def test_gpus_with_the_same_usable_memory_share_a_row(frame):
    html = blocks.what_fits(frame)
    assert 'data-gpus="V100 PCIe 16GB, V100 SXM2 16GB"' in html
    assert html.count("<tr data-gpus=") == 3


def test_matrix_marks_unverified_and_estimated_memory_and_states_its_assumptions(frame):
    html = blocks.what_fits(frame)
    t4_row = re.search(r'<tr data-gpus="T4">.*?</tr>', html).group(0)
    status = find_accelerator("T4").smi_memory_mib.status
    assert (status in t4_row) if status != "verified" else "fg-badge" not in t4_row
    v100_row = re.search(r'<tr data-gpus="[^"]*V100 PCIe 16GB[^"]*">.*?</tr>', html).group(0)
    assert "estimated by rule" in v100_row
    assert "issues/109888" in html


def _measured_overheads() -> list[float]:
    """Reserved over allocated at each committed GPU search's largest batch, read from the files."""
    overheads = []
    for path in sorted((ROOT / "results").glob("*/*.json")):
        records = json.loads(path.read_text())["measurements"]
        for found in (r for r in records if r["metric"]["name"] == "max_batch" and r["status"] == "ok"):
            best = [
                r
                for r in records
                if r["metric"]["name"] == "peak_memory"
                and r["params"].get("batch") == found["value"]
                and r["params"].get("model") == found["params"]["model"]
                and r["dtype"] == found["dtype"]
                and r["params"].get("max_memory_reserved_bytes")
            ]
            overheads += [r["params"]["max_memory_reserved_bytes"] / r["value"] - 1 for r in best]
    return overheads


def test_the_allocator_allowance_is_shown_beside_the_overhead_gpus_measured(frame, tmp_path, monkeypatch):
    overheads = _measured_overheads()
    assert overheads, "the committed results hold GPU searches (the H200 campaign)"
    html = unescape(blocks.what_fits(frame))
    assert f"reserved {statistics.median(overheads):.0%} more than its tensors took" in html
    assert f"from {min(overheads):.0%} to {max(overheads):.0%}" in html
    assert f"largest batch of {len(overheads)} searches" in html
    monkeypatch.setenv("BENCHLIB_RESULTS_DIR", str(tmp_path / "results"))
    monkeypatch.setenv("MKDOCS_CONFIG_DIR", str(tmp_path))
    assert "not yet checked against a GPU run" in blocks.what_fits(frame)


def test_a_model_that_does_not_fit_is_marked(frame):
    none_fit = frame.assign(max_batch=0)
    cells = re.findall(r'<span data-dtype="fp\d+"[^>]*>([^<]*)</span>', blocks.what_fits(none_fit))
    assert cells and set(cells) == {"✗"}


def test_recommendation_tables_use_the_predictions_and_dated_prices(frame):
    free = blocks.free_tiers(frame)
    t4 = frame[(frame["gpu"] == "T4") & (frame["dtype"] == "fp16")].set_index("model")["max_batch"]
    for model, batch in t4.items():
        assert f'<td data-model="{model}">{batch:,}</td>' in free
    assert "Colab" in free and "Kaggle" in free
    rent = blocks.rent_table(frame)
    cheapest_t4 = find_accelerator("T4").hourly_prices()[0]
    assert cheapest_t4.provider in rent and cheapest_t4.as_of in rent


@pytest.mark.slow
def test_lambda_throughput_figure_has_chart_fallback_table_and_source():
    html = blocks.resnet50_throughput()
    reported = load_results(sorted(reported_dir().glob("lambda-dlbench-*.json")))
    assert '<figure class="bench-chart"' in html and "<svg" in html
    spec = chart_spec(html)
    assert spec["$schema"].startswith("https://vega.github.io/schema/vega-lite/")
    for name in set(reported["device_name"]):
        assert name in html
    assert reported["source_url"].iloc[0] in html and "Reported" in html


def test_price_performance_divides_reported_throughput_by_each_dated_price():
    html = blocks.price_performance()
    reported = load_results(sorted(reported_dir().glob("lambda-dlbench-*.json")))
    row = reported[(reported["device_name"] == "A10") & (reported["dtype"] == "fp16")].iloc[0]
    price = find_accelerator("A10").hourly_prices()[0]
    assert f"{row['value'] * 3600 / price.usd_per_hour:,.0f}" in html
    assert price.as_of in html


def test_bandwidth_chart_draws_unverified_peaks_hollow_and_lists_them_with_their_badge():
    html = blocks.bandwidth_vs_compute()
    spec = chart_spec(html)
    plotted = {d["GPU"]: d for d in spec["datasets"][next(iter(spec["datasets"]))]}
    # The cards the guide prices are on it, their derived tensor peaks drawn hollow.
    for name in ("A10G", "GeForce RTX 4090", "GeForce RTX 5090"):
        gpu = find_accelerator(name)
        assert gpu.fp16_tensor_tflops.status == "unverified" and plotted[name]["unverified"], name
        row = re.search(rf"<tr><td>{re.escape(name)}</td>(.*?)</tr>", html).group(1)
        fp16_cell = re.findall(r"<td>(.*?)</td>", row)[1]
        assert fp16_cell.startswith(f"{gpu.fp16_tensor_tflops.value:,.4g}<br>") and "fg-badge--unverified" in fp16_cell
    assert not plotted["H100 SXM"]["unverified"]
    assert "hollow point" in html


def test_lambda_2020_names_exactly_the_gpus_that_fit_every_model():
    html = blocks.reported_largest_batches()
    frame = load_results(sorted(reported_dir().glob("lambda-2020-*.json")))
    frame = frame[frame["workload"] == "max_batch"]
    fits_all = [g for g, rows in frame.groupby("device_name") if (rows["status"] == "ok").all()]
    summary = re.search(r"only (.*?) could train every model", html).group(1)
    assert sorted(summary.split(", ")) == sorted(fits_all)
    assert "https://lambdalabs.com/blog/choosing-a-gpu-for-deep-learning" in html


def test_lambda_2020_shows_a_dated_price_for_every_gpu():
    html = blocks.reported_largest_batches()
    frame = load_results(sorted(reported_dir().glob("lambda-2020-*.json")))
    gpus = set(frame["device_name"])
    assert {"GeForce GTX 1080 Ti", "GeForce RTX 2070", "GeForce RTX 2080"} <= gpus  # once without a spec entry
    for gpu in gpus:
        price = re.search(rf"<tr><td>{re.escape(gpu)}</td><td>\d+ GB</td><td>(.*?)</td>", html).group(1)
        assert re.match(r"\$[\d,]+<br>", price), gpu
        assert "2020-02" in price and "lambdalabs.com" in price


def test_advice_shows_each_claim_with_source_date_and_status():
    html = blocks.advice_history()
    assert html.count("<li>") >= 6
    assert "timdettmers.com" in html and "2023-01-30" in html
    assert "fg-badge--unverified" in html


def test_reported_strings_are_escaped(tmp_path, monkeypatch):
    machine = Machine(
        id="reported-hostile",
        label=HOSTILE,
        accelerators=Accelerators(nvidia=[GPUInfo(index=0, name=HOSTILE, source="reported")]),
    )
    images = Metric(name="throughput", unit="images/s", higher_is_better=True)
    params = {"model": "resnet50", "precision": "AMP", "batch": 1}
    record = measurement("training_throughput", images, 10.0, device_name=HOSTILE, dtype="fp16", params=params)
    provenance = Provenance(
        kind="reported", source_url="https://example.org/?a=<b>", as_of=date(2020, 1, 1), context=HOSTILE
    )
    results = results_file(
        machine,
        [record],
        run_id="x",
        created=datetime(2026, 1, 1, tzinfo=timezone.utc),
        methodology_version="reported",
        complete=True,
        provenance=provenance,
    )
    write_results(results, tmp_path / "reported" / "lambda-dlbench-hostile.json")
    monkeypatch.setenv("BENCHLIB_REPORTED_DIR", str(tmp_path / "reported"))
    monkeypatch.setenv("BENCHLIB_RESULTS_DIR", str(tmp_path / "results"))
    # The speed check `benchlib tables` computes for this reported folder (the site only reads one).
    monkeypatch.setattr(blocks.speed, "checked", lambda: blocks.speed.from_table(speed_check(tmp_path / "reported")))
    html = blocks.resnet50_throughput()
    assert "<script>window" not in html
    assert "&lt;script&gt;window.__xss=1&lt;/script&gt;" in html


def write_a_search(
    results: Path, base: TrialRequest, trials: list[TrialOutcome], start: int, result: SearchResult, **kw: str
) -> None:
    """A search on a test CPU from batch ``start``, written into ``results`` as the runner writes one."""
    machine = Machine(id="local-test", label="local · Test CPU", software=Software(python="3.11", benchlib="0.1.0"))
    run = new_results(machine, SEARCH_SUITE)
    write_search(results / "local-test" / "run.json", run, base, trials, start=start, limit=1000, result=result, **kw)


def _predict_searches_of_the_results_folder(monkeypatch: pytest.MonkeyPatch) -> None:
    """What `benchlib tables --only searched` would commit for the results folder, given to the blocks."""
    rows = searched.compute(lambda step: None)["searches"]
    monkeypatch.setattr(blocks, "_searched_table", lambda: {row["key"]: row for row in rows})


def test_measured_max_batch_runs_appear_next_to_their_prediction(tmp_path, monkeypatch):
    monkeypatch.setenv("BENCHLIB_RESULTS_DIR", str(tmp_path / "results"))
    monkeypatch.setenv("MKDOCS_CONFIG_DIR", str(tmp_path))
    assert "No measured largest batches yet" in blocks.measured_vs_predicted()
    base = TrialRequest(model="unet", batch=1, size="small", device="cpu", steps=1, memory_limit=16 * 1024**2)
    trials = [
        TrialOutcome(batch=b, status="ok" if b <= 40 else "oom", peak_bytes=b * 300_000 if b <= 40 else None)
        for b in (32, 64, 48, 40, 44, 42, 41)
    ]
    write_a_search(tmp_path / "results", base, trials, 32, SearchResult(trials, 40, 41, "oom"))
    # A search the committed table doesn't hold stops the build: the site predicts nothing.
    with pytest.raises(MissingTableStopsTheBuild, match=r"searched\.json has no prediction for the search of unet"):
        blocks.measured_vs_predicted()
    _predict_searches_of_the_results_folder(monkeypatch)
    html = blocks.measured_vs_predicted()
    predicted = Predictor("unet", size="small", foreach=None).predict(memory_limit(16 * 1024**2)).max_batch
    assert "<td>40</td>" in html and f"<td>{predicted:,}</td>" in html and "capped at 16.0 MiB" in html
    assert f"<td>{predicted / 40 - 1:+.0%}</td>".replace("-", "−") in html  # predicted ÷ measured − 1


def test_a_language_model_search_appears_next_to_fits_prediction(tmp_path, monkeypatch):
    """`benchlib campaign` writes llm_max_batch searches; the table shows them as it shows max-batch runs."""
    from benchlib.derive.searched import fit_prediction

    monkeypatch.setenv("BENCHLIB_RESULTS_DIR", str(tmp_path / "results"))
    monkeypatch.setenv("MKDOCS_CONFIG_DIR", str(tmp_path))
    base = TrialRequest(
        model="benchlib.models.llm_step:tiny_llama", batch=1, device="cpu", memory_limit=16 * 1024**2, seq_len=32
    )
    trials = [
        TrialOutcome(batch=b, status="ok" if b <= 18 else "oom", peak_bytes=b * 800_000 if b <= 18 else None)
        for b in (20, 10, 15, 18, 19)
    ]
    write_a_search(tmp_path / "results", base, trials, 20, SearchResult(trials, 18, 19, "oom"), search="guess")
    _predict_searches_of_the_results_folder(monkeypatch)
    html = blocks.measured_vs_predicted()
    predicted = fit_prediction(base, None).max_batch
    row = re.search(r"<tr>(?:(?!</tr>).)*tiny_llama \(32 tokens\)(?:(?!</tr>).)*</tr>", html, flags=re.S)
    assert row, html
    assert "<td>18</td>" in row.group(0) and f"<td>{predicted:,}</td>" in row.group(0)
    assert "capped at 16.0 MiB" in row.group(0)


def test_page_calls_only_existing_blocks_and_types_no_numbers():
    text = PAGE.read_text(encoding="utf-8")
    called = re.findall(r"from benchlib\.site\.buying_guide import (\w+)", text)
    assert called, "the page calls its blocks from benchlib.site.buying_guide"
    for name in called:
        assert callable(getattr(blocks, name)), name
    prose = re.sub(r"\A---\n.*?\n---\n", "", text, flags=re.S)  # front matter: settings, not prose
    prose = re.sub(r"```.*?```", "", prose, flags=re.S)
    prose = re.sub(r"`[^`]*`", "", prose)
    prose = re.sub(
        r"ResNet-50|GPT-2|ViT-B/16|fp16|fp32", "", prose, flags=re.IGNORECASE
    )  # names, not figures (FP32 too)
    assert not re.search(r"\d", prose), re.findall(r".{20}\d.{20}", prose)


@pytest.mark.parametrize("narrow", [False, True], ids=["wide", "phone"])
def test_the_scatter_names_points_without_overlapping_names(narrow):
    from benchlib.site.buying_guide import BANDWIDTH_VS_COMPUTE as scatter
    from benchlib.site.charts import (
        LABEL_CHAR_PX,
        LABEL_LINE_PX,
        LABEL_PLACES,
        SCATTER_HEIGHT,
        SCATTER_LAYOUT_WIDTH,
        SCATTER_NARROW_WIDTH,
        label_places,
    )

    spec = chart_spec(blocks.bandwidth_vs_compute())
    rows = spec["datasets"][next(iter(spec["datasets"]))]
    frame = pd.DataFrame(rows)
    width = SCATTER_NARROW_WIDTH if narrow else SCATTER_LAYOUT_WIDTH
    places, domains = label_places(frame, scatter, width)
    # The chart draws the layout of its width: the one computed here.
    column = "label_place_narrow" if narrow else "label_place"
    assert [p if isinstance(p, str) else None for p in frame[column]] == places
    # The drawing uses the layout's own log domains, so the pixels checked here are the ones drawn.
    assert spec["layer"][0]["encoding"]["x"]["scale"]["domain"] == domains["x"]
    offsets = {place: (dx, dy, align) for place, dx, dy, align in LABEL_PLACES}
    span = lambda v, d, n: (np.log(v) - np.log(d[0])) / (np.log(d[1]) - np.log(d[0])) * n  # noqa: E731
    xs = span(frame[scatter.x], domains["x"], width)
    ys = SCATTER_HEIGHT - span(frame[scatter.y], domains["y"], SCATTER_HEIGHT)
    boxes = []
    for x, y, name, place in zip(xs, ys, frame[scatter.label], places):
        if place is None:
            # Unnamed only where another point sits within two labels' height: a crowd, shown in the table.
            assert ((np.hypot(xs - x, ys - y) < 4 * LABEL_LINE_PX).sum()) > 1, name
            continue
        dx, dy, align = offsets[place]
        label_px = len(name) * LABEL_CHAR_PX
        left = x + dx - {"left": 0, "right": label_px, "center": label_px / 2}[align]
        boxes.append((left, y + dy - LABEL_LINE_PX / 2, left + label_px, y + dy + LABEL_LINE_PX / 2))
    for i, a in enumerate(boxes):
        for b in boxes[i + 1 :]:
            assert not (a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]), (a, b)
    named = {name for name, place in zip(frame[scatter.label], places) if place}
    # The cards the buying guide compares by price are named first, so they keep a name on a phone.
    assert {"GeForce RTX 4090", "GeForce RTX 5090", "H100 SXM", "A100 80GB SXM"} <= named
    # Most points keep a name: the rest are in crowds (checked above), which grow as cards are added.
    assert len(boxes) >= (0.45 if narrow else 0.65) * len(frame)


def test_the_scatters_axis_ticks_leave_room_for_their_labels_on_a_phone():
    from benchlib.site.charts import SCATTER_NARROW_WIDTH

    axis_char_px = 0.55 * 10  # Vega's axis labels: 10 px, a glyph about 0.55 em wide
    spec = chart_spec(blocks.bandwidth_vs_compute())
    x = spec["layer"][0]["encoding"]["x"]
    ticks, (low, high) = x["axis"]["values"], x["scale"]["domain"]
    assert ticks == sorted(ticks) and all(low <= t <= high for t in ticks) and len(ticks) >= 3
    at = [np.log(t / low) / np.log(high / low) * SCATTER_NARROW_WIDTH for t in ticks]
    # Neighbouring labels ("500", "1,000") keep the axis' separation between them, so Vega hides none.
    widths = [len(f"{t:,.0f}") * axis_char_px for t in ticks]
    for i in range(len(ticks) - 1):
        gap = at[i + 1] - at[i] - (widths[i] + widths[i + 1]) / 2
        assert gap > x["axis"]["labelSeparation"], (ticks[i], ticks[i + 1])


def test_buy_a_card_lists_recent_cards_and_the_history_page_the_older_ones(monkeypatch):
    from benchlib.core import freshness

    monkeypatch.setenv(freshness.BUILD_DATE_ENV, "2026-11-26")
    current, older = blocks.buy_table(), blocks.older_cards()
    names = lambda part: re.findall(r"<tr><td>([^<]+)</td>", part)  # noqa: E731
    assert "K80" in names(older) and "K80" not in names(current)
    assert {"GeForce RTX 5090", "GeForce RTX 4090"} <= set(names(current))
    cutoff = 2026 - blocks.CURRENT_CARD_YEARS
    assert all(find_gpu(n).year.value >= cutoff for n in names(current))
    assert all(find_gpu(n).year.value < cutoff for n in names(older))
    # The guide keeps no folded history: it points to the page that has the older cards.
    assert "<details" not in current and 'href="../../history/"' in current
    assert f"launched before {cutoff}" in current and f"launched before {cutoff}" in older
