"""A transparent score: how many times faster than a stated reference machine, times 100.

For every test in `SCORE_TESTS`, the ratio is reference time / measured time (for a throughput,
which is 1 / time, that is measured / reference). The score is 100 x the geometric mean of the
ratios, so the reference machine scores 100 and a machine twice as fast on every test 200.
The training and inference sub-scores are the same over their own tests.

Unlike ai-benchmark's, a run that lacks a test (skipped, failed, never run) gets no number: the
score is ``incomplete`` and names what is missing, instead of a geometric mean over fewer tests
that would mean something else. The reference is the one results file in `reference_folder()`,
shipped inside the package so that a pip-installed benchlib (a Colab or Kaggle cell) scores too:
a complete standard-suite run, never one marked disturbed (see `benchlib.measure.conditions`).
"""

from __future__ import annotations

import math
import os
import statistics
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from benchlib.core.package_data import data_file
from benchlib.core.paths import REFERENCE_ENV, reference_dir
from benchlib.results.load import params_of
from benchlib.results.plausibility import disturbed_line
from benchlib.results.schema import MeasurementRecord, ResultsFile
from benchlib.results.store import read_results, write_results
from benchlib.workloads import ScorePart, all_workloads, owner

if TYPE_CHECKING:
    import pandas as pd

# The reference run's folder in the package data (benchlib/data/reference/): it holds exactly one
# run (machine, software and date are inside it), named <machine id>.json.
PACKAGED_REFERENCE = "reference"
SCALE = 100.0
# The parameters the suites size differently; the others (model, architecture) say what is measured.
SIZE_PARAMS = ("batch_size", "image_side")
# The suites whose runs can be scored: the tests use standard-suite sizes, which a full run names
# as missing (measured at other sizes) rather than scoring something else.
SCORED_SUITES = ("standard", "full")


@dataclass(frozen=True)
class ScoreTest(ScorePart):
    """One measurement the score uses: a workload's `ScorePart`, and the workload and framework it is of."""

    workload: str = field(kw_only=True)
    framework: str = field(kw_only=True)

    def matches(self, row: Mapping[str, Any], ignore: tuple[str, ...] = ()) -> bool:
        params = row["params"]
        return (
            row["workload"] == self.workload
            and row["framework"] == self.framework
            and row["metric"] == self.metric
            and row["dtype"] == self.dtype
            and all(params.get(k) == v for k, v in self.params.items() if k not in ignore)
        )

    def matches_but_size(self, row: Mapping[str, Any]) -> bool:
        """The same test at another size, as a full-suite run measures it."""
        return self.matches(row, ignore=SIZE_PARAMS)


def _declared_tests() -> tuple[ScoreTest, ...]:
    # Each workload declares its part in the score; their parameters are the standard suite's.
    return tuple(
        ScoreTest(**vars(part), workload=w.name, framework=w.framework)
        for w in all_workloads().values()
        for part in w.score
    )


SCORE_TESTS: tuple[ScoreTest, ...] = _declared_tests()


@dataclass(frozen=True)
class Score:
    """``value`` is None unless every test was measured; ``missing`` says which weren't, and why."""

    value: float | None
    complete: bool
    missing: list[str]
    ratios: dict[str, float]
    reasons: dict[str, str] = field(default_factory=dict)
    training: float | None = None
    inference: float | None = None
    reference: str = ""

    @property
    def relative_to(self) -> str:
        return f"relative to {self.reference} (= 100)"

    def missing_text(self) -> str:
        """The missing tests, grouped by why: one framework missing takes out several at once."""
        by_reason: dict[str, list[str]] = {}
        for key in self.missing:
            by_reason.setdefault(self.reasons.get(key, "not in this run"), []).append(key)
        return "; ".join(f"{', '.join(keys)} ({reason})" for reason, keys in by_reason.items())

    def __str__(self) -> str:
        if self.complete:
            return (
                f"score {self.value:.1f} (training {self.training:.1f}, inference {self.inference:.1f}), "
                f"{self.relative_to}"
            )
        return "incomplete: missing " + self.missing_text()


def _owner(workload: str, framework: str) -> str:
    found = owner(workload, framework)
    return found.name if found else workload


