"""The picker's formula files (docs/assets/formulas/<model>.json): each model's entry of the committed
``llm_formulas`` table, written by `benchlib tables` right after the table, and checked against it."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from benchlib import tables
from benchlib.cli import app
from benchlib.derive import formula_assets


def small_table(*names: str) -> dict:
    """A table of the written shape, with a setup each (its contents are not read here)."""
    return {
        "table": "llm_formulas",
        "setups": {"inference-bf16": {"mode": "inference"}},
        "models": [
            {"model": name, "title": name.title(), "max_positions": 4096, "setups": {"inference-bf16": {"memory": [0]}}}
            for name in names
        ],
    }


def test_the_committed_files_are_what_the_committed_table_gives():
    table = tables.read(formula_assets.TABLE)
    reasons = formula_assets.stale_assets(table)
    assert not reasons, (
        f"the picker's formulas are not the committed table's ({'; '.join(reasons[:3])}): run "
        f"`{tables.refresh_command(formula_assets.TABLE)}` and commit docs/assets/formulas/"
    )
    names = sorted(p.stem for p in formula_assets.assets_folder().glob("*.json"))
    assert names == sorted(m["model"] for m in table["models"])


def test_each_file_is_one_models_entry_compact_and_the_writer_removes_a_model_no_longer_held(tmp_path):
    table = small_table("tiny-1b", "small-2b")
    (tmp_path / "gone-7b.json").write_text("{}", encoding="utf-8")
    (tmp_path / "notes.txt").write_text("kept", encoding="utf-8")
    written = formula_assets.write_assets(table, tmp_path)
    assert [p.name for p in written] == ["tiny-1b.json", "small-2b.json"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["notes.txt", "small-2b.json", "tiny-1b.json"]
    text = (tmp_path / "tiny-1b.json").read_text(encoding="utf-8")
    assert json.loads(text) == table["models"][0]
    assert ": " not in text and ", " not in text and text.count("\n") == 1
    assert formula_assets.stale_assets(table, tmp_path) == []
    assert formula_assets.write_assets(table, tmp_path) == [], "a file that holds its text already is left"


def test_a_changed_missing_or_left_over_file_is_stale_and_named(tmp_path):
    table = small_table("tiny-1b", "small-2b")
    formula_assets.write_assets(table, tmp_path)
    (tmp_path / "tiny-1b.json").write_text("{}\n", encoding="utf-8")
    (tmp_path / "small-2b.json").unlink()
    (tmp_path / "gone-7b.json").write_text("{}\n", encoding="utf-8")
    assert formula_assets.stale_assets(table, tmp_path) == [
        f"{tmp_path / 'tiny-1b.json'} is not what the table gives",
        f"{tmp_path / 'small-2b.json'} is missing",
        f"{tmp_path / 'gone-7b.json'} is of a model the table doesn't hold",
    ]


def test_a_model_name_that_cant_be_a_file_name_is_one_clear_error(tmp_path):
    with pytest.raises(ValueError, match=r"llm_formulas: model '\.\./evil' can't be a file name"):
        formula_assets.write_assets(small_table("../evil"), tmp_path)
    assert not list(tmp_path.iterdir())


def test_benchlib_tables_writes_the_files_right_after_the_formulas_table(tmp_path, monkeypatch):
    table = small_table("tiny-1b")
    fake = tables.Table(
        name=formula_assets.TABLE,
        description="a test's",
        compute=lambda on_step: {k: v for k, v in table.items() if k != "table"},
        inputs=lambda: {},
    )
    tables.all_tables()  # the real one registered first, then stood in for
    monkeypatch.setitem(tables._REGISTRY, formula_assets.TABLE, fake)
    result = CliRunner().invoke(app, ["tables", "--only", formula_assets.TABLE, "--out", str(tmp_path)])
    assert result.exit_code == 0, result.output
    output = " ".join(result.output.split())
    assert f"wrote 1 models' formulas into {tmp_path / 'formulas'}" in output
    assert json.loads((tmp_path / "formulas" / "tiny-1b.json").read_text(encoding="utf-8")) == table["models"][0]
    assert json.loads((tmp_path / "llm_formulas.json").read_text(encoding="utf-8"))["models"] == table["models"]
    # Again, with nothing changed: the files are left as they are.
    result = CliRunner().invoke(app, ["tables", "--only", formula_assets.TABLE, "--out", str(tmp_path)])
    output = " ".join(result.output.split())
    assert f"kept {tmp_path / 'formulas'}: the 1 models' formulas are unchanged" in output, output
