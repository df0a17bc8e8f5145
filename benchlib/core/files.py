"""The one atomic write: every file benchlib writes goes through `write_atomically`.

A temp file in the target's folder, flushed and fsynced, then one rename over the target: a
reader, or a process killed mid-write, sees the old file whole or the new one whole, and a full
disk leaves the old file as it was. The temp file's name starts with a dot and ends in ``.tmp``,
so `stale_temp_files` finds what a killed writer left.
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any


def write_atomically(path: Path | str, text: str) -> Path:
    """Replace ``path`` with ``text`` (UTF-8) in one rename; on any error the old file is unchanged."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, 0o644)  # mkstemp makes the file private; these files are shared
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    _fsync_folder(path.parent)
    return path


def write_json_atomically(path: Path | str, data: Any) -> Path:
    """`write_atomically` for JSON: indented, UTF-8 kept as it is, a newline at the end."""
    return write_atomically(path, json.dumps(data, indent=1, ensure_ascii=False) + "\n")


def stale_temp_files(path: Path | str) -> list[Path]:
    """Temp files a killed `write_atomically` of ``path`` left beside it."""
    path = Path(path)
    return sorted(path.parent.glob(f".{path.name}.*.tmp"))


def _fsync_folder(folder: Path) -> None:
    """Make the rename itself durable where the filesystem allows it (Drive's FUSE mount may not)."""
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)
