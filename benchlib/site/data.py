"""Everything the site shows, read once per build and derived in one place.

`site_data()` reads the results folder, the reported folder and (with ``BENCHLIB_MEASURE``) a
fresh measurement of the build machine through the store, once per build: the result is cached
until a file changes. `derive` then adds, in one pass, what every block needs: the workload that
owns each record, figures derived from reported or paired records (as the workloads declare
them), and for every declared chart its rows with subject, setting, source and date.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from string import Formatter
from typing import Any

import pandas as pd

from benchlib.derive.results_files import results_files
from benchlib.results.load import PARAM_PREFIX, params_of
from benchlib.results.schema import ResultsFile
from benchlib.results.store import read_results
from benchlib.site import notebook
from benchlib.site.sources import MEASURE_ENV, load_site_results, requested_suite, stop_build_on_invalid_results
from benchlib.workloads import PerDollar, Plot, Rate, Ratio, Relative, WorkRate, all_workloads, owner

# How pages name the machine that measured while the site was built: by what it did; its own label
# beside this (CPU, GPU) says what it is.
BUILD_MACHINE = "the machine that built this site"
# What its bars' labels add, short enough for a chart's axis.
BUILD_SUBJECT = "built this site"
MEASURED = "measured"
REPORTED = "reported"
BUILD_MARK = "★ "
MISSING = "—"
FRAMEWORK_NAMES = {"torch": "PyTorch", "tensorflow": "TensorFlow (Keras)", "fastai": "fastai", "jax": "JAX"}


@dataclass(frozen=True)
class SiteData:
    """The results as one frame (``frame``), each chart's rows (``charts``), and where they came from."""

    frame: pd.DataFrame
    charts: dict[str, pd.DataFrame]
    results_dir: Path
    build_files: frozenset[str]


def _paths() -> tuple[list[Path], Path, list[str]]:
    suite = requested_suite()
    found = results_files(notebook.this_machine(suite) if suite else None)
    return list(found.paths), found.folder, list(found.build)


def _signature(paths: Iterable[Path]) -> tuple[tuple[str, int, int], ...]:
    out = []
    for path in paths:
        stat = path.stat()
        out.append((str(path), stat.st_mtime_ns, stat.st_size))
    return tuple(out)


def site_data() -> SiteData:
    """All results, loaded and derived once per build; a changed file (``mkdocs serve``) loads again.

    An invalid results file raises `ResultsError` naming the file and field; in a build, that ends
    the build with one message (`benchlib.site.sources.stop_build_on_invalid_results`).
    """
    paths, folder, build = _paths()
    return _load(_signature(paths), folder, frozenset(build), os.environ.get(MEASURE_ENV, ""))


@functools.lru_cache(maxsize=4)
def _load(signature: tuple[tuple[str, int, int], ...], folder: Path, build: frozenset[str], _measure: str) -> SiteData:
    frame = derive(load_site_results([Path(p) for p, _, _ in signature]), build)
    return SiteData(frame=frame, charts=chart_frames(frame), results_dir=folder, build_files=build)


# --- derive: one pass, in this order ------------------------------------------------------------


def derive(frame: pd.DataFrame, build_files: Iterable[str] = ()) -> pd.DataFrame:
    """``frame`` with each record's owning workload, derived figures, and display columns added."""
    frame = frame.copy()
    frame["owner"] = [_owner_name(w, f) for w, f in zip(frame["workload"], frame["framework"])]
    frame["derived"] = ""
    # Which record a row is; a derived row keeps the number of the record it is shown beside.
    frame["record"] = range(len(frame))
    frame = pd.concat([frame, *_derived_rows(frame)], ignore_index=True) if len(frame) else frame
    builds = set(build_files)
    frame["source"] = [
        BUILD_MACHINE if f in builds else (REPORTED if p == REPORTED else MEASURED)
        for f, p in zip(frame["file"], frame["provenance"])
    ]
    frame["framework_name"] = [FRAMEWORK_NAMES.get(f, f) for f in frame["framework"]]
    frame["subject"] = _subjects(frame)
    # A reported figure dates from its source, not from when it was typed into a file.
    frame["date"] = [
        as_of if src == REPORTED and isinstance(as_of, str) and as_of else created.strftime("%Y-%m-%d")
        for src, as_of, created in zip(frame["source"], frame["source_as_of"], frame["created"])
    ]
    return frame


def _owner_name(workload: str, framework: str) -> str:
    found = owner(workload, framework)
    return found.name if found else workload


def _derived_rows(frame: pd.DataFrame) -> list[pd.DataFrame]:
    out = []
    for workload in all_workloads().values():
        mine = frame[frame["owner"] == workload.name]
        rows = mine[mine["status"] == "ok"]
        for rule in workload.derived:
            if isinstance(rule, Ratio):
                made = _ratio(rows, rule)
            elif isinstance(rule, Rate):
                made = _rate(rows, rule)
            elif isinstance(rule, WorkRate):
                made = _work_rate(mine[mine["value"].notna()], rule)
            elif isinstance(rule, PerDollar):
                made = _per_dollar(rows, rule)
            else:
                made = _relative(rows, rule)
            if not made.empty:
                out.append(made)
    return out


