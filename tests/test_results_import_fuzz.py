"""`benchlib import` and `benchlib validate` on contributed files a stranger wrote: what import writes
is a function of validated ids only.

Hypothesis takes a valid contribution and changes it as a sender could: machine and run ids with
odd characters, '..', slashes and reserved names; any field set to any JSON value; text with lone
surrogates, markup and control characters; lists nested deep; its own check and --tiny flag; the
file's encoding and name. Each example imports it beside a good contribution, and validates it.
Neither command may end in a traceback; import gives one line per file, files the good one, and
writes nothing but ``results/<machine id>/<run id>.json`` for ids a checker written here accepts.
"""

from __future__ import annotations

import copy
import json
import os
import re
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_results_contribution import machine, run
from typer.testing import CliRunner

from benchlib.cli import app
from benchlib.results.contribution import file_name, package, write_contribution

FUZZ = settings(max_examples=250, deadline=None, suppress_health_check=[HealthCheck.too_slow])
GOOD_MACHINE = "colab-tesla-t4-600d600d"
# Written here, not taken from benchlib: a name import may file under.
NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,127}")
RESERVED = {"reference", "reported", "contributed"}
OUTCOME_LINE = re.compile(r"(imported|duplicate|invalid) ")


def _contribution(m: str, minutes: int) -> dict[str, Any]:
    contribution = package([run(minutes=minutes, m=machine(m)), run(minutes=minutes + 5, m=machine(m))], tiny=False)
    with tempfile.TemporaryDirectory() as folder:
        return json.loads(write_contribution(contribution, Path(folder) / file_name(contribution)).read_text())


BASE = _contribution(machine().id, 0)
GOOD = _contribution(GOOD_MACHINE, 30)


def _paths(node: object, where: tuple = ()) -> Iterator[tuple]:
    yield where
    items = node.items() if isinstance(node, dict) else enumerate(node) if isinstance(node, list) else []
    for key, value in items:
        yield from _paths(value, (*where, key))


PATHS = [p for p in _paths(BASE) if p]
odd_ids = st.one_of(
    st.sampled_from(
        [
            "..",
            ".",
            "",
            "/",
            "a/b",
            "../../x",
            "a\\b",
            "C:x",
            "~",
            "-x",
            "x.",
            ".hidden",
            "reference",
            "Reported",
            "contributed",
            "contribution-x",
            "Contribution-1",
            "con",
            "NUL.json",
            "a\x00b",
            "\ud800",
            "é",
            "a b",
            "x" * 200,
            "[red]x[/]",
        ]
    ),
    st.text(max_size=12),
    st.from_regex(r"[A-Za-z0-9._-]{1,20}", fullmatch=True),
)
odd_text = st.one_of(
    st.sampled_from(
        ["\ud800", "\udfff x", "[/] [bold red]", "line\nbreak", "\x1b[31mred", "/home/ana/x.log", "é" * 50]
    ),
    st.text(max_size=30),
)
odd_keys = st.one_of(st.sampled_from(["\ud800", "a\nb", "[/]", "", "contribution"]), st.text(max_size=6))
json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | odd_text,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(odd_keys, inner, max_size=3),
    max_leaves=8,
)


def _set(data: Any, path: tuple, value: Any) -> None:
    """``data`` at ``path`` set to ``value``, unless an earlier change took the path away."""
    try:
        for key in path[:-1]:
            data = data[key]
        data[path[-1]] = value
    except (KeyError, IndexError, TypeError):
        pass


