"""The tests' artefact store (tests/artefacts.py): made once per key under a lock, remade when an input changes."""

from __future__ import annotations

import multiprocessing
import time
from pathlib import Path

import pytest
from artefacts import DONE, KEPT_KEYS, made


class _Cache:
    def __init__(self, root: Path) -> None:
        self.root = root

    def mkdir(self, name: str) -> Path:
        (self.root / name).mkdir(parents=True, exist_ok=True)
        return self.root / name


class _Config:
    def __init__(self, root: Path) -> None:
        self.cache = _Cache(root)


def _counting_make(log: Path, pause_s: float = 0.0):
    def make(folder: Path) -> None:
        time.sleep(pause_s)
        with log.open("a") as fh:
            fh.write("made\n")
        (folder / "value.txt").write_text("42")

    return make


def test_an_artefact_is_made_once_per_key_and_again_when_an_input_changes(tmp_path):
    config, log, source = _Config(tmp_path / "cache"), tmp_path / "log", tmp_path / "input.txt"
    source.write_text("one")
    first = made(config, "thing", [source], _counting_make(log))
    again = made(config, "thing", [source], _counting_make(log))
    assert first == again and (first / "value.txt").read_text() == "42" and (first / DONE).is_file()
    assert log.read_text().count("made") == 1
    source.write_text("two")
    changed = made(config, "thing", [source], _counting_make(log))
    assert changed != first and log.read_text().count("made") == 2


def test_a_make_that_fails_leaves_nothing_and_the_next_test_tries_again(tmp_path):
    config, log = _Config(tmp_path / "cache"), tmp_path / "log"

    def broken(folder: Path) -> None:
        (folder / "half.txt").write_text("half")
        raise RuntimeError("the build failed")

    with pytest.raises(RuntimeError, match="the build failed"):
        made(config, "thing", ["x"], broken)
    assert not [p for p in (tmp_path / "cache").rglob("*") if p.is_dir() and p.name.startswith("thing-")]
    assert (made(config, "thing", ["x"], _counting_make(log)) / "value.txt").is_file()


def _make_in_another_process(root: str, log: str) -> None:
    made(_Config(Path(root)), "shared", ["same inputs"], _counting_make(Path(log), pause_s=0.5))


def test_workers_asking_at_once_wait_for_one_make(tmp_path):
    context = multiprocessing.get_context("fork")
    workers = [
        context.Process(target=_make_in_another_process, args=(str(tmp_path), str(tmp_path / "log"))) for _ in range(3)
    ]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(60)
    assert [w.exitcode for w in workers] == [0, 0, 0]
    assert (tmp_path / "log").read_text().count("made") == 1


def test_only_the_newest_keys_are_kept(tmp_path):
    config = _Config(tmp_path / "cache")
    folders = [made(config, "thing", [str(i)], lambda folder: None) for i in range(KEPT_KEYS + 3)]
    assert [f.is_dir() for f in folders] == [False] * 2 + [True] * (KEPT_KEYS + 1)