def _blank_stats(rows: pd.DataFrame) -> pd.DataFrame:
    # A derived figure has no timing of its own; the table shows how it was derived instead.
    return rows.assign(median_s=None, iqr_s=None, n=None, noisy=None, peak=None, efficiency=None)


def _ratio(rows: pd.DataFrame, rule: Ratio) -> pd.DataFrame:
    keys = ["file", *rule.same]
    top = rows[rows[rule.over] == rule.numerator]
    bottom = rows[rows[rule.over] == rule.denominator]
    if top.empty or bottom.empty:
        return rows.iloc[0:0]
    pairs = bottom.merge(top[[*keys, "value"]], on=keys, suffixes=("", "_numerator"))
    pairs = pairs[pairs["value"] > 0]
    derived = [
        f"{rule.numerator} {metric} {num:g} / {rule.denominator} {den:g}"
        for metric, num, den in zip(pairs["metric"], pairs["value_numerator"], pairs["value"])
    ]
    return _blank_stats(pairs.drop(columns="value_numerator")).assign(
        value=pairs["value_numerator"] / pairs["value"],
        metric=rule.metric,
        unit=rule.unit,
        higher_is_better=True,
        derived=derived,
    )


def _rate(rows: pd.DataFrame, rule: Rate) -> pd.DataFrame:
    rows = rows[rows["metric"] == rule.of]
    columns = [f"{PARAM_PREFIX}{name}" for name in rule.count]
    if rows.empty or not set(columns) <= set(rows.columns):
        return rows.iloc[0:0]
    counts = rows[columns].astype(float).prod(axis=1)
    keep = counts.notna() & (rows["value"] > 0)
    rows, counts = rows[keep], counts[keep]
    derived = [
        " x ".join(f"{name} {_plain(v)}" for name, v in zip(rule.count, values)) + f" = {n:,.0f} in a reported {t:g} s"
        for values, n, t in zip(rows[columns].itertuples(index=False), counts, rows["value"])
    ]
    return _blank_stats(rows).assign(
        value=counts / rows["value"],
        metric=rule.metric,
        unit=rule.unit,
        higher_is_better=True,
        derived=derived,
    )


_SECONDS = {"s": 1.0, "ms": 1e-3, "us": 1e-6}


def _work_rate(rows: pd.DataFrame, rule: WorkRate) -> pd.DataFrame:
    rows = rows[(rows["metric"] == rule.of) & rows["unit"].isin(list(_SECONDS)) & (rows["value"] > 0)]
    work = pd.Series([rule.work(params_of(r)) for r in rows.to_dict("records")], index=rows.index, dtype=float)
    rows, work = rows[work.notna()], work[work.notna()]
    if rows.empty:
        return rows
    seconds = rows["value"] * rows["unit"].map(_SECONDS)
    derived = [f"{w:.3g} {rule.work_unit} in {t:g} {u}" for w, t, u in zip(work, rows["value"], rows["unit"])]
    return _blank_stats(rows).assign(
        value=work / seconds * rule.scale,
        metric=rule.metric,
        unit=rule.unit,
        higher_is_better=True,
        derived=derived,
    )


def _subjects(frame: pd.DataFrame) -> list[str]:
    subjects = []
    for label, device, gpus, source in zip(
        frame["machine_label"], frame["device"], frame["gpu_count"], frame["source"]
    ):
        # The machine label names the accelerator; a CPU run on a GPU machine needs saying so.
        if device == "cpu" and (gpus or 0) > 0:
            label = f"{label} · CPU"
        if source == REPORTED and REPORTED not in label.lower():
            label = f"{label} (reported)"
        if source == BUILD_MACHINE:
            label = f"{BUILD_MARK}{label} ({BUILD_SUBJECT})"
        subjects.append(label)
    subjects_s = pd.Series(subjects, index=frame.index, dtype=object)
    # Two machines with one label (say, two Colab T4 hosts) must not share a band.
    clash = (
        subjects_s.groupby(subjects_s).transform(lambda s: frame.loc[s.index, "machine_id"].nunique() > 1).astype(bool)
    )
    subjects_s[clash] = subjects_s[clash] + " [" + frame.loc[clash, "machine_id"].str[-8:] + "]"
    return list(subjects_s)


# --- chart rows ---------------------------------------------------------------------------------


def _plain(value: Any) -> str:
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


class _SettingFormatter(Formatter):
    def get_value(self, key: Any, args: Any, kwargs: Any) -> Any:
        value = kwargs.get(key)
        if value is None or (isinstance(value, float) and value != value):
            raise LookupError(key)
        return value

    def format_field(self, value: Any, format_spec: str) -> str:
        return _plain(value) if not format_spec else format(value, format_spec)


