"""Contributed results files into the results folder: validated, deduplicated, filed atomically.

A contributed file goes to ``<results>/<machine id>/<run id>.json``; each run of a contribution
(`benchlib.results.contribution`) goes there as its own file, so a machine already in the folder
gains runs rather than a second folder. A contribution is refused, naming the field, when it
carries a field contributions don't keep or a file path, and when its check failed and its
sender didn't choose to send it anyway. It is refused when it
doesn't validate, or when its run id or machine id can't be a file name; it is a duplicate
when a file with the same run id, or the same machine and creation time, is already filed.
Implausible values are kept but marked invalid, with the reason, in the filed copy.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Literal

from benchlib.results.contribution import is_contribution, read_contribution
from benchlib.results.plausibility import findings, mark
from benchlib.results.schema import ResultsFile
from benchlib.results.store import ResultsError, iter_result_paths, load_json, read_results, write_results

MAX_BYTES = 16 * 2**20
# Ids become folder and file names: no separators, no '..', nothing a filesystem treats specially.
SAFE_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,127}")

Outcome = Literal["imported", "duplicate", "invalid"]


@dataclass(frozen=True)
class Imported:
    source: Path
    outcome: Outcome
    reasons: list[str] = field(default_factory=list)
    destination: Path | None = None


@dataclass
class _Index:
    """What the results folder already holds, by run id and by (machine id, creation time)."""

    by_run: dict[str, Path] = field(default_factory=dict)
    by_time: dict[tuple[str, datetime], Path] = field(default_factory=dict)

    def add(self, results: ResultsFile, path: Path) -> None:
        self.by_run.setdefault(results.run_id, path)
        self.by_time.setdefault((results.machine.id, results.created), path)

    def duplicate_of(self, results: ResultsFile) -> str | None:
        if results.run_id in self.by_run:
            return f"same run id {results.run_id!r} as {self.by_run[results.run_id]}"
        key = (results.machine.id, results.created)
        if key in self.by_time:
            return f"same machine {results.machine.id!r} and time {results.created.isoformat()} as {self.by_time[key]}"
        return None


def _index(results_dir: Path) -> _Index:
    index = _Index()
    for path in iter_result_paths(results_dir) if results_dir.is_dir() else []:
        try:
            index.add(read_results(path, mark_implausible=False), path)
        except ResultsError:
            continue  # the committed-results check reports bad files; they can't be duplicates
    return index


def _name_problems(results: ResultsFile) -> list[str]:
    out = []
    for name, value in (("run_id", results.run_id), ("machine.id", results.machine.id)):
        if not SAFE_NAME.fullmatch(value) or value.endswith("."):
            out.append(
                f"field '{name}': {value!r} can't be used as a file or folder name "
                "(letters, digits, '.', '_' and '-', at most 128, starting with a letter or digit)"
            )
    return out


def _file_run(source: Path, results: ResultsFile, results_dir: Path, index: _Index) -> Imported:
    """File one run's results under its machine's folder, unless it is a duplicate or can't be named."""
    bad_names = _name_problems(results)
    if bad_names:
        return Imported(source, "invalid", bad_names)
    duplicate = index.duplicate_of(results)
    if duplicate:
        return Imported(source, "duplicate", [duplicate])
    destination = results_dir / results.machine.id / f"{results.run_id}.json"
    if destination.exists():
        return Imported(
            source, "invalid", [f"{destination} exists and is not a valid results file; fix or remove it first"]
        )
    implausible = findings(results)
    reasons = [f"marked invalid: {p}" for p in implausible]
    if not results.complete:
        reasons.append("an unfinished run: only the workloads it completed are in it")
    write_results(mark(results), destination)
    index.add(results, destination)
    return Imported(source, "imported", reasons, destination)


def _contribution_runs(source: Path, data: dict) -> list[ResultsFile] | Imported:
    """A contribution's runs, or why it is refused: it carries what it mustn't, or is not ready."""
    try:
        contribution = read_contribution(source, data)
    except ResultsError as exc:
        return Imported(source, "invalid", exc.problems)
    if contribution.tiny:
        return Imported(
            source, "invalid", ["made with --tiny, which is for trying the command: its sizes are too small to chart"]
        )
    if not contribution.ready:
        return Imported(
            source,
            "invalid",
            [
                *contribution.check.problems,
                "its check failed and its sender did not choose to send it anyway "
                "(benchlib contribute --send-anyway FILE)",
            ],
        )
    return contribution.runs


def import_one(source: Path, results_dir: Path, index: _Index) -> list[Imported]:
    """Import a results file, or each run of a contribution; what happened to each, never an exception."""
    try:
        size = source.stat().st_size
    except OSError as exc:
        return [Imported(source, "invalid", [f"cannot read: {exc.strerror or exc}"])]
    if size > MAX_BYTES:
        return [
            Imported(
                source,
                "invalid",
                [f"{size / 2**20:.0f} MiB is larger than a results file can be ({MAX_BYTES // 2**20} MiB)"],
            )
        ]
    try:
        data = load_json(source)
        runs = (
            _contribution_runs(source, data)
            if is_contribution(data)
            else [read_results(source, mark_implausible=False, data=data)]
        )
    except ResultsError as exc:
        return [Imported(source, "invalid", exc.problems)]
    if isinstance(runs, Imported):
        return [runs]
    return [_file_run(source, results, results_dir, index) for results in runs]


def import_files(sources: Iterable[Path | str], results_dir: Path | str) -> list[Imported]:
    """Import each file (folders are searched for ``*.json``, contributions included) into ``results_dir``;
    never stops at a bad one. A contribution gives one outcome per run."""
    results_dir = Path(results_dir)
    index = _index(results_dir)
    return [
        outcome
        for path in iter_result_paths(sources, contributions=True)
        for outcome in import_one(path, results_dir, index)
    ]
