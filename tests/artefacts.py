"""Expensive things the tests read, each made once per key under a lock (as asv's ``locked_cache_dir``).

A measured run, a tiny contribution, a QLoRA run, a site build: each is made by the first test
that asks for it, in a folder under pytest's cache (``.pytest_cache/d/benchlib-artefacts/``),
while a file lock keeps every other pytest-xdist worker waiting for it instead of making it too.
Every later test, in this run or a later one, reads the same folder while its key holds.

The key is a digest of benchlib's code and data (every file of the package), of the test helpers
that make artefacts, and of the inputs the caller names (snippets, pages, environment values), so
a change to any of them makes the artefact again. A ``make`` that raises leaves nothing behind:
the next test to ask tries again, and fails with the same message.
"""

from __future__ import annotations

import fcntl
import functools
import hashlib
import json
import shutil
import subprocess
import sys
from collections.abc import Callable, Iterable
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
TESTS = Path(__file__).resolve().parent
# What every artefact depends on besides its own inputs: the package, and how tests make artefacts.
ALWAYS = (ROOT / "benchlib", ROOT / "pyproject.toml", TESTS / "artefacts.py", TESTS / "conftest.py")
FOLDER = "benchlib-artefacts"
DONE = ".done"  # written last: a folder without it is a make that was cut short


def _files(path: Path) -> list[Path]:
    if path.is_dir():
        return sorted(p for p in path.rglob("*") if p.is_file() and "__pycache__" not in p.parts)
    return [path]


def digest(inputs: Iterable[Path | str]) -> str:
    """A short hash of files (a folder: every file below it, by relative name and bytes) and strings."""
    h = hashlib.sha256()
    for item in inputs:
        if isinstance(item, Path):
            for path in _files(item):
                h.update(str(path.relative_to(ROOT) if path.is_relative_to(ROOT) else path).encode() + b"\0")
                h.update(path.read_bytes() if path.exists() else b"(missing)")
        else:
            h.update(b"str\0" + item.encode())
        h.update(b"\0\0")
    return h.hexdigest()[:16]


@functools.cache
def code_digest() -> str:
    """The part of every key that says which benchlib (and which Python) made the artefact."""
    return digest([*ALWAYS, sys.version])


def artefact_root(config: pytest.Config) -> Path:
    """Where artefacts live: pytest's cache folder, shared by the workers and kept between runs."""
    cache = getattr(config, "cache", None)  # None with `-p no:cacheprovider`
    root = cache.mkdir(FOLDER) if cache is not None else ROOT / ".cache" / FOLDER
    root.mkdir(parents=True, exist_ok=True)
    return root


def made(config: pytest.Config, name: str, inputs: Iterable[Path | str], make: Callable[[Path], None]) -> Path:
    """The folder holding artefact ``name`` for these inputs, made by ``make(folder)`` if no run made it yet.

    ``make`` writes into the artefact's empty folder (so paths it records stay true); the folder
    counts as made only once ``make`` returns, so a reader never takes half an artefact.
    """
    key = digest([code_digest(), name, *inputs])
    root = artefact_root(config)
    folder = root / f"{name}-{key}"
    with open(root / f"{name}-{key}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes, also if this process dies
        if (folder / DONE).exists():
            return folder
        shutil.rmtree(folder, ignore_errors=True)  # what a make that was cut short left
        folder.mkdir()
        try:
            make(folder)
        except BaseException:
            shutil.rmtree(folder, ignore_errors=True)
            raise
        (folder / DONE).write_text(name)
    _prune(root, name, keep=folder)
    return folder


KEPT_KEYS = 2  # besides the newest, the artefacts of this many earlier keys stay (another checkout's code)


def _prune(root: Path, name: str, keep: Path) -> None:
    """Remove the oldest artefacts named ``name`` beyond `KEPT_KEYS`, so a working copy's cache stays small."""
    older = [p for p in root.glob(f"{name}-*") if p.is_dir() and p != keep and len(p.name) == len(keep.name)]
    for stale in sorted(older, key=lambda p: p.stat().st_mtime, reverse=True)[KEPT_KEYS:]:
        shutil.rmtree(stale, ignore_errors=True)
        (root / f"{stale.name}.lock").unlink(missing_ok=True)


def keep_run(run: subprocess.CompletedProcess[str], path: Path) -> None:
    """Keep a command's outcome in an artefact, for `kept_run` to give back to the tests."""
    fields = {"args": run.args, "returncode": run.returncode, "stdout": run.stdout, "stderr": run.stderr}
    path.write_text(json.dumps(fields), encoding="utf-8")


def kept_run(path: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.CompletedProcess(**json.loads(path.read_text(encoding="utf-8")))
