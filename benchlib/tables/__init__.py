"""Generated tables: what a page shows that takes more than about a second to compute, computed once and committed.

A site build only reads. Predictions that trace models on fake tensors, comparisons with published
figures and the like are computed by `benchlib tables` into JSON files in this folder, each beside
the module that computes it, and the pages read those files.

A table is one module of this package that calls `register(Table(...))` at import time: its name
(``<name>.json`` is its file), what it holds, the inputs that shape it and the function that
computes it. Adding a table means adding one file here. Each file records, beside the values, the
digests of its inputs (the data and results files it read, figures such as the GPUs' rates, and
the code that computes it) and the versions it was computed with. `stale_reasons` compares them
with the inputs as they are now, without recomputing anything: ``benchlib tables --check`` and
``tests/test_tables.py`` fail while a committed table no longer matches its inputs.

A digest covers what changes a table's values, so that a table is computed again only when it
would come out different: a data file's values, not its prose (`DATA_PROSE`), and a module's
code, not its comments, docstrings or layout (`source_digest`).

This module is the reader: it imports nothing of benchlib but ``core``, so the site reads a
table (`read`), the digests of its inputs and `TableMissing` without importing the modules that
compute (which import ``predict``). The rows' record types live with what computes them in
``derive``, where the site may import them too.
"""

from __future__ import annotations

import ast
import hashlib
import json
import re
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import datetime, timezone
from functools import cache
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

from benchlib.core.files import write_atomically, write_json_atomically
from benchlib.core.package_data import data_file, load_yaml, table_file
from benchlib.core.paths import project_root
from benchlib.core.registry import add_named, import_modules
from benchlib.core.version import __version__

REFRESH = "benchlib tables"
LOCK_FILE = "requirements.lock"


@dataclass(frozen=True)
class Table:
    """One generated table.

    ``compute(on_step)`` returns the table's values (a JSON object) and calls ``on_step`` with a
    short description before each of its ``steps()`` steps, for the progress bar. ``inputs()``
    returns a digest per input, named so that a stale table says what changed (``data/gpus.yaml``,
    ``reported/lambda-dlbench-a10.json``, ``code/benchlib/predict/llm_memory.py``). ``packages``
    are the distributions whose versions shape the values (torch for a trace); benchlib's own
    version always counts. ``summary`` says in one line what a computed table holds, for
    `benchlib tables` to print.
    """

    name: str
    description: str
    compute: Callable[[Callable[[str], None]], dict[str, Any]]
    inputs: Callable[[], dict[str, str]]
    steps: Callable[[], int] = lambda: 1
    packages: tuple[str, ...] = ()
    summary: Callable[[dict[str, Any]], str] = lambda table: ""
    # Written on one line: a table of long lists of numbers (formulas) would be mostly indentation.
    compact: bool = False
    # The tables whose committed files this one is computed from: `benchlib tables` computes them first.
    reads: tuple[str, ...] = ()

    @property
    def path(self) -> Path:
        return table_file(f"{self.name}.json")

    @property
    def refresh(self) -> str:
        """The command that recomputes this table."""
        return refresh_command(self.name)


def refresh_command(name: str) -> str:
    """The command that computes the table called ``name``."""
    return f"{REFRESH} --only {name}"


class TableMissing(FileNotFoundError):
    """A table's file is not there, or is not a table: the message says which and how to make it."""


class TableStale(TableMissing):
    """A committed table that doesn't answer for the inputs read now (another folder of results,
    say): the message says why and how to make it again."""


def stale(name: str, reason: str) -> TableStale:
    """The error for the committed table ``name``, which ``reason`` says doesn't answer for the inputs read now."""
    return TableStale(f"{table_file(f'{name}.json')} {reason}; run `{refresh_command(name)}` to make it again")


_REGISTRY: dict[str, Table] = {}
_loaded = False


def register(table: Table) -> Table:
    return add_named(_REGISTRY, table, "table")


def in_order(tables: Iterable[Table]) -> list[Table]:
    """``tables`` with each after the ones among them it reads (`Table.reads`), else in the order given."""
    todo, done = list(tables), []
    while todo:
        names = {t.name for t in todo}
        ready = next(t for t in todo if not names.intersection(t.reads))
        todo.remove(ready)
        done.append(ready)
    return done


