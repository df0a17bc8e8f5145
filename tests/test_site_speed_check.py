"""Predicted speed on the buying guide: predicted bars marked as such, and the errors shown are compare()'s."""

from __future__ import annotations

import json
import re
from html import unescape

import pytest
from glossary_text import without_tooltips

from benchlib import tables
from benchlib.derive.published_speed import UNRUN_BATCH, compare, median_abs_error, unrun_gpus
from benchlib.site import buying_guide as blocks
from benchlib.site import speed_check as speed
from benchlib.site.sources import MissingTableStopsTheBuild
from benchlib.tables.speed_check import speed_check


@pytest.fixture(scope="module")
def compared():
    """The comparison computed now, from the specs and the traces (about 30 s with an empty cache)."""
    rows, not_compared = compare()
    return rows, not_compared


@pytest.fixture(scope="module")
def throughput():
    return without_tooltips(blocks.resnet50_throughput())


@pytest.fixture(scope="module")
def comparison():
    return without_tooltips(speed.predicted_against_reported())


def _chart_rows(html: str) -> list[dict]:
    spec = json.loads(unescape(re.search(r'class="bench-chart__view"[^>]*data-spec="([^"]*)"', html).group(1)))
    return next(iter(spec["datasets"].values()))


def _table(html: str, name: str) -> list[list[str]]:
    body = re.search(rf'<table data-table="{name}">.*?<tbody>(.*?)</tbody>', html, re.S).group(1)
    return [
        [unescape(c) for c in re.findall(r"<td>(.*?)</td>", row)] for row in re.findall(r"<tr[^>]*>(.*?)</tr>", body)
    ]


@pytest.mark.slow
def test_gpus_lambda_never_ran_are_drawn_as_predicted_bars(throughput, compared):
    rows = _chart_rows(throughput)
    predicted = {(r["subject"], r["setting"]): r for r in rows if r["source"] == "predicted"}
    expected = unrun_gpus()
    assert expected and len(predicted) == len(expected)
    for gpu, precision, value in expected:
        bar = predicted[f"{gpu} (predicted)", precision]
        assert bar["value"] == pytest.approx(value) and bar["outline"] > 0
    lambda_gpus = {r.gpu for r in compared[0]}
    for r in rows:
        if r["subject"] in lambda_gpus:
            assert r["source"] == "reported" and r["outline"] == 0 and "predicted" not in r["subject"]
    assert blocks.RESNET50_TITLE in throughput


@pytest.mark.slow  # over 3 s here: kept out of the fast command (README command 3)
def test_the_data_table_lists_each_predicted_gpu_at_its_batch(throughput):
    rows = re.findall(r"<tr>(.*?)</tr>", throughput)
    for gpu, _, value in unrun_gpus():
        row = next(r for r in rows if r.startswith(f"<td>{gpu} (predicted)</td>"))
        assert f"<td>{value:,.0f} (batch {UNRUN_BATCH})</td>" in row


@pytest.mark.slow  # `compared` traces every GPU's prediction anew
def test_the_caption_states_the_error_compare_measured(throughput, compared):
    rows = compared[0]
    held_out = [r for r in rows if r.half == "held out"]
    worst = max(rows, key=lambda r: abs(r.error))
    caption = re.search(r"<strong>Predicted</strong>(.*?)</p>", throughput).group(1)
    assert (
        f"off by a median of {median_abs_error(rows):.0%} ({median_abs_error(held_out):.0%} on the held-out half)"
        in caption
    )
    assert f"at worst {worst.error:+.0%} ({worst.gpu}, {worst.precision})" in caption
    assert 'href="#predicted-against-reported"' in caption
    assert "so how far off their predictions are is unknown" in caption  # Blackwell and AMD: no Lambda row


@pytest.mark.slow  # `compared` traces every GPU's prediction anew
def test_predicted_relative_figures_divide_by_the_fastest_gpus_prediction(throughput, compared):
    fastest = max((r for r in compared[0] if r.precision == "AMP"), key=lambda r: r.reported)
    gpu, _, value = next(u for u in unrun_gpus() if u[1] == "AMP")
    row = re.search(rf"<tr><td>{re.escape(gpu)} \(predicted\)</td>(.*?)</tr>", throughput).group(1)
    assert f"<td>{value / fastest.predicted:.2f}</td>" in row
    assert f"AMP: {fastest.gpu}" in throughput


