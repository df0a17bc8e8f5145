"""The score's blocks: every run's score as a chart and a table, and the score's definition as data.

The formula and its reasoning are prose on the Methodology page; these blocks give the figures that
come from code and data: the reference run, the disturbance thresholds and the tests.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from benchlib.core.paths import project_root
from benchlib.derive.score import SCORE_TESTS, load_reference, reference_values, score_frame
from benchlib.results.plausibility import GPU_OTHERS_MAX_SM_PERCENT, OTHERS_MAX_CPU_SHARE, STEAL_MAX_SHARE
from benchlib.results.schema import ResultsFile
from benchlib.site.charts import chart_spec, plotted_rows, value_text
from benchlib.site.data import SiteData, site_data
from benchlib.site.figures import figure_context
from benchlib.site.render import render
from benchlib.workloads import Chart

CHART = Chart(
    "score",
    "benchlib score",
    "part",
    axis_title="benchlib score (reference machine = 100)",
    setting_order=("score", "training", "inference"),
    rule_at=100.0,
)
HEAD = ["Machine", "Score", "Training", "Inference", "Complete", "Missing tests", "Conditions", "File"]


def _conditions(disturbed: bool | None) -> str:
    return "not recorded" if disturbed is None else "disturbed" if disturbed else "quiet"


def _one_decimal(value: float) -> str:
    return "—" if pd.isna(value) else f"{value:.1f}"


def _relative(file: str) -> str:
    """The results file as the page names it: from the project's root, or by its name alone where it
    lies elsewhere (the build's own measurement, in the cache folder), so no local path shows."""
    try:
        return str(Path(file).resolve().relative_to(project_root().resolve()))
    except ValueError:
        return Path(file).name


def _bars(scores: pd.DataFrame) -> pd.DataFrame:
    """Per machine its newest run, and a disturbed one only where the machine has no other."""
    done = scores[scores["complete"]]
    done = (
        done.assign(quiet=~done["disturbed"].eq(True))
        .sort_values(["quiet", "created"])
        .drop_duplicates("machine_label", keep="last")
    )
    return pd.DataFrame(
        [
            {
                "subject": r["machine_label"] + (" (disturbed)" if r["disturbed"] is True else ""),
                "setting": part,
                "value": r[part],
                "unit": "score",
                "higher_is_better": True,
                "status": "ok",
                "created": r["created"],
                "source": "measured",
                "date": f"{r['created']:%Y-%m-%d}",
            }
            for r in done.to_dict("records")
            for part in ("score", "training", "inference")
        ]
    )


def score_block(data: SiteData | None = None) -> str:
    """``print(score_block())``: the score of every measured run, as bars and as a table."""
    data = data or site_data()
    try:
        scores = score_frame(data.frame)
    except ValueError as exc:  # the reference file is missing or unreadable: say so, don't break the build
        return render("score_empty.html", problem=str(exc), head=HEAD, rows=[])
    rows = [
        [
            r["machine_label"],
            _one_decimal(r["score"]),
            _one_decimal(r["training"]),
            _one_decimal(r["inference"]),
            "yes" if r["complete"] else "no (incomplete)",
            r["missing"],
            _conditions(r["disturbed"]),
            _relative(r["file"]),
        ]
        for r in scores.to_dict("records")
    ]
    bars = _bars(scores)
    if bars.empty:
        return render("score_empty.html", problem=None, head=HEAD, rows=rows)
    plotted = plotted_rows(bars, CHART)
    return render(
        "score.html",
        **figure_context("score", chart_spec(plotted, CHART)),
        head=HEAD,
        rows=rows,
        any_disturbed=bool(scores["disturbed"].eq(True).any()),
    )


def reference_table(reference: ResultsFile | None = None) -> str:
    """The reference run the score is relative to: machine, run, software and conditions."""
    reference = reference or load_reference()
    machine, software = reference.machine, reference.machine.software
    stack = ", ".join(
        f"{k} {v}"
        for k, v in (software.model_dump().items() if software else [])
        if v and k in ("python", "torch", "tensorflow", "fastai")
    )
    conditions = (
        "not recorded (the run predates that record)"
        if reference.disturbed is None
        else "disturbed"
        if reference.disturbed
        else "quiet throughout the run"
    )
    rows = [
        ["Machine", f"{machine.label} ({machine.id})"],
        ["Run", f"{reference.run_id}, {reference.suite} suite"],
        ["Measured", f"{reference.created:%Y-%m-%d}"],
        ["Software", stack or "not recorded"],
        ["Conditions", conditions],
    ]
    return render("table.html", head=["Reference", ""], rows=rows)


def thresholds_table() -> str:
    """When a workload counts as disturbed, from the constants the runner uses."""
    rows = [
        ["Other processes' share of all CPU time", f"{OTHERS_MAX_CPU_SHARE:.0%}"],
        ["CPU time stolen by the hypervisor (steal)", f"{STEAL_MAX_SHARE:.0%}"],
        ["Another process's GPU SM use (NVML)", f"{GPU_OTHERS_MAX_SM_PERCENT:g}%"],
    ]
    return render("table.html", head=["A workload is disturbed when", "is above"], rows=rows)


def score_tests_table(reference: ResultsFile | None = None) -> str:
    """The score's tests, each with the reference run's value."""
    reference = reference or load_reference()
    values = reference_values(reference)
    rows = [
        [
            t.key,
            t.kind,
            f"{t.workload} ({', '.join(f'{k}={v}' for k, v in t.params.items())})",
            t.framework,
            t.label,
            f"{value_text(values[t.key][0])} {values[t.key][1]}",
        ]
        for t in SCORE_TESTS
    ]
    return render(
        "table.html", head=["Test", "Kind", "Workload", "Framework", "Measurement", "Reference value"], rows=rows
    )