def all_tables() -> dict[str, Table]:
    """Every table, by name, in the order of the modules' names."""
    global _loaded
    if not _loaded:
        import_modules(__name__, __path__)
        _loaded = True
    return dict(sorted(_REGISTRY.items()))


# ----------------------------------------------------------------------------- digests


def digest_bytes(data: bytes) -> str:
    """A short hash: enough to tell two versions of an input apart."""
    return hashlib.sha256(data).hexdigest()[:16]


def digest_json(value: Any) -> str:
    """The digest of a JSON-able value (figures computed from specs and constants)."""
    return digest_bytes(json.dumps(value, sort_keys=True, default=str).encode())


def file_digests(paths: Iterable[Path], folder: Path, label: str) -> dict[str, str]:
    """``{"<label>/<path from folder>": digest}`` for each file: results files named as the site finds them."""
    return {f"{label}/{Path(p).relative_to(folder).as_posix()}": digest_bytes(Path(p).read_bytes()) for p in paths}


def reported_digests(folder: Path | None = None) -> dict[str, str]:
    """Digests of the reported results files (``reported/<name>``): the published figures a table compares with."""
    from benchlib.core.paths import reported_dir

    folder = folder or reported_dir()
    return file_digests(sorted(folder.glob("*.json")), folder, "reported") if folder.is_dir() else {}


# Each data file's prose: for each of its lists of entries (``models``, ``sources``, ``rows``), the
# fields that are text for people, which no table's code reads and no table copies into its values.
# `data_digests` leaves them out, so editing one recomputes nothing; every other field counts.
# tests/test_tables_digests.py checks that no committed table holds a prose field's text.
_PUBLISHED_SPEED_PROSE = {
    # The comparison reads a source's id, URL, date, GPU, host, engine and software versions; its
    # description in words (and the methodology page's title for it) is read from the file at build time.
    "sources": frozenset({"title", "page", "gpu_stated", "host_stated", "settings", "measure", "code", "note"}),
    # The model and GPU as the source words them, beside the ones the rows name for benchlib.
    "rows": frozenset({"model_stated", "gpu_stated", "quote", "note"}),
}
DATA_PROSE: dict[str, dict[str, frozenset[str]]] = {
    # How a config was checked, and notes for `benchlib predict`; can_i_run_it copies the title,
    # hf_id and release, so those count.
    "language_models.yaml": {"models": frozenset({"checked", "note"})},
    # Only the sources' notes: a row's note leaves it out (SUSPECT, OFFLOADING), a source's measure
    # and code say what its figure counts, and can_i_run_it copies each row and source whole.
    "published_llm_memory.yaml": {"sources": frozenset({"note"})},
    # The rates read a row's GPU, kind, dtype, value and date, and a source's id, URL and date.
    "reached_rates.yaml": {
        "sources": frozenset({"title", "note"}),
        "rows": frozenset({"gpu_stated", "shape", "quote", "note"}),
    },
    "published_llm_speed.yaml": _PUBLISHED_SPEED_PROSE,
    "published_llm_speed_llama_cpp.yaml": _PUBLISHED_SPEED_PROSE,
    "published_llm_speed_stacks.yaml": _PUBLISHED_SPEED_PROSE,
    "published_llm_training_speed.yaml": _PUBLISHED_SPEED_PROSE,
}


def _data_values(name: str, text: str) -> Any:
    """The values of the data file ``name`` whose text is ``text``: parsed, less its `DATA_PROSE` fields."""
    values = load_yaml(text)
    for section, prose in DATA_PROSE.get(name, {}).items():
        values[section] = [{k: v for k, v in entry.items() if k not in prose} for entry in values[section]]
    return values


def data_entry(name: str, section: str, entry: str) -> dict[str, Any]:
    """The values of the entry called ``entry`` in the list ``section`` of the data file ``name``,
    less its prose: what a table's row computed from that entry alone is computed from."""
    values = _data_values(name, data_file(name).read_text(encoding="utf-8"))
    return next(e for e in values[section] if e.get("name") == entry)


