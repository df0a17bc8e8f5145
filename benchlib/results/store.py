"""Reading and writing results files: atomic writes, and errors that name the file and field."""

from __future__ import annotations

import json
import math
import uuid
from collections.abc import Iterable, Iterator
from datetime import datetime, timezone
from pathlib import Path

from pydantic import BaseModel, ValidationError

from benchlib.core.files import stale_temp_files, write_atomically
from benchlib.core.version import METHODOLOGY_VERSION, __version__
from benchlib.results.schema import Machine, ResultsFile, RunPlan


class ResultsError(ValueError):
    """A results file is unreadable or invalid; the message names the file and the field."""

    def __init__(self, path: Path | str, problems: list[str]) -> None:
        self.path = str(path)
        self.problems = problems
        super().__init__(f"{path}: " + "; ".join(problems))


def describe(error: ValidationError) -> list[str]:
    """Each of pydantic's errors as "field 'a.b': message"."""
    out = []
    for e in error.errors():
        field = ".".join(str(part) for part in e["loc"]) or "(top level)"
        out.append(f"field '{field}': {e['msg']}")
    return out


def _non_finite(data: object) -> list[str]:
    """Fields holding NaN or Infinity, which Python's json reads but JSON itself has no way to say."""
    out = []
    stack: list[tuple[tuple[str, ...], object]] = [((), data)]
    while stack:
        where, node = stack.pop()
        if isinstance(node, dict):
            stack.extend((where + (str(k),), v) for k, v in node.items())
        elif isinstance(node, list):
            stack.extend((where + (str(i),), v) for i, v in enumerate(node))
        elif isinstance(node, float) and not math.isfinite(node):
            name = "NaN" if math.isnan(node) else "Infinity"
            out.append(f"field '{'.'.join(where) or '(top level)'}': {name} is not a number JSON can carry")
    return sorted(out)


def load_json(path: Path | str) -> dict:
    """The JSON object in ``path``; ResultsError says what is wrong with a file that isn't one."""
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
    except (ValueError, RecursionError) as exc:
        # json raises these for integers longer than Python's limit and for absurd nesting.
        raise ResultsError(path, [f"not valid JSON: {type(exc).__name__}: {str(exc)[:200]}"]) from exc
    if not isinstance(data, dict):
        raise ResultsError(path, [f"expected a JSON object at the top level, found {type(data).__name__}"])
    non_finite = _non_finite(data)
    if non_finite:
        raise ResultsError(path, non_finite)
    return data


def read_results(path: Path | str, *, mark_implausible: bool = True, data: dict | None = None) -> ResultsFile:
    """Read and validate a results file; ResultsError names the file and the field on any problem.

    Values no real run can produce (above the device's peak, zero times, ...) come back marked
    'invalid' with the reason, unless ``mark_implausible`` is False (to inspect the file as written).
    ``data`` is the file's JSON where the caller has already loaded it (`load_json`), so it is read once.
    """
    path = Path(path)
    data = load_json(path) if data is None else data
    if "contribution" in data:
        raise ResultsError(
            path,
            [
                "a contribution, not one run's results: file its runs with benchlib import, or check it with benchlib validate"
            ],
        )
    try:
        results = ResultsFile.model_validate(data)
    except ValidationError as exc:
        raise ResultsError(path, describe(exc)) from exc
    except RecursionError as exc:
        raise ResultsError(path, ["nested too deeply to be a results file"]) from exc
    try:
        # Lone surrogates pass validation but could never be written back (by import or resume).
        results.model_dump_json()
    except (ValueError, UnicodeError) as exc:
        raise ResultsError(path, [f"cannot be stored again as UTF-8 JSON: {str(exc)[:200]}"]) from exc
    if mark_implausible:
        from benchlib.results.plausibility import mark

        results = mark(results)
    return results


def new_run_id(now: datetime) -> str:
    """A run's id: when it started, to the second, and six random hex digits."""
    return f"{now:%Y%m%dT%H%M%SZ}-{uuid.uuid4().hex[:6]}"


def new_results(machine: Machine, suite: str, *, plan: RunPlan | None = None) -> ResultsFile:
    """The header of a new run's results file, the one place it is made: a new run id, the time it
    started and this benchlib's versions. Every command that measures starts its file here."""
    now = datetime.now(timezone.utc)
    return ResultsFile(
        run_id=new_run_id(now),
        created=now,
        benchlib_version=__version__,
        methodology_version=METHODOLOGY_VERSION,
        suite=suite,
        machine=machine,
        plan=plan,
    )


def results_path(out_dir: Path | str, results: ResultsFile) -> Path:
    """Where a run's file goes: ``<out_dir>/<machine id>/<run id>.json``."""
    return Path(out_dir) / results.machine.id / f"{results.run_id}.json"


def write_results(results: ResultsFile, path: Path | str) -> Path:
    """Write ``results`` to ``path`` with the one atomic write (`benchlib.core.files`).

    A reader (or a run killed mid-write) sees either the old complete file or the new one. The
    file is checked to read back before it replaces anything, so a value JSON can't carry (NaN
    becomes null) fails here, loudly, instead of leaving an unreadable file.
    """
    return write_json_text(ResultsFile, path, results.model_dump_json(indent=2, exclude_none=True))


def write_json_text(model: type[BaseModel], path: Path | str, payload: str) -> Path:
    """Write ``payload`` atomically once it reads back as ``model``; ResultsError names what wouldn't."""
    try:
        model.model_validate_json(payload)
    except ValidationError as exc:
        raise ResultsError(path, ["would not read back: " + p for p in describe(exc)]) from exc
    return write_atomically(path, payload)


def remove_stale_temp_files(path: Path | str) -> list[Path]:
    """Delete the temp files a write to ``path`` left behind when its process was killed mid-write."""
    stale = stale_temp_files(path)
    for tmp in stale:
        tmp.unlink(missing_ok=True)
    return stale


def iter_result_paths(paths: Iterable[Path | str] | Path | str, *, contributions: bool = False) -> Iterator[Path]:
    """Expand files and folders (recursively) into results JSON files, in a stable order.

    In a folder, contributions (``contributed/``, ``contribution-*.json``) are left out unless
    ``contributions``: they are an inbox, not results, until `benchlib import` files their runs.
    """
    if isinstance(paths, (str, Path)):
        paths = [paths]
    for p in paths:
        p = Path(p)
        if not p.is_dir():
            yield p
            continue
        for q in sorted(p.rglob("*.json")):
            inbox = "contributed" in q.relative_to(p).parts[:-1] or q.name.startswith("contribution-")
            if not q.name.startswith(".") and (contributions or not inbox):
                yield q


def json_schema() -> dict:
    """The JSON Schema of the results format, published for contributors."""
    return ResultsFile.model_json_schema()
