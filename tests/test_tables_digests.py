"""A table's digests cover what changes its values: a data file's values but not its prose, a
module's code but not its comments, docstrings or layout; and `benchlib tables --check` says which
input changed. Every edit here is to a copy in a temporary folder, never to a real file."""

from __future__ import annotations

import ast
import json
import re
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest
from typer.testing import CliRunner

from benchlib import tables
from benchlib.cli import app
from benchlib.core.package_data import data_file, load_yaml


@pytest.fixture
def fake_table(tmp_path, monkeypatch) -> Callable[[Callable[[], dict[str, str]]], tables.Table]:
    """A table of the given inputs, written into a folder of its own."""
    folder = tmp_path / "tables"
    folder.mkdir()
    monkeypatch.setattr(tables, "table_file", lambda name: folder / name)

    def make(inputs: Callable[[], dict[str, str]]) -> tables.Table:
        table = tables.Table(name="fake", description="a test's", compute=lambda on_step: {}, inputs=inputs)
        monkeypatch.setitem(tables._REGISTRY, "fake", table)
        tables.write(table, tables.compute(table))
        return table

    return make


def check_lines() -> list[str]:
    """What `benchlib tables --check --only fake` prints, a line each."""
    result = CliRunner().invoke(app, ["tables", "--check", "--only", "fake"])
    assert isinstance(result.exception, SystemExit | None), result.exception
    return result.output.splitlines()


@pytest.fixture
def data_copy(tmp_path, monkeypatch) -> Callable[[str], Path]:
    """A copy of a real data file, which `data_digests` then reads instead."""
    copies = tmp_path / "data"
    copies.mkdir()
    monkeypatch.setattr(tables, "data_file", lambda name: copies / name)
    return lambda name: Path(shutil.copy(data_file(name), copies / name))


def edit(path: Path, pattern: str, replacement: str | Callable[[re.Match[str]], str]) -> None:
    """Replace the first match of ``pattern`` in the file; fail if the file no longer has one."""
    text, count = re.subn(pattern, replacement, path.read_text(encoding="utf-8"), count=1)
    assert count == 1, f"{path.name} has no {pattern!r} to edit any more: pick another"
    path.write_text(text, encoding="utf-8")


def test_a_prose_edit_to_a_data_file_leaves_the_table_current_and_a_value_edit_names_the_file(fake_table, data_copy):
    rates = data_copy("reached_rates.yaml")
    fake_table(lambda: tables.data_digests("reached_rates.yaml"))
    edit(rates, r"\n  note: >-\n    ", r"\n  note: >-\n    Reworded, over\n    two lines. ")  # a source's note
    edit(rates, r"\n  quote: '", r"\n  quote: 'a closer ")
    edit(rates, r"\n  shape: ", r"\n  shape: as run, ")
    edit(rates, r"^", "# A comment on the file.\n")
    assert check_lines() == ["fake: current"]
    edit(rates, r"\n  value: ([0-9.]+)", lambda number: f"\n  value: {float(number[1]) + 1}")
    assert check_lines()[1:3] == [
        "  - data/reached_rates.yaml changed",
        "  Refresh it with `benchlib tables --only fake`.",
    ]


def test_a_note_that_a_table_reads_is_no_prose(fake_table, data_copy):
    """A published peak's note marks a figure SUSPECT or OFFLOADING, which leaves its row out."""
    published = data_copy("published_llm_memory.yaml")
    fake_table(lambda: tables.data_digests("published_llm_memory.yaml"))
    edit(published, r"\n  note: 'SUSPECT: ", "\n  note: 'Checked: ")
    assert "  - data/published_llm_memory.yaml changed" in check_lines()


def test_no_committed_table_holds_a_prose_field_of_the_data_it_reads():
    """What a table copies into its values is no prose for it: its digest must cover it."""
    for name, table in tables.all_tables().items():
        held = "\n".join(_strings(json.loads(table.path.read_text(encoding="utf-8"))))
        for data in (key.removeprefix("data/") for key in table.inputs() if key.startswith("data/")):
            prose = _prose_texts(data)
            assert prose, f"{data}: no prose field found; does DATA_PROSE still name its fields?"
            # Short texts ("A100", "fp16") would match by chance.
            copied = [text for text in prose if len(text) >= 20 and text in held]
            assert not copied, f"{name} holds prose of {data}; take its field out of DATA_PROSE: {copied[0]!r}"