def data_digests(*names: str) -> dict[str, str]:
    """Digests of curated data files' values (``data/<name>``, from ``benchlib/data/<name>``), not their prose."""
    return {
        f"data/{name}": digest_json(_data_values(name, data_file(name).read_text(encoding="utf-8"))) for name in names
    }


# The tables this run wrote somewhere else (`benchlib tables --out DIR`): a table computed after
# one of them reads it there, not the committed file.
_WRITTEN: dict[str, Path] = {}


def wrote(name: str, path: Path) -> None:
    """Say that this run wrote the table ``name`` to ``path``, for the tables computed after it."""
    _WRITTEN[name] = path


def forget_written() -> None:
    """A new run: the tables read are the committed ones again."""
    _WRITTEN.clear()


# Whether a table may copy the values of the committed file that are computed from what they would
# be computed from now (`committed_to_reuse`); `benchlib tables --fresh` turns it off.
_REUSE = {"on": True}


def reuse_committed(on: bool) -> None:
    """Let the tables computed from now on copy unchanged values from their committed files, or not."""
    _REUSE["on"] = on


def committed_to_reuse(name: str) -> dict[str, Any] | None:
    """The committed table ``name``, for a table that copies its values computed from unchanged
    inputs; None where reuse is off or the file can't be read (every value is computed then)."""
    if not _REUSE["on"]:
        return None
    try:
        return read(name)
    except TableMissing:
        return None


def read_from(name: str) -> Path:
    """The file a table computed now reads the table ``name`` from: where this run wrote it, else
    the committed one."""
    return _WRITTEN.get(name, table_file(f"{name}.json"))


def table_digests(*names: str) -> dict[str, str]:
    """Digests of the tables ``names`` (``table/<name>.json``, as `read_from` finds them) that another
    table is computed from: of what each was computed from (its inputs' digests and versions),
    which fix its values, not of when it was written."""
    return {f"table/{name}.json": _computed_from(read_from(name)) for name in names}


def _computed_from(path: Path) -> str:
    """The digest of a table file's ``inputs`` and ``versions``; "missing" where it can't be read."""
    try:
        fields = leading_fields(path.read_text(encoding="utf-8"), ("inputs", "versions"))
    except (OSError, ValueError):
        return "missing"
    if len(fields) < 2:
        return "missing"
    return digest_json([fields["inputs"], fields["versions"]])


def leading_fields(text: str, names: Iterable[str]) -> dict[str, Any]:
    """The fields ``names`` of the JSON object ``text``, parsed one field at a time up to the last of
    them, so that the long lists written after them are never parsed (`compute` writes a table's
    header first, and its formulas' file is 21 MB); a name the object lacks is left out."""
    decoder, wanted, found = json.JSONDecoder(), set(names), {}
    at = _after_space(text, 0)
    if text[at : at + 1] != "{":
        raise ValueError("not a JSON object")
    at = _after_space(text, at + 1)
    while wanted - found.keys() and text[at : at + 1] == '"':
        name, at = decoder.raw_decode(text, at)
        at = _after_space(text, at)
        if text[at : at + 1] != ":":
            raise ValueError(f"no ':' after the field {name!r}")
        value, at = decoder.raw_decode(text, _after_space(text, at + 1))
        found[name] = value
        at = _after_space(text, at)
        at = _after_space(text, at + 1) if text[at : at + 1] == "," else at
    return {name: value for name, value in found.items() if name in wanted}


def _after_space(text: str, at: int) -> int:
    while at < len(text) and text[at] in " \t\r\n":
        at += 1
    return at


# ----------------------------------------------------------------------------- code

# benchlib's folder: a module's digest is named by its path from the folder above (code/benchlib/...).
PACKAGE_DIR = Path(__file__).resolve().parents[1]


@cache  # each table's code shares most modules with the others'
def source_digest(source: str) -> str:
    """The digest of a module's code, not of how it is written: its syntax tree less its docstrings,
    so an edit to a comment, a docstring or the layout changes nothing, and one to a constant or a
    formula does."""
    return digest_json(_code_of(ast.parse(source)))


