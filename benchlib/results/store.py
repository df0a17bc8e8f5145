"""Reading and writing results files: atomic writes, and errors that name the file and field."""

from __future__ import annotations

import errno
import json
import math
import os
import re
import stat
import uuid
from collections.abc import Iterable, Iterator
from datetime import datetime, timezone
from pathlib import Path

from pydantic import BaseModel, ValidationError

from benchlib.core.files import stale_temp_files, write_atomically
from benchlib.core.units import format_bytes
from benchlib.core.version import METHODOLOGY_VERSION, __version__
from benchlib.results.schema import Machine, ResultsFile, RunPlan

# Read at most this much of a file: a results file is a few hundred KiB.
MAX_BYTES = 16 * 2**20
# A contribution nests about 8 levels; json and pydantic recurse into each level, so a file nested
# far deeper would crash them: it is refused before it is parsed.
MAX_DEPTH = 32
# The folders of a results folder that hold no machine's runs (the published figures, the score's
# reference and the inbox of contributions, which readers skip), and what a contribution's file
# name starts with (readers skip it too): no machine id or run id may take these names.
INBOX_FOLDER = "contributed"
RESERVED_FOLDERS = {
    "reported": "published figures",
    "reference": "the score's one reference run",
    INBOX_FOLDER: "contributions not yet imported",
}
CONTRIBUTION_PREFIX = "contribution-"
# Ids become folder and file names: no separators, no '..', nothing a filesystem treats specially.
SAFE_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,127}")
# Names Windows keeps for devices, whatever follows a dot: a clone there couldn't hold such a file.
_WINDOWS_DEVICE = re.compile(r"(con|prn|aux|nul|com[0-9]|lpt[0-9])(\..*)?", re.IGNORECASE)
_STRING = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"')
_NOT_BRACKET = re.compile(r"[^\[\]{}]+")
_INNERMOST = re.compile(r"\[\]|\{\}")
_SURROGATE = re.compile("[\ud800-\udfff]")
_NOT_UNICODE = (
    r"a lone surrogate (an escape like \ud800), which is not Unicode text and can't be stored as UTF-8; "
    "remove it, or make the file again with benchlib"
)
_TOO_DEEP = (
    f"nested deeper than {MAX_DEPTH} levels of lists and objects, which no results file is; "
    "make the file again with benchlib"
)
_LINK = "a symbolic link, which is never followed; give the file itself"


def printable(text: str) -> str:
    """``text`` with what a terminal can't show as it is (a lone surrogate, a newline) as a Python escape."""
    if text.isprintable():
        return text
    return "".join(c if c.isprintable() else c.encode("unicode_escape").decode("ascii") for c in text)


class ResultsError(ValueError):
    """A results file is unreadable or invalid; the message names the file and the field."""

    def __init__(self, path: Path | str, problems: list[str]) -> None:
        self.path = str(path)
        self.problems = problems
        super().__init__(f"{printable(self.path)}: " + "; ".join(problems))


def describe(error: ValidationError) -> list[str]:
    """Each of pydantic's errors as "field 'a.b': message"."""
    out = []
    for e in error.errors():
        field = ".".join(str(part) for part in e["loc"]) or "(top level)"
        out.append(printable(f"field '{field}': {e['msg']}"))
    return out


def _unstorable(data: object) -> list[str]:
    """Fields JSON can't carry back out: NaN or Infinity, which Python's json reads but JSON itself
    has no way to say, and text holding a lone surrogate, which UTF-8 can't hold."""
    out = []
    stack: list[tuple[tuple[str, ...], object]] = [((), data)]
    while stack:
        where, node = stack.pop()
        if isinstance(node, dict):
            for key, value in node.items():
                if _SURROGATE.search(key):
                    out.append(f"field '{printable('.'.join((*where, key)))}': its name holds {_NOT_UNICODE}")
                stack.append(((*where, key), value))
        elif isinstance(node, list):
            stack.extend(((*where, str(i)), v) for i, v in enumerate(node))
        elif isinstance(node, float) and not math.isfinite(node):
            name = "NaN" if math.isnan(node) else "Infinity"
            out.append(f"field '{printable('.'.join(where)) or '(top level)'}': {name} is not a number JSON can carry")
        elif isinstance(node, str) and _SURROGATE.search(node):
            out.append(f"field '{printable('.'.join(where)) or '(top level)'}': holds {_NOT_UNICODE}")
    return sorted(out)


def _too_deep(text: str) -> bool:
    """Whether the JSON ``text`` nests lists and objects more than MAX_DEPTH levels, judged without parsing.

    Strings and values removed, each pass removes the innermost pairs of brackets: balanced
    brackets are gone after as many passes as they are deep. Unbalanced ones are json's to report.
    """
    brackets = _NOT_BRACKET.sub("", _STRING.sub("", text))
    for _ in range(MAX_DEPTH):
        brackets, removed = _INNERMOST.subn("", brackets)
        if not removed:
            return False
    return bool(_INNERMOST.search(brackets))