@st.composite
def contributed_files(draw: st.DrawFn) -> tuple[bytes, bytes]:
    """A contribution (or a run's results file) as a sender could change it, and its file name."""
    data = copy.deepcopy(BASE)
    runs = data["runs"]
    if draw(st.booleans()):
        machine_id = draw(odd_ids)
        for r in runs:
            r["machine"]["id"] = machine_id
    for r in runs:
        if draw(st.integers(0, 3)) == 0:
            r["run_id"] = draw(odd_ids)
        if draw(st.integers(0, 3)) == 0:
            r["machine"]["label"] = draw(odd_text)
        if draw(st.integers(0, 4)) == 0:
            r.update(
                complete=draw(st.booleans()),
                disturbed=draw(st.booleans()),
                suite=draw(st.sampled_from(["quick", "standard", "full"])),
            )
        if draw(st.integers(0, 8)) == 0:
            depth = draw(st.sampled_from([1, 8, 31, 33, 200, 2000, 100_000]))
            r["measurements"][0]["params"] = {"x": "[" * depth + "]" * depth}  # replaced below by real brackets
    if draw(st.integers(0, 3)) == 0:
        passed = draw(st.booleans())
        data["check"] = {
            "passed": passed,
            "problems": [] if passed else draw(st.lists(odd_text, min_size=1, max_size=2)),
            "sent_anyway": draw(st.booleans()),
        }
    if draw(st.integers(0, 6)) == 0:
        data["tiny"] = True
    for _ in range(draw(st.sampled_from([0, 0, 0, 1, 2]))):
        _set(data, draw(st.sampled_from(PATHS)), draw(json_values))
    if draw(st.integers(0, 6)) == 0 and isinstance(runs[0], dict):
        data = runs[0]  # a plain results file: one run's
    ascii_only = draw(st.booleans())
    text = json.dumps(data, ensure_ascii=ascii_only)
    text = re.sub(r'"x": "(\[+)(\]+)"', r'"x": \1\2', text)  # the nesting, as JSON lists
    encoding = draw(st.sampled_from(["utf-8"] * 6 + ["utf-8-sig", "utf-16", "latin-1"]))
    raw = text.encode(encoding, errors="surrogatepass" if encoding.startswith("utf") else "replace")
    if draw(st.integers(0, 15)) == 0:
        raw = raw[: draw(st.integers(0, len(raw)))]  # a truncated upload
    name = draw(st.sampled_from([b"contribution-x.json", b"x.json", b"[bold]x[dim].json", b"\xff.json", b"a\nb.json"]))
    return raw, name


def _files(root: Path) -> set[str]:
    return {os.path.relpath(os.path.join(folder, f), root) for folder, _, files in os.walk(root) for f in files}


def _filed_under_a_valid_id(relative: str) -> bool:
    parts = Path(relative).parts
    if len(parts) != 3 or parts[0] != "results" or not parts[2].endswith(".json"):
        return False
    machine_id, run_id = parts[1], parts[2].removesuffix(".json")
    ok = all(NAME.fullmatch(n) and not n.endswith(".") for n in (machine_id, run_id))
    return bool(ok) and machine_id.casefold() not in RESERVED and not run_id.casefold().startswith("contribution-")


@pytest.mark.slow  # 250 imports and validations: about 20 s here
@FUZZ
@given(contributed_files())
def test_import_writes_only_under_validated_ids_and_never_ends_in_a_traceback(file: tuple[bytes, bytes]) -> None:
    raw, name = file
    runner = CliRunner()
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        good = root / "good" / "contribution-good.json"
        good.parent.mkdir()
        good.write_text(json.dumps(GOOD))
        (root / "inbox").mkdir()
        with open(os.path.join(os.fsencode(root / "inbox"), name), "wb") as fh:
            fh.write(raw)
        before = _files(root)

        imported = runner.invoke(
            app, ["import", str(root / "good"), str(root / "inbox"), "--into", str(root / "results")]
        )
        assert imported.exception is None or isinstance(imported.exception, SystemExit), repr(imported.exception)
        assert imported.exit_code in (0, 1) and "Traceback" not in imported.output, imported.output
        lines = [line for line in imported.output.splitlines() if OUTCOME_LINE.match(line)]
        assert len(lines) == 2, imported.output  # one line per file
        assert lines[0].startswith(f"imported {good}"), imported.output
        written = _files(root) - before
        assert all(_filed_under_a_valid_id(p) for p in written), sorted(written)
        assert sum(p.startswith(f"results/{GOOD_MACHINE}/") for p in written) == 2

        validated = runner.invoke(app, ["validate", str(root / "inbox")])
        assert validated.exception is None or isinstance(validated.exception, SystemExit), repr(validated.exception)
        assert validated.exit_code in (0, 1) and "Traceback" not in validated.output, validated.output
