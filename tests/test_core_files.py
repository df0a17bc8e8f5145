"""The one atomic write: the old file stays whole when a write fails, and nothing is left behind."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from benchlib.core import files


def test_a_write_replaces_the_file_and_leaves_no_temp_file(tmp_path: Path) -> None:
    target = tmp_path / "sub" / "a.json"
    files.write_json_atomically(target, {"x": "é"})
    files.write_json_atomically(target, {"x": 2})
    assert target.read_text(encoding="utf-8") == '{\n "x": 2\n}\n'
    assert files.stale_temp_files(target) == []
    assert oct(target.stat().st_mode & 0o777) == oct(0o644)


def test_a_failed_write_keeps_the_old_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    target = tmp_path / "a.txt"
    files.write_atomically(target, "old")

    def full_disk(*args: object) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", full_disk)
    with pytest.raises(OSError):
        files.write_atomically(target, "new")
    assert target.read_text(encoding="utf-8") == "old"
    assert files.stale_temp_files(target) == []


def test_stale_temp_files_finds_what_a_killed_writer_left(tmp_path: Path) -> None:
    target = tmp_path / "a.json"
    left = tmp_path / ".a.json.k3j2.tmp"
    left.write_text("{")
    assert files.stale_temp_files(target) == [left]