def _row(r: MeasurementRecord) -> dict[str, Any]:
    return {
        "workload": _owner(r.workload, r.framework),
        "framework": r.framework,
        "metric": r.metric.name,
        "dtype": r.dtype,
        "params": r.params,
        "value": r.value,
        "status": r.status,
        "message": r.message,
        "higher_is_better": r.metric.higher_is_better,
    }


def _lookup(rows: list[dict[str, Any]]) -> tuple[dict[str, tuple[float, bool]], dict[str, str]]:
    """Per test key: (median of the matching ok values, higher is better); and why others failed."""
    found: dict[str, tuple[float, bool]] = {}
    reasons: dict[str, str] = {}
    for test in SCORE_TESTS:
        matching = [r for r in rows if test.matches(r)]
        ok = [r for r in matching if r["status"] == "ok" and r["value"] is not None and r["value"] > 0]
        if ok:
            found[test.key] = (statistics.median(r["value"] for r in ok), bool(ok[0]["higher_is_better"]))
        elif matching:
            bad = matching[0]
            reasons[test.key] = f"{bad['status']}: {bad['message']}" if bad["message"] else str(bad["status"])
        else:
            # A whole-workload failure is recorded under the workload's name, without params.
            failed = [r for r in rows if r["workload"] == test.workload and r["status"] != "ok"]
            elsewhere = [r for r in rows if r["status"] == "ok" and test.matches_but_size(r)]
            if failed:
                reasons[test.key] = f"{failed[0]['status']}: {failed[0]['message']}"
            elif elsewhere:
                wanted = ", ".join(f"{k}={v}" for k, v in test.params.items())
                reasons[test.key] = f"measured only at other sizes; the score uses the standard suite's {wanted}"
    return found, reasons


def _geomean(values: list[float]) -> float:
    return math.exp(statistics.fmean(math.log(v) for v in values))


def reference_folder() -> Path:
    """The folder of the score's reference run: ``$BENCHLIB_REFERENCE_DIR`` where set (a trial
    reference, the tests'), else the one shipped with the package, which every install has."""
    return reference_dir() if os.environ.get(REFERENCE_ENV) else data_file(PACKAGED_REFERENCE)


def reference_file(folder: Path | None = None) -> Path:
    """The one results file in ``folder`` (by default `reference_folder()`); ValueError if there is none, or more than one."""
    folder = reference_folder() if folder is None else folder
    found = sorted(p for p in Path(folder).glob("*.json") if not p.name.startswith("."))
    if len(found) != 1:
        what = "no results file" if not found else f"{len(found)} results files ({', '.join(p.name for p in found)})"
        raise ValueError(f"{folder} holds {what}; the score needs exactly one reference run there")
    return found[0]


def check_reference(reference: ResultsFile, path: Path | str) -> None:
    """ValueError unless ``reference`` can be the score's 100: a complete, measured, undisturbed standard run."""
    if reference.provenance.kind != "measured" or reference.suite != "standard":
        what = (
            "reported figures"
            if reference.provenance.kind != "measured"
            else f"a {reference.suite or 'suite-less'} run"
        )
        raise ValueError(f"reference {path} must be a measured standard-suite run, not {what}")
    if reference.disturbed:
        raise ValueError(
            f"reference {path} is marked disturbed, so it can't be the score's 100 ({disturbed_line(reference)}); "
            "re-measure it on a quiet machine with `python benchmarks/score_spread.py --write-reference`"
        )
    absent = untested(reference)
    if absent:
        raise ValueError(f"reference {path} has no valid measurement for: {', '.join(absent)}")


def untested(results: ResultsFile) -> list[str]:
    """The score tests ``results`` has no valid measurement for; a run can be a yardstick only without any."""
    found, _ = _lookup([_row(r) for r in results.measurements])
    return [t.key for t in SCORE_TESTS if t.key not in found]


def load_reference(path: Path | str | None = None) -> ResultsFile:
    """The reference run (by default the one in `reference_folder()`); ValueError if it can't be one."""
    path = reference_file() if path is None else path
    reference = read_results(path)
    check_reference(reference, path)
    return reference