@pytest.mark.slow  # `compared` traces every GPU's prediction anew
def test_every_compared_row_shows_reported_predicted_and_error(comparison, compared):
    shown = {(r[0], r[1]): r for r in _table(comparison, "speed-published")}
    rows = compared[0]
    assert len(shown) == len(rows)
    for r in rows:
        assert shown[r.gpu, r.precision] == [
            r.gpu,
            r.precision,
            f"{r.batch:,}",
            r.half,
            f"{r.reported:,.0f}",
            f"{r.predicted:,.0f}",
            speed.percent(r.error),
        ]
    errors = [float(r[6].rstrip("%")) for r in _table(comparison, "speed-published")]
    assert errors == sorted(errors, reverse=True), "most over-predicted first"
    assert "as of 2024-03-01" in comparison and "github.com/lambdal/deeplearning-benchmark" in comparison


@pytest.mark.slow  # `compared` traces every GPU's prediction anew
def test_each_half_and_all_rows_show_their_median_and_worst_error(comparison, compared):
    rows = compared[0]
    summary = {r[0]: r for r in _table(comparison, "speed-errors")}
    for label, mine in (
        ("Calibration half", [r for r in rows if r.half == "calibration"]),
        ("Held-out half", [r for r in rows if r.half == "held out"]),
        ("All rows", rows),
    ):
        worst = max(mine, key=lambda r: abs(r.error))
        fp32, amp = ([r for r in mine if r.precision == p] for p in ("FP32", "AMP"))
        assert summary[label][1:] == [
            str(len({r.gpu for r in mine})),
            str(len(mine)),
            f"{median_abs_error(fp32):.0%}",
            f"{median_abs_error(amp):.0%}",
            f"{median_abs_error(mine):.0%}",
            f"{worst.error:+.0%} ({worst.gpu}, {worst.precision})",
        ]


@pytest.mark.slow  # `compared` traces every GPU's prediction anew
def test_the_rows_left_out_are_listed_with_their_reason(comparison, compared):
    for skipped in compared[1]:
        item = re.search(
            rf"<li>{re.escape(skipped.what.replace(chr(39), '&#39;'))} \((\d+) rows?, .*?\): (.*?)</li>", comparison
        )
        assert item and int(item.group(1)) == skipped.rows, skipped.what
        assert re.sub(r"</?code>", "`", unescape(item.group(2))).rstrip(".") == skipped.reason.rstrip(".")


@pytest.mark.slow  # `compared` traces every GPU's prediction anew
def test_the_pages_prose_on_where_the_errors_lean_still_holds(compared):
    """The buying guide says, in words, that AMP on the big data-centre GPUs comes out too fast and FP32 on
    most other cards too slow; the numbers must still say so (or the prose must change)."""
    ordered = sorted(compared[0], key=lambda r: r.error)
    over, under = ordered[-speed.EXTREMES :], ordered[: speed.EXTREMES]
    assert all(r.precision == "AMP" and r.error > 0 and re.match(r"[AH]100", r.gpu) for r in over), over
    assert all(r.precision == "FP32" and r.error < 0 and not re.match(r"[AH]100", r.gpu) for r in under), under


@pytest.mark.slow  # `compared` traces every GPU's prediction anew
def test_the_block_names_the_rows_furthest_off_each_way(comparison, compared):
    ordered = sorted(compared[0], key=lambda r: -r.error)
    sentence = re.search(r"<p>Predicted too fast by most: (.*?)</p>", comparison).group(1)
    for r in ordered[: speed.EXTREMES] + ordered[-speed.EXTREMES :]:
        assert f"{r.gpu} ({speed.percent(r.error)})" in sentence


def test_nothing_is_predicted_where_nothing_could_be_compared(tmp_path, monkeypatch):
    """The blocks given the table `benchlib tables` computes for an empty reported folder."""
    monkeypatch.setattr(speed, "checked", lambda: speed.from_table(speed_check(tmp_path)))
    assert speed.unrun_rows("images/s").empty
    assert "nothing is compared and no GPU is predicted" in speed.predicted_against_reported()
    assert speed.chart_note() == {"predicted": None}


def test_a_reported_folder_the_table_was_not_computed_from_stops_the_build(tmp_path, monkeypatch):
    """Nothing is predicted while the site builds: the message names the table and the command that makes it."""
    monkeypatch.setenv("BENCHLIB_REPORTED_DIR", str(tmp_path))
    monkeypatch.delenv("MKDOCS_CONFIG_DIR", raising=False)
    with pytest.raises(tables.TableStale, match=r"speed_check\.json was computed from other reported files"):
        speed.checked()
    monkeypatch.setenv("MKDOCS_CONFIG_DIR", str(tmp_path))
    with pytest.raises(MissingTableStopsTheBuild, match=r"run `benchlib tables --only speed_check` to make it again"):
        speed.predicted_against_reported()


def test_a_zero_error_reads_without_a_sign():
    assert (speed.percent(-0.001), speed.percent(0.38), speed.percent(-0.25)) == ("0%", "+38%", "-25%")
