"""Reading and writing results files: atomic writes, and errors that name the file and field."""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Iterable, Iterator
from pathlib import Path

from pydantic import ValidationError

from benchlib.results.schema import ResultsFile


class ResultsError(ValueError):
    """A results file is unreadable or invalid; the message names the file and the field."""

    def __init__(self, path: Path | str, problems: list[str]) -> None:
        self.path = str(path)
        self.problems = problems
        super().__init__(f"{path}: " + "; ".join(problems))


def _describe(error: ValidationError) -> list[str]:
    out = []
    for e in error.errors():
        field = ".".join(str(part) for part in e["loc"]) or "(top level)"
        out.append(f"field '{field}': {e['msg']}")
    return out


def read_results(path: Path | str) -> ResultsFile:
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ResultsError(path, [f"cannot read: {exc.strerror or exc}"]) from exc
    except UnicodeDecodeError as exc:
        raise ResultsError(path, [f"not UTF-8 text: {exc.reason}"]) from exc
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ResultsError(path, [f"not valid JSON: {exc.msg} at line {exc.lineno} column {exc.colno}"]) from exc
    if not isinstance(data, dict):
        raise ResultsError(path, [f"expected a JSON object at the top level, found {type(data).__name__}"])
    try:
        return ResultsFile.model_validate(data)
    except ValidationError as exc:
        raise ResultsError(path, _describe(exc)) from exc


def write_results(results: ResultsFile, path: Path | str) -> Path:
    """Write atomically: a temp file in the same folder, fsync, then rename over the target.

    A reader (or a run killed mid-write) sees either the old complete file or the new one.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    payload = results.model_dump_json(indent=2, exclude_none=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(payload)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path


def iter_result_paths(paths: Iterable[Path | str] | Path | str) -> Iterator[Path]:
    """Expand files and folders (recursively) into results JSON files, in a stable order."""
    if isinstance(paths, (str, Path)):
        paths = [paths]
    for p in paths:
        p = Path(p)
        if p.is_dir():
            yield from sorted(q for q in p.rglob("*.json") if not q.name.startswith("."))
        else:
            yield p


def validate_paths(paths: Iterable[Path | str]) -> tuple[list[Path], list[ResultsError]]:
    """Check every file; returns (valid files, errors) instead of stopping at the first."""
    good, bad = [], []
    for path in iter_result_paths(paths):
        try:
            read_results(path)
            good.append(path)
        except ResultsError as exc:
            bad.append(exc)
    return good, bad


def json_schema() -> dict:
    """The JSON Schema of the results format, published for contributors."""
    return ResultsFile.model_json_schema()