def write_reference(run: Path | str, folder: Path | None = None) -> Path:
    """Make ``run`` the score's reference: ``folder`` (`reference_folder()`)/<machine id>.json, replacing the one there.

    Only a run whose conditions were recorded and quiet qualifies (ValueError says why not).
    """
    folder = reference_folder() if folder is None else folder
    results = read_results(run, mark_implausible=False)
    check_reference(results, run)
    if results.disturbed is None:
        raise ValueError(
            f"{run} has no record of the machine's conditions (an older benchlib wrote it); a reference must be shown quiet"
        )
    target = write_results(results, Path(folder) / f"{results.machine.id}.json")
    for old in Path(folder).glob("*.json"):
        if old != target:
            old.unlink()
    return target


def _given(reference: ResultsFile | None) -> ResultsFile:
    """``reference`` checked like a loaded one, or the committed reference."""
    if reference is None:
        return load_reference()
    check_reference(reference, f"run {reference.run_id} of {reference.machine.label}")
    return reference


def score(records: Iterable[MeasurementRecord], reference: ResultsFile | None = None) -> Score:
    """Score one run's records against the reference run; ValueError if that can't be a reference."""
    return _score([_row(r) for r in records], _given(reference))


def _score(rows: list[dict[str, Any]], reference: ResultsFile) -> Score:
    ref, _ = _lookup([_row(r) for r in reference.measurements])
    found, reasons = _lookup(rows)
    ratios: dict[str, float] = {}
    for test in SCORE_TESTS:
        if test.key in found:
            value, higher_is_better = found[test.key]
            ref_value = ref[test.key][0]
            # A throughput is 1 / time, so ref time / measured time = measured / ref throughput.
            ratios[test.key] = value / ref_value if higher_is_better else ref_value / value
    missing = [t.key for t in SCORE_TESTS if t.key not in ratios]
    label = f"{reference.machine.label}, measured {reference.created:%Y-%m-%d}"
    if missing:
        return Score(
            value=None,
            complete=False,
            missing=missing,
            ratios=ratios,
            reasons={k: v for k, v in reasons.items() if k in missing},
            reference=label,
        )

    def sub(kind: str) -> float:
        return SCALE * _geomean([ratios[t.key] for t in SCORE_TESTS if t.kind == kind])

    return Score(
        value=SCALE * _geomean(list(ratios.values())),
        complete=True,
        missing=[],
        ratios=ratios,
        training=sub("training"),
        inference=sub("inference"),
        reference=label,
    )


def score_frame(df: pd.DataFrame, reference: ResultsFile | None = None) -> pd.DataFrame:
    """One score per results file in a `load_results` DataFrame (measured files only).

    Columns: file, machine_label, machine_id, device_name, created, disturbed (True, False, or
    None where not recorded), score, training, inference, complete, missing (comma-separated keys).
    """
    import pandas as pd

    reference = _given(reference)
    out = []
    measured = df[df["provenance"] == "measured"]
    for file, group in measured.groupby("file", sort=False):
        rows = [
            {
                "workload": _owner(r["workload"], r["framework"]),
                "framework": r["framework"],
                "metric": r["metric"],
                "dtype": r["dtype"],
                "params": params_of(r),
                "value": r["value"],
                "status": r["status"],
                "message": r["message"],
                "higher_is_better": r["higher_is_better"],
            }
            for r in group.to_dict("records")
        ]
        s = _score(rows, reference)
        first = group.iloc[0]
        names = group["device_name"].dropna()
        out.append(
            {
                "file": file,
                "machine_label": first["machine_label"],
                "machine_id": first["machine_id"],
                "device_name": names.iloc[0] if len(names) else None,
                "created": first["created"],
                "disturbed": None if pd.isna(first["disturbed"]) else bool(first["disturbed"]),
                "score": s.value,
                "training": s.training,
                "inference": s.inference,
                "complete": s.complete,
                "missing": ", ".join(s.missing),
            }
        )
    return pd.DataFrame(
        out,
        columns=[
            "file",
            "machine_label",
            "machine_id",
            "device_name",
            "created",
            "disturbed",
            "score",
            "training",
            "inference",
            "complete",
            "missing",
        ],
    )


def reference_values(reference: ResultsFile) -> dict[str, tuple[float, str]]:
    """Per test key: the reference run's value and its unit."""
    found, _ = _lookup([_row(r) for r in reference.measurements])
    units = {(_owner(r.workload, r.framework), r.metric.name): r.metric.unit for r in reference.measurements}
    return {t.key: (found[t.key][0], units.get((t.workload, t.metric), "")) for t in SCORE_TESTS if t.key in found}
