"""The score in the terminal: what `benchlib run` prints after a run, and the comparison `benchlib score` prints.

Every string from a results file becomes plain `Text`, never rich markup.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from rich.table import Table
from rich.text import Text

from benchlib.core.paths import results_dir
from benchlib.derive.score import SCORE_TESTS, SCORED_SUITES, Score, load_reference, reference_file, score
from benchlib.results.plausibility import disturbed_line
from benchlib.results.schema import ResultsFile
from benchlib.results.store import ResultsError, iter_result_paths, read_results


def _not_scored(results: ResultsFile) -> str | None:
    """Why a run can't be scored, or None if it can."""
    if results.provenance.kind != "measured":
        return "reported figures, not a benchlib run; the score needs a measured standard-suite run"
    if results.suite not in SCORED_SUITES:
        return (
            f"a {results.suite or 'suite-less'} run; the score's tests are the standard suite's sizes, "
            "so run `benchlib run --suite standard`"
        )
    return None


def run_summary(results: ResultsFile, reference: ResultsFile | None = None) -> list[Text]:
    """What `benchlib run` prints at the end: which workloads were disturbed, and the score."""
    lines = []
    disturbed = disturbed_line(results)
    if disturbed:
        lines.append(Text(disturbed, style="yellow"))
    why_not = _not_scored(results)
    if why_not:
        return lines + [Text(f"no score: {why_not}", style="dim")]
    try:
        reference = reference or load_reference()
    except ValueError as exc:  # $BENCHLIB_REFERENCE_DIR names no reference, or one that can't be 100
        return lines + [Text(f"no score: {exc}", style="yellow")]
    s = score(results.measurements, reference)
    if s.complete:
        line = Text.assemble(
            ("score ", "bold"),
            (f"{s.value:.1f}", "bold green"),
            f"  training {s.training:.1f}, inference {s.inference:.1f}; {s.relative_to}",
        )
        if results.disturbed:
            line.append("; disturbed run, so likely too low", style="yellow")
    else:
        line = Text.assemble(
            ("score: incomplete", "yellow"),
            f", {len(s.missing)} of {len(SCORE_TESTS)} tests missing: {s.missing_text()}",
        )
    return lines + [line]


class NoReference(ValueError):
    """No reference run to score against, or one that can't be 100; the message says which and why."""


@dataclass(frozen=True)
class ScoreColumn:
    """One run in the comparison: its role (``run 1``, ``reference``, ``committed``), file and score."""

    role: str
    results: ResultsFile
    score: Score
    path: Path


@dataclass(frozen=True)
class ScoreComparison:
    """What `benchlib score` shows: a column per run, and a note for each file it could not score."""

    columns: list[ScoreColumn]  # empty when no file given is a measured standard-suite run
    notes: list[Text]  # invalid files and runs that can't be scored, in the order they were read
    invalid: int  # files that are not valid results files


def _conditions_cell(results: ResultsFile) -> Text:
    if results.disturbed is None:
        return Text("not recorded", style="dim")
    return Text("disturbed", style="yellow") if results.disturbed else Text("quiet", style="green")


def _number(value: float | None, none: Text) -> Text:
    return Text(f"{value:.1f}") if value is not None else none


def comparison_table(columns: list[ScoreColumn]) -> Table:
    """One column per run: machine, date, suite, conditions, then the overall, training and inference score."""
    table = Table(title="benchlib score")
    table.add_column("")
    for c in columns:
        table.add_column(Text(c.role), overflow="fold", justify="right")
    rows: list[tuple[str, list[Text]]] = [
        ("machine", [Text(c.results.machine.label) for c in columns]),
        ("date", [Text(f"{c.results.created:%Y-%m-%d}") for c in columns]),
        ("suite", [Text(c.results.suite or "—") for c in columns]),
        ("conditions", [_conditions_cell(c.results) for c in columns]),
        ("score", [_number(c.score.value, Text("incomplete", style="yellow")) for c in columns]),
        ("training", [_number(c.score.training, Text("—")) for c in columns]),
        ("inference", [_number(c.score.inference, Text("—")) for c in columns]),
    ]
    for name, cells in rows:
        table.add_row(Text(name, style="bold" if name == "score" else ""), *cells)
    return table


