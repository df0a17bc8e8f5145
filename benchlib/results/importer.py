"""Contributed results files into the results folder: validated, deduplicated, filed atomically.

A contributed file goes to ``<results>/<machine id>/<run id>.json``; each run of a contribution
(`benchlib.results.contribution`) goes there as its own file, so a machine already in the folder
gains runs rather than a second folder. Every field of a contributed file is a stranger's input.
A contribution is refused, naming the field, when it carries a field contributions don't keep or
a file path, when its own check disagrees with its runs, and when its runs (judged afresh) failed
the check and its sender didn't choose to send it anyway. Any file is refused when it doesn't
validate, or when its run id or machine id can't name a file or names a reserved one; a run is a
duplicate when a file with the same run id, or the same machine and creation time, is already
filed. Implausible values are kept but marked invalid, with the reason, in the filed copy.

Each file is checked whole, every run of it ready to write, before any run of it is written: a
file is filed or refused as one, whatever the files beside it are.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Literal

from benchlib.core.files import write_atomically
from benchlib.results.contribution import is_contribution, problems_found, read_contribution
from benchlib.results.plausibility import findings, mark
from benchlib.results.schema import ResultsFile
from benchlib.results.store import (
    ResultsError,
    iter_result_paths,
    load_json,
    name_problems,
    read_results,
    results_path,
    results_text,
)

Outcome = Literal["imported", "duplicate", "invalid"]


@dataclass(frozen=True)
class Imported:
    """What became of one file: its runs filed (where), all of them duplicates, or refused (why)."""

    source: Path
    outcome: Outcome
    reasons: list[str] = field(default_factory=list)
    destinations: list[Path] = field(default_factory=list)


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
    found = problems_found(contribution)
    if found and not contribution.check.sent_anyway:
        return Imported(
            source,
            "invalid",
            [
                *found,
                "it failed its check and its sender did not choose to send it anyway (benchlib contribute --send-anyway FILE)",
            ],
        )
    return contribution.runs


@dataclass
class _Plan:
    """One file's runs, checked and ready to write: (destination, text) each, and what to report."""

    writes: list[tuple[Path, str]] = field(default_factory=list)
    runs: list[ResultsFile] = field(default_factory=list)
    refused: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def _plan(runs: list[ResultsFile], results_dir: Path, index: _Index, contribution: bool) -> _Plan:
    """Check every run of one file against the results folder, writing nothing."""
    plan = _Plan()
    pending = _Index()  # this file's runs so far: one run twice in a file is filed once
    for i, results in enumerate(runs):
        label = f"run {results.run_id}: " if contribution else ""
        bad_names = name_problems(results, f"runs.{i}." if contribution else "")
        if bad_names:
            plan.refused += bad_names
            continue
        duplicate = index.duplicate_of(results) or pending.duplicate_of(results)
        if duplicate:
            plan.notes.append(f"{label}duplicate: {duplicate}")
            continue
        destination = results_path(results_dir, results)
        folder = destination.parent
        if folder.is_symlink() or (folder.exists() and not folder.is_dir()):
            plan.refused.append(f"{label}{folder} is not a folder; fix or remove it first")
            continue
        if os.path.lexists(destination):
            plan.refused.append(f"{label}{destination} exists and is not a valid results file; fix or remove it first")
            continue
        try:
            plan.writes.append((destination, results_text(mark(results), destination)))
        except ResultsError as exc:
            plan.refused += [f"{label}{p}" for p in exc.problems]
            continue
        plan.runs.append(results)
        pending.add(results, destination)
        plan.notes += [f"{label}marked invalid: {p}" for p in findings(results)]
        if not results.complete:
            plan.notes.append(f"{label}an unfinished run: only the workloads it completed are in it")
    return plan


def _write(source: Path, plan: _Plan, index: _Index) -> Imported:
    """Write every run the plan holds, or, if one can't be written, none of them."""
    done: list[Path] = []
    for destination, text in plan.writes:
        try:
            done.append(write_atomically(destination, text))
        except OSError as exc:
            for path in done:
                path.unlink(missing_ok=True)
            return Imported(
                source, "invalid", [f"cannot write {destination}: {exc.strerror or exc}; none of its runs was filed"]
            )
    for results, path in zip(plan.runs, done):
        index.add(results, path)
    return Imported(source, "imported", plan.notes, done)


def import_one(source: Path, results_dir: Path, index: _Index) -> Imported:
    """Import a results file, or every run of a contribution, or none of it; what happened, never an exception."""
    try:
        data = load_json(source)
        contribution = is_contribution(data)
        runs = (
            _contribution_runs(source, data)
            if contribution
            else [read_results(source, mark_implausible=False, data=data)]
        )
    except ResultsError as exc:
        return Imported(source, "invalid", exc.problems)
    if isinstance(runs, Imported):
        return runs
    plan = _plan(runs, results_dir, index, contribution)
    if plan.refused:
        return Imported(source, "invalid", plan.refused)
    if not plan.writes:
        return Imported(source, "duplicate", plan.notes)
    return _write(source, plan, index)


def import_files(sources: Iterable[Path | str], results_dir: Path | str) -> list[Imported]:
    """Import each file (folders are searched for ``*.json``, contributions included) into ``results_dir``;
    never stops at a bad one. One outcome per file."""
    results_dir = Path(results_dir)
    index = _index(results_dir)
    return [import_one(path, results_dir, index) for path in iter_result_paths(sources, contributions=True)]