def setting_text(plot: Plot, row: dict[str, Any]) -> str:
    """The bar's setting for one row: ``plot.setting`` filled from the row, or "—" where a field is missing."""
    try:
        text = _SettingFormatter().format(plot.setting, **row)
    except (LookupError, ValueError, TypeError):
        return MISSING
    return plot.setting_names.get(text, text)


def plot_rows(frame: pd.DataFrame, plot: Plot, owner_name: str) -> pd.DataFrame:
    """The rows ``plot`` puts on its chart, with ``setting``, ``chart`` and, if declared, ``tick``."""
    mine = frame[frame["owner"] == owner_name]
    selected = mine[mine["metric"] == plot.metric]
    for column, wanted in plot.where.items():
        selected = selected[selected[column] == wanted] if column in selected else selected.iloc[0:0]
    # A workload that failed as a whole left one record of its own metric, without params: list it too
    # (not a figure derived from an invalid record, which the record's own row already shows).
    failed = mine[(mine["status"] != "ok") & (mine["metric"] != plot.metric) & (mine["derived"] == "")]
    rows = pd.concat([selected, failed]).copy()
    rows["chart"] = plot.chart.id
    rows["setting"] = [setting_text(plot, r) for r in rows.to_dict("records")]
    rows["tick"] = rows["peak"]
    if plot.tick_metric:
        ticks = mine[(mine["metric"] == plot.tick_metric) & (mine["status"] == "ok")].copy()
        ticks["setting"] = [setting_text(plot, r) for r in ticks.to_dict("records")]
        ticks = ticks.drop_duplicates(["file", "setting"], keep="last")[["file", "setting", "value"]]
        rows = rows.merge(ticks.rename(columns={"value": "tick_value"}), on=["file", "setting"], how="left")
        rows["tick"] = rows["tick_value"]
        rows = rows.drop(columns="tick_value")
    return rows


def chart_frames(frame: pd.DataFrame) -> dict[str, pd.DataFrame]:
    """For every declared chart, its rows from every workload that plots on it."""
    parts: dict[str, list[pd.DataFrame]] = {}
    for workload in all_workloads().values():
        for plot in workload.plots:
            parts.setdefault(plot.chart.id, []).append(plot_rows(frame, plot, workload.name))
    return {chart: pd.concat(rows, ignore_index=True) for chart, rows in parts.items()}


# --- whole results files, for the few blocks that show more of a file than its records ---------


def results_file(path: str) -> ResultsFile:
    """The results file at ``path`` (a ``frame["file"]``), read through the store once per build."""
    stat = Path(path).stat()
    return _read_file(path, stat.st_mtime_ns, stat.st_size)


@functools.lru_cache(maxsize=64)
def _read_file(path: str, _mtime: int, _size: int) -> ResultsFile:
    with stop_build_on_invalid_results():
        return read_results(path)


# --- more derive rules: what each declared rule class computes -----------------------------------

SECONDS_PER_HOUR = 3600
LIST_PRICE = "list price"
RANGE_LOW_END = "price range, low end"


def _per_dollar(rows: pd.DataFrame, rule: PerDollar) -> pd.DataFrame:
    """One row per record and cloud price of its accelerator: work per dollar, with the ``price`` it is per."""
    from benchlib.catalog.gpus import find_accelerator

    rows = rows[rows["metric"] == rule.of]
    picked, prices = [], []
    for index, name in zip(rows.index, rows["device_name"]):
        spec = find_accelerator(name) if isinstance(name, str) else None
        for price in spec.hourly_prices() if spec else []:
            picked.append(index)
            prices.append(price)
    if not picked:
        return rows.iloc[0:0]
    made = rows.loc[picked].reset_index(drop=True)
    per_hour = pd.Series([p.usd_per_hour for p in prices], dtype=float)
    derived = [
        f"{rule.of} {value:g} {unit} x {SECONDS_PER_HOUR} s / ${p.usd_per_hour:.2f} per hour ({p.provider}, {p.as_of})"
        for value, unit, p in zip(made["value"], made["unit"], prices)
    ]
    return _blank_stats(made).assign(
        value=made["value"] * SECONDS_PER_HOUR / per_hour,
        metric=rule.metric,
        unit=rule.unit,
        higher_is_better=True,
        derived=derived,
        price=prices,
        price_kind=[RANGE_LOW_END if p.usd_per_hour_max else LIST_PRICE for p in prices],
    )


def _relative(rows: pd.DataFrame, rule: Relative) -> pd.DataFrame:
    rows = rows[(rows["metric"] == rule.of) & (rows["value"] > 0)]
    if rows.empty or not set(rule.same) <= set(rows.columns):
        return rows.iloc[0:0]
    groups = rows.groupby(list(rule.same), dropna=False)["value"]
    higher = rows["higher_is_better"].astype(bool)
    best = groups.transform("max").where(higher, groups.transform("min"))
    value = (rows["value"] / best).where(higher, best / rows["value"])
    derived = [f"{v:g} against the best {b:g}" for v, b in zip(rows["value"], best)]
    return _blank_stats(rows).assign(value=value, metric=rule.metric, unit="of the best", derived=derived)