def _code_of(node: Any) -> Any:
    """``node`` as nested lists of each node's type and fields, less docstrings. Fields that are None
    or empty are left out: Python versions add such fields (3.12's ``type_params``) and 3.13's
    `ast.dump` leaves them out, and the digest must be the same on every Python benchlib runs on."""
    if isinstance(node, list):
        return [_code_of(item) for item in node]
    if not isinstance(node, ast.AST):
        return repr(node)  # a constant or an identifier
    fields = {}
    for field, value in ast.iter_fields(node):
        if field == "body" and _has_docstring(node):
            value = value[1:]
        if value is not None and value != []:
            fields[field] = _code_of(value)
    return [type(node).__name__, fields]


def _has_docstring(node: ast.AST) -> bool:
    documented = ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef
    if not isinstance(node, documented) or not node.body:
        return False
    first = node.body[0]
    return isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) and isinstance(first.value.value, str)


def code_digests(module: str) -> dict[str, str]:
    """``{"code/benchlib/predict/llm_memory.py": digest}`` for ``module`` (a table's) and each module of
    benchlib it imports however indirectly, inside functions too: the code the table's values come
    from. Not this module, which digests and writes but computes no value."""
    sources: dict[Path, str] = {}
    todo = [module]
    while todo:
        name = todo.pop()
        path = _module_path(name)
        if path is None or path in sources or name == __name__:
            continue
        sources[path] = path.read_text(encoding="utf-8")
        for imported, attribute in _imports(sources[path]):
            # `from X import y` imports the module X.y where there is one, else a name of X.
            submodule = f"{imported}.{attribute}"
            todo.append(submodule if attribute and _module_path(submodule) else imported)
    root = PACKAGE_DIR.parent
    return {f"code/{path.relative_to(root).as_posix()}": source_digest(text) for path, text in sorted(sources.items())}


def _module_path(module: str) -> Path | None:
    """The file of benchlib's module ``module``; None for another package's or a name that is no module."""
    parts = module.split(".")
    if parts[0] != PACKAGE_DIR.name:
        return None
    folder = PACKAGE_DIR.parent.joinpath(*parts)
    for path in (folder / "__init__.py", folder.with_suffix(".py")):
        if path.is_file():
            return path.resolve()
    return None


