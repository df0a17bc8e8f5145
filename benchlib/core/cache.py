"""The one cache folder: ``$BENCHLIB_CACHE_DIR``, else the user's cache folder (``~/.cache/benchlib`` on Linux).

Never the working folder: `benchlib fit` in a notebook cell must not litter the notebook's
folder. Everything in it can be made again (traces, the site build's measurement of its machine,
an executed notebook), so a cache that can't be written is skipped with one warning, never an
error: the work is done again next time instead.
"""

from __future__ import annotations

import json
import logging
import os
from pathlib import Path
from typing import Any

from platformdirs import user_cache_path

from benchlib.core.files import write_atomically

CACHE_ENV = "BENCHLIB_CACHE_DIR"

log = logging.getLogger("benchlib.cache")
_warned: set[str] = set()


def cache_dir() -> Path:
    """The cache folder's root (it may not exist yet)."""
    configured = os.environ.get(CACHE_ENV)
    return Path(configured).expanduser() if configured else user_cache_path("benchlib", appauthor=False)


def _warn_once(what: str, exc: OSError) -> None:
    root = str(cache_dir())
    if root not in _warned:
        _warned.add(root)
        reason = exc.strerror or str(exc)
        log.warning(
            "benchlib: can't write the cache in %s (%s: %s); going on without it. Set %s to a writable folder "
            "to keep traces and measurements between runs.",
            root,
            what,
            reason,
            CACHE_ENV,
        )


def cache_folder(name: str) -> Path | None:
    """``<cache>/<name>``, created; None, after one warning, when it can't be written."""
    folder = cache_dir() / name
    try:
        folder.mkdir(parents=True, exist_ok=True)
        if not os.access(folder, os.W_OK):
            raise PermissionError(13, "Permission denied", str(folder))
    except OSError as exc:
        _warn_once(str(folder), exc)
        return None
    return folder


def write_cache_text(path: Path, text: str) -> None:
    """Keep ``text`` at ``path`` in the cache, atomically; a failed write only warns (once)."""
    try:
        write_atomically(path, text)
    except OSError as exc:
        _warn_once(str(path), exc)


def write_cache_json(path: Path, data: Any) -> None:
    """`write_cache_text` for JSON."""
    write_cache_text(path, json.dumps(data, indent=1, ensure_ascii=False) + "\n")