def _strings(value: object) -> list[str]:
    if isinstance(value, dict):
        return [s for v in value.values() for s in _strings(v)]
    if isinstance(value, list):
        return [s for v in value for s in _strings(v)]
    return [value] if isinstance(value, str) else []


def _prose_texts(name: str) -> list[str]:
    values = load_yaml(data_file(name).read_text(encoding="utf-8"))
    return [
        str(entry[field]).strip()
        for section, fields in tables.DATA_PROSE.get(name, {}).items()
        for entry in values[section]
        for field in fields
        if entry.get(field)
    ]


# ----------------------------------------------------------------------------- code

LLM_MEMORY = Path(tables.__file__).parents[1] / "predict" / "llm_memory.py"


def test_comments_docstrings_and_layout_leave_a_modules_digest_and_a_constant_changes_it():
    source = LLM_MEMORY.read_text(encoding="utf-8")
    tree = ast.parse(source)
    lines = source.splitlines(keepends=True)
    docstring = tree.body[0]
    assert isinstance(docstring, ast.Expr), "llm_memory.py has a module docstring"
    redocumented = "".join(
        [*lines[: docstring.lineno - 1], '"""Another docstring."""\n', *lines[docstring.end_lineno :]]
    )
    commented = source.replace("\ndef ", "\n# A comment above every function.\n\n\ndef ")
    assert commented.count("# A comment above every function.") > 1
    unchanged = tables.source_digest(source)
    assert tables.source_digest(redocumented) == tables.source_digest(commented) == unchanged

    number = next(
        node
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant) and type(node.value) in (int, float) and node.lineno == node.end_lineno
    )
    line = lines[number.lineno - 1]
    lines[number.lineno - 1] = f"{line[: number.col_offset]}{number.value + 1}{line[number.end_col_offset :]}"
    assert tables.source_digest("".join(lines)) != unchanged


def test_a_predictors_code_edit_names_the_module_and_a_comment_edit_leaves_the_table_current(
    fake_table, tmp_path, monkeypatch
):
    package = tmp_path / "benchlib"
    (package / "tables").mkdir(parents=True)
    (package / "predict").mkdir()
    (package / "tables" / "fake.py").write_text(
        "def compute():\n    from benchlib.predict.rates import PEAK\n\n    return {'peak': PEAK}\n", encoding="utf-8"
    )
    rates = package / "predict" / "rates.py"
    rates.write_text('"""Peaks."""\n\nPEAK = 312.0  # TFLOPS\n', encoding="utf-8")
    monkeypatch.setattr(tables, "PACKAGE_DIR", package)
    fake_table(lambda: tables.code_digests("benchlib.tables.fake"))
    rates.write_text('"""The peaks, in TFLOPS."""\n\n# From the specs.\nPEAK = 312.0\n', encoding="utf-8")
    assert check_lines() == ["fake: current"]
    rates.write_text('"""The peaks, in TFLOPS."""\n\nPEAK = 300.0\n', encoding="utf-8")
    assert check_lines()[1] == "  - code/benchlib/predict/rates.py changed"


def test_inputs_of_a_kind_a_table_recorded_none_of_are_one_reason(fake_table):
    inputs = {"data/gpus.yaml": "1"}
    table = fake_table(lambda: inputs)
    inputs.update({f"code/benchlib/predict/{name}.py": "1" for name in ("count", "engines", "roofline")})
    assert tables.stale_reasons(table) == ["3 code/ inputs are new (it recorded none)"]
    tables.write(table, tables.compute(table))
    inputs["code/benchlib/predict/hosts.py"] = "1"
    assert tables.stale_reasons(table) == ["code/benchlib/predict/hosts.py is new"]