def _committed(exclude: set[tuple[str, str]], reference: ResultsFile) -> list[tuple[Path, ResultsFile]]:
    """The newest measured standard-suite run of each committed machine other than the reference's run."""
    newest: dict[str, tuple[Path, ResultsFile]] = {}
    committed = results_dir()
    for path in iter_result_paths(committed) if committed.is_dir() else []:
        try:
            results = read_results(path)
        except ResultsError:
            continue  # `benchlib validate results` reports these; a comparison column is optional
        key = (results.machine.id, results.run_id)
        if (
            key in exclude
            or key == (reference.machine.id, reference.run_id)
            or _not_scored(results)
            or results.suite != "standard"
        ):
            continue
        if results.machine.id not in newest or newest[results.machine.id][1].created < results.created:
            newest[results.machine.id] = (path, results)
    return list(newest.values())


def _scorable_runs(paths: list[Path]) -> tuple[list[tuple[Path, ResultsFile]], list[Text], int]:
    """The measured standard-suite runs in ``paths``, a note for each file passed over, and how many were invalid."""
    given: list[tuple[Path, ResultsFile]] = []
    notes: list[Text] = []
    invalid = 0
    for named in paths:
        # A file named on the command line gets its own note; a folder's other runs one line.
        passed_over: dict[str, int] = {}
        for path in iter_result_paths(named):
            try:
                results = read_results(path)
            except ResultsError as exc:
                invalid += 1
                notes.append(Text.assemble(("invalid ", "red"), str(exc)))
                continue
            why_not = _not_scored(results)
            if why_not and named.is_dir():
                kind = "reported" if results.provenance.kind != "measured" else f"{results.suite or 'suite-less'} suite"
                passed_over[kind] = passed_over.get(kind, 0) + 1
            elif why_not:
                notes.append(Text.assemble(("not scored ", "yellow"), f"{path}: {why_not}"))
            else:
                given.append((path, results))
        if passed_over:
            kinds = ", ".join(f"{n} {kind}" for kind, n in passed_over.items())
            notes.append(
                Text(
                    f"left out {sum(passed_over.values())} run(s) in {named} that aren't measured standard-suite runs ({kinds})",
                    style="dim",
                )
            )
    return given, notes, invalid


def _columns(given: list[tuple[Path, ResultsFile]], reference: ResultsFile) -> list[ScoreColumn]:
    """The given runs, then the reference (unless given), then the committed machines' newest runs."""
    ref_key = (reference.machine.id, reference.run_id)
    columns: list[ScoreColumn] = []
    for i, (path, results) in enumerate(given, 1):
        role = "reference" if (results.machine.id, results.run_id) == ref_key else f"run {i}"
        columns.append(ScoreColumn(role, results, score(results.measurements, reference), path))
    if all(c.role != "reference" for c in columns):
        columns.append(ScoreColumn("reference", reference, score(reference.measurements, reference), reference_file()))
    for path, results in _committed({(r.machine.id, r.run_id) for _, r in given}, reference):
        columns.append(ScoreColumn("committed", results, score(results.measurements, reference), path))
    return columns


def compare_scores(paths: list[Path]) -> ScoreComparison:
    """Score the runs in ``paths`` (files or folders) beside the reference and the committed machines' runs.

    Raises NoReference when there is no reference run that can be 100.
    """
    try:
        reference = load_reference()
    except ValueError as exc:
        raise NoReference(str(exc)) from exc
    given, notes, invalid = _scorable_runs(paths)
    return ScoreComparison(_columns(given, reference) if given else [], notes, invalid)
