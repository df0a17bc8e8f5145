"""The one cache folder: from the environment or the user's cache folder, and never an error."""

from __future__ import annotations

import logging
import os
from pathlib import Path

import pytest

from benchlib.core import cache


@pytest.fixture(autouse=True)
def fresh_warnings(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(cache, "_warned", set())


def test_the_environment_names_the_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(cache.CACHE_ENV, str(tmp_path / "c"))
    assert cache.cache_dir() == tmp_path / "c"
    assert cache.cache_folder("fit") == tmp_path / "c" / "fit" and (tmp_path / "c" / "fit").is_dir()


def test_otherwise_the_users_cache_folder_not_the_working_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(cache.CACHE_ENV, raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    monkeypatch.chdir(tmp_path)
    assert cache.cache_dir() == tmp_path / "xdg" / "benchlib"


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes into a read-only folder")
def test_a_read_only_cache_is_skipped_with_one_warning(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    locked = tmp_path / "locked"
    locked.mkdir()
    locked.chmod(0o500)
    monkeypatch.setenv(cache.CACHE_ENV, str(locked))
    with caplog.at_level(logging.WARNING, logger="benchlib.cache"):
        assert cache.cache_folder("fit") is None
        assert cache.cache_folder("notebooks") is None
    assert len(caplog.records) == 1 and cache.CACHE_ENV in caplog.records[0].getMessage()


def test_a_cache_under_a_file_is_skipped_with_one_warning(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """A path that can't be a folder fails for root too: the same outcome as a read-only one."""
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    monkeypatch.setenv(cache.CACHE_ENV, str(blocker / "cache"))
    with caplog.at_level(logging.WARNING, logger="benchlib.cache"):
        assert cache.cache_folder("fit") is None
        cache.write_cache_json(blocker / "cache" / "fit" / "entry.json", {"traces": {}})
    assert len(caplog.records) == 1
    message = caplog.records[0].getMessage()
    assert str(blocker / "cache") in message and "going on without it" in message


def test_a_cache_entry_is_written_whole(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(cache.CACHE_ENV, str(tmp_path))
    entry = cache.cache_folder("fit") / "a.json"
    cache.write_cache_json(entry, {"traces": {"4": 1}})
    assert entry.read_text(encoding="utf-8") == '{\n "traces": {\n  "4": 1\n }\n}\n'
    assert not list(entry.parent.glob(".*.tmp"))