@cache
def _imports(source: str) -> tuple[tuple[str, str | None], ...]:
    """What a module imports, inside functions too: ``(X, None)`` for ``import X``, ``(X, y)`` for ``from X import y``."""
    found: list[tuple[str, str | None]] = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found.extend((alias.name, None) for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            found.extend((node.module, alias.name) for alias in node.names)
    return tuple(found)


# ----------------------------------------------------------------------------- versions


def _base(release: str) -> str:
    """``2.14.1+cu130`` -> ``2.14.1``: a local build of the same release computes the same."""
    return release.split("+", 1)[0]


def installed_versions(packages: Iterable[str]) -> dict[str, str]:
    """The installed version of each package (read from its metadata: nothing is imported), and benchlib's."""
    found = {}
    for package in packages:
        try:
            found[package] = version(package)
        except PackageNotFoundError:
            found[package] = "not installed"
    return {**found, "benchlib": __version__}


def locked_versions(packages: Iterable[str]) -> dict[str, str] | None:
    """Each package's version pinned in the project's ``requirements.lock``, and benchlib's; None without a lock.

    Committed tables are computed with the locked versions, the ones CI installs.
    """
    lock = project_root() / LOCK_FILE
    if not lock.is_file():
        return None
    pins = dict(re.findall(r"^([A-Za-z0-9_.-]+)==(\S+)", lock.read_text(encoding="utf-8"), flags=re.M))
    pins = {name.lower().replace("_", "-"): pinned for name, pinned in pins.items()}
    return {**{p: pins.get(p.lower(), "not locked") for p in packages}, "benchlib": __version__}


# ----------------------------------------------------------------------------- reading, writing, checking


def compute(table: Table, on_step: Callable[[str], None] = lambda step: None) -> dict[str, Any]:
    """The table's file contents: when and with what it was computed, its inputs' digests, then its values."""
    values = table.compute(on_step)
    return {
        "table": table.name,
        "created": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "versions": installed_versions(table.packages),
        "inputs": table.inputs(),
        **values,
    }


def write(table: Table, contents: dict[str, Any], path: Path | None = None) -> Path:
    """Write a computed table atomically: a full disk or an interrupted run leaves the old file whole."""
    if table.compact:
        return write_atomically(
            path or table.path, json.dumps(contents, separators=(",", ":"), ensure_ascii=False) + "\n"
        )
    return write_json_atomically(path or table.path, contents)


def holds(path: Path, contents: dict[str, Any]) -> bool:
    """Whether the file at ``path`` already holds ``contents`` but for when it was written, so that
    writing them would change its date alone (and make a diff of it to commit)."""
    try:
        held = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    # As the file would hold them: tuples as lists.
    computed = json.loads(json.dumps(contents))
    return isinstance(held, dict) and {**held, "created": None} == {**computed, "created": None}


def read(name: str, path: Path | None = None, fields: Iterable[str] | None = None) -> dict[str, Any]:
    """The committed table called ``name`` (from ``path`` if given), or only its ``fields`` (read
    without parsing the values written after them: `leading_fields`); `TableMissing` naming the file
    and the command when it can't be read. Reading imports none of the modules that compute tables."""
    path = path or table_file(f"{name}.json")
    refresh = refresh_command(name)
    try:
        text = path.read_text(encoding="utf-8")
        contents = json.loads(text) if fields is None else leading_fields(text, ("table", *fields))
    except (OSError, ValueError) as exc:
        raise TableMissing(f"{path} can't be read ({exc}); run `{refresh}` to make it") from exc
    if not isinstance(contents, dict) or contents.get("table") != name:
        raise TableMissing(f"{path} is not the {name} table; run `{refresh}` to make it again")
    return contents


def stale_reasons(table: Table, path: Path | None = None) -> list[str]:
    """What no longer matches between the committed table (or its copy at ``path``) and its inputs
    now; empty when it is current.

    Compares digests only: nothing is recomputed, so this takes a moment.
    """
    path = path or table.path
    if not path.is_file():
        return ["there is no such file yet"]
    try:
        stored = read(table.name, path, fields=("inputs", "versions"))
    except TableMissing:
        return ["it is not a table `benchlib tables` wrote"]
    try:
        then = _names_to_text(stored, "inputs", "input names to digests")
        used = _names_to_text(stored, "versions", "packages to versions")
    except ValueError as exc:
        return [str(exc)]
    now = table.inputs()
    # Files of a kind the table recorded none of (``code/``, when it was computed before code
    # counted) are one reason, not one per file.
    recorded = {_kind(name) for name in then}
    new = Counter(_kind(name) for name in now if name not in then)
    unrecorded = {kind for kind, count in new.items() if kind and count > 1 and kind not in recorded}
    reasons = [f"{new[kind]} {kind} inputs are new (it recorded none)" for kind in sorted(unrecorded)]
    for name in sorted(set(now) | set(then)):
        if _kind(name) in unrecorded:
            continue
        if name not in then:
            reasons.append(f"{name} is new")
        elif name not in now:
            reasons.append(f"{name} is gone")
        elif now[name] != then[name]:
            reasons.append(f"{name} changed")
    expected = locked_versions(table.packages) or installed_versions(table.packages)
    for package, wanted in expected.items():
        if _base(str(used.get(package, "none"))) != _base(wanted):
            where = "the lock has" if package != "benchlib" else "benchlib is now"
            reasons.append(f"computed with {package} {used.get(package, 'none')}, {where} {wanted}")
    return reasons


def _kind(name: str) -> str:
    """``code/`` for ``code/benchlib/predict/count.py``: the kind of a file input; empty for another input."""
    kind, slash, _ = name.partition("/")
    return f"{kind}/" if slash else ""


def _names_to_text(stored: dict[str, Any], field: str, what: str) -> dict[str, str]:
    """``stored[field]``, a mapping of ``what`` as `compute` writes it; ValueError naming the field when
    it is missing or of another shape (an edited or merged file), which would fail the comparison."""
    if field not in stored:
        raise ValueError(f"it has no {field!r} field")
    value = stored[field]
    if not isinstance(value, dict):
        raise ValueError(f"its {field!r} field is a {type(value).__name__}, not a mapping of {what}")
    if not all(isinstance(v, str) for v in value.values()):
        raise ValueError(f"its {field!r} field is a mapping whose values are not all text")
    return value