def _read_regular(path: Path) -> bytes:
    """The bytes of ``path`` if it is a regular file of at most MAX_BYTES.

    Never through a symbolic link (to /dev/zero, say), never from a pipe or a device, and never
    more than MAX_BYTES + 1 bytes read, whatever `stat` says of the size (/proc's files say 0).
    """
    if path.is_symlink():
        raise ResultsError(path, [_LINK])
    # O_NOFOLLOW: a link made after the check above still isn't followed; O_NONBLOCK: opening a pipe doesn't wait for a writer.
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0)
    try:
        fd = os.open(path, flags)
    except OSError as exc:
        raise ResultsError(
            path, [_LINK if exc.errno == errno.ELOOP else f"cannot read: {exc.strerror or exc}"]
        ) from exc
    with os.fdopen(fd, "rb") as fh:
        if not stat.S_ISREG(os.fstat(fh.fileno()).st_mode):
            raise ResultsError(path, ["not a regular file (a folder, pipe or device); give a results file"])
        try:
            data = fh.read(MAX_BYTES + 1)
        except OSError as exc:
            raise ResultsError(path, [f"cannot read: {exc.strerror or exc}"]) from exc
    if len(data) > MAX_BYTES:
        raise ResultsError(path, [f"larger than a results file can be ({format_bytes(MAX_BYTES)})"])
    return data


def load_json(path: Path | str) -> dict:
    """The JSON object in ``path``; ResultsError says what is wrong with a file that isn't one.

    Only a regular file is read, never more than MAX_BYTES of it (`_read_regular`); nesting deeper
    than MAX_DEPTH is refused before it is parsed, and values that couldn't be written back after.
    """
    path = Path(path)
    try:
        text = _read_regular(path).decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ResultsError(path, [f"not UTF-8 text: {exc.reason}"]) from exc
    if _too_deep(text):
        raise ResultsError(path, [_TOO_DEEP])
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ResultsError(path, [f"not valid JSON: {exc.msg} at line {exc.lineno} column {exc.colno}"]) from exc
    except RecursionError as exc:  # unclosed brackets, which `_too_deep` leaves to json
        raise ResultsError(path, [_TOO_DEEP]) from exc
    except ValueError as exc:
        # json raises this for integers longer than Python's limit.
        raise ResultsError(path, [f"not valid JSON: {type(exc).__name__}: {str(exc)[:200]}"]) from exc
    if not isinstance(data, dict):
        raise ResultsError(path, [f"expected a JSON object at the top level, found {type(data).__name__}"])
    unstorable = _unstorable(data)
    if unstorable:
        raise ResultsError(path, unstorable)
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


def name_problems(results: ResultsFile, where: str = "") -> list[str]:
    """Why the run's ids can't name its file in `results_path`, each naming its field (under ``where``).

    Ids are a stranger's input in a contributed file: a machine id must not name a reserved folder
    (files there would break the score), nor a run id make a file that readers skip.
    """
    out = []
    again = "a name benchlib makes never is one: make the file again with benchlib contribute"
    for name, value in (("run_id", results.run_id), ("machine.id", results.machine.id)):
        field = f"field '{where}{name}': {printable(repr(value[:130]))}"
        folded = value.casefold()  # macOS and Windows don't tell Reference/ from reference/
        if not SAFE_NAME.fullmatch(value) or value.endswith("."):
            out.append(
                f"{field} can't be used as a file or folder name "
                "(letters, digits, '.', '_' and '-', at most 128, starting with a letter or digit)"
            )
        elif _WINDOWS_DEVICE.fullmatch(value):
            out.append(f"{field} is reserved: Windows keeps the name for a device; {again}")
        elif name == "machine.id" and folded in RESERVED_FOLDERS:
            out.append(f"{field} is reserved: results/{folded}/ holds {RESERVED_FOLDERS[folded]}; {again}")
        elif name == "run_id" and folded.startswith(CONTRIBUTION_PREFIX):
            out.append(
                f"{field} is reserved: a file named {CONTRIBUTION_PREFIX}*.json is a contribution, "
                f"which the site, the score and import skip; {again}"
            )
    return out


def results_text(results: ResultsFile, path: Path | str) -> str:
    """The JSON `write_results` writes for ``results``, checked to read back; ResultsError says why it can't be."""
    try:
        payload = results.model_dump_json(indent=2, exclude_none=True)
    except ValueError as exc:  # pydantic's serialization error: text or nesting JSON can't carry
        raise ResultsError(path, [f"cannot be stored as UTF-8 JSON: {printable(str(exc)[:200])}"]) from exc
    return _reads_back(ResultsFile, path, payload)


def write_results(results: ResultsFile, path: Path | str) -> Path:
    """Write ``results`` to ``path`` with the one atomic write (`benchlib.core.files`).

    A reader (or a run killed mid-write) sees either the old complete file or the new one. The
    file is checked to read back before it replaces anything, so a value JSON can't carry (NaN
    becomes null) fails here, loudly, instead of leaving an unreadable file.
    """
    return write_atomically(path, results_text(results, path))


def _reads_back(model: type[BaseModel], path: Path | str, payload: str) -> str:
    try:
        model.model_validate_json(payload)
    except ValidationError as exc:
        raise ResultsError(path, ["would not read back: " + p for p in describe(exc)]) from exc
    return payload


def write_json_text(model: type[BaseModel], path: Path | str, payload: str) -> Path:
    """Write ``payload`` atomically once it reads back as ``model``; ResultsError names what wouldn't."""
    return write_atomically(path, _reads_back(model, path, payload))


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
            inbox = INBOX_FOLDER in q.relative_to(p).parts[:-1] or q.name.startswith(CONTRIBUTION_PREFIX)
            if not q.name.startswith(".") and (contributions or not inbox):
                yield q


def json_schema() -> dict:
    """The JSON Schema of the results format, published for contributors."""
    return ResultsFile.model_json_schema()
