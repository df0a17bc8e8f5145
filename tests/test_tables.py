"""The committed tables match their inputs, and `benchlib tables` computes, writes and checks them."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest
from typer.testing import CliRunner

from benchlib import tables
from benchlib.cli import app

EXPECTED = {"buying_guide", "can_i_run_it", "searched", "speed_check"}


@pytest.mark.parametrize("name", sorted(tables.all_tables()))
def test_every_committed_table_matches_its_inputs(name):
    table = tables.all_tables()[name]
    reasons = tables.stale_reasons(table)
    assert not reasons, f"{table.path} is stale ({'; '.join(reasons)}): run `{table.refresh}` and commit the file"


def test_every_table_beside_its_module_is_registered():
    folder = Path(tables.__file__).parent
    files = {p.stem for p in folder.glob("*.json")}
    modules = {p.stem for p in folder.glob("*.py") if not p.name.startswith("_")}
    assert files == modules == set(tables.all_tables()) >= EXPECTED


@pytest.fixture
def fake(tmp_path, monkeypatch):
    """A table of one input file, kept in a folder of its own: its values are the input's text."""
    source = tmp_path / "input.txt"
    source.write_text("one", encoding="utf-8")
    folder = tmp_path / "tables"
    folder.mkdir()
    table = tables.Table(
        name="fake",
        description="a test's",
        compute=lambda on_step: on_step("reading") or {"value": source.read_text(encoding="utf-8")},
        inputs=lambda: {"input.txt": tables.digest_bytes(source.read_bytes())},
        summary=lambda contents: f"value {contents['value']}",
    )
    monkeypatch.setattr(tables, "table_file", lambda name: folder / name)
    monkeypatch.setitem(tables._REGISTRY, "fake", table)
    return table, source


def test_a_table_is_stale_when_an_input_changes_or_is_missing(fake):
    table, source = fake
    assert tables.stale_reasons(table) == ["there is no such file yet"]
    tables.write(table, tables.compute(table))
    assert tables.stale_reasons(table) == []
    written = tables.read("fake")
    assert written["value"] == "one" and written["inputs"] == table.inputs() and written["created"]
    source.write_text("two", encoding="utf-8")
    assert tables.stale_reasons(table) == ["input.txt changed"]


def test_a_table_computed_with_other_versions_is_stale(fake, monkeypatch):
    table, _ = fake
    tables.write(table, tables.compute(table))
    monkeypatch.setattr(tables, "locked_versions", lambda packages: {"benchlib": "9.9.9"})
    assert tables.stale_reasons(table) == [
        f"computed with benchlib {tables.installed_versions(())['benchlib']}, benchlib is now 9.9.9"
    ]


def test_check_names_each_stale_table_and_the_command_that_refreshes_it(fake):
    table, _ = fake
    result = CliRunner().invoke(app, ["tables", "--check", "--only", "fake"])
    assert result.exit_code == 1
    assert result.output.splitlines() == [
        f"error: {table.path} is stale:",
        "  - there is no such file yet",
        "  Refresh it with `benchlib tables --only fake`.",
        "1 stale table; refresh with:",
        "  benchlib tables --only fake",
    ]


@pytest.mark.parametrize(
    ("field", "value", "said"),
    [
        ("inputs", ["input.txt"], "its 'inputs' field is a list, not a mapping of input names to digests"),
        ("inputs", {"input.txt": 3}, "its 'inputs' field is a mapping whose values are not all text"),
        ("inputs", None, "it has no 'inputs' field"),
        ("versions", ["benchlib", "0.1.0"], "its 'versions' field is a list, not a mapping of packages to versions"),
        ("versions", "0.1.0", "its 'versions' field is a str, not a mapping of packages to versions"),
        ("versions", None, "it has no 'versions' field"),
    ],
)
def test_check_names_the_field_of_a_table_of_the_wrong_shape(fake, field, value, said):
    table, _ = fake
    contents = tables.compute(table)
    if value is None:
        del contents[field]
    else:
        contents[field] = value
    tables.write(table, contents)
    result = CliRunner().invoke(app, ["tables", "--check", "--only", "fake"])
    assert result.exit_code == 1 and "Traceback" not in result.output
    assert result.output.splitlines()[:2] == [f"error: {table.path} is stale:", f"  - {said}"]


def test_benchlib_tables_writes_what_check_then_finds_current(fake):
    table, _ = fake
    result = CliRunner().invoke(app, ["tables", "--only", "fake"])
    assert result.exit_code == 0, result.output
    assert f"wrote {table.path}: value one" in " ".join(result.output.split())
    assert json.loads(table.path.read_text(encoding="utf-8"))["table"] == "fake"
    assert not list(table.path.parent.glob(".*")), "no temporary file left behind"
    result = CliRunner().invoke(app, ["tables", "--check", "--only", "fake"])
    assert result.exit_code == 0 and "fake: current" in result.output


def test_a_second_run_keeps_an_unchanged_file_as_it_was_and_a_changed_input_writes_it(fake):
    table, source = fake
    assert CliRunner().invoke(app, ["tables", "--only", "fake"]).exit_code == 0
    first = table.path.read_bytes()
    result = CliRunner().invoke(app, ["tables", "--only", "fake"])
    assert result.exit_code == 0, result.output
    assert f"kept {table.path}, unchanged: value one" in " ".join(result.output.split())
    assert table.path.read_bytes() == first, "not even its date rewritten"
    source.write_text("two", encoding="utf-8")
    result = CliRunner().invoke(app, ["tables", "--only", "fake"])
    assert f"wrote {table.path}: value two" in " ".join(result.output.split())
    assert tables.read("fake")["value"] == "two"


def test_a_table_that_cant_be_written_is_one_message_and_exit_1(fake):
    result = CliRunner().invoke(app, ["tables", "--only", "fake", "--out", "/proc"])
    assert result.exit_code == 1
    output = " ".join(result.output.split())
    assert "can't write /proc/fake.json" in output and "`benchlib tables --only fake`" in output
    assert "Traceback" not in output


def test_reading_a_missing_table_says_which_command_makes_it(tmp_path):
    with pytest.raises(tables.TableMissing, match=r"run `benchlib tables --only speed_check` to make it"):
        tables.read("speed_check", tmp_path / "speed_check.json")


def test_in_a_build_a_missing_table_stops_it_with_one_message(tmp_path, monkeypatch):
    """A SystemExit gets past markdown-exec, which would log a traceback for every block."""
    from benchlib.site import can_i_run_it

    monkeypatch.setattr(tables, "table_file", lambda name: tmp_path / name)
    monkeypatch.setenv("MKDOCS_CONFIG_DIR", str(tmp_path))  # what markdown-exec sets while MkDocs builds
    can_i_run_it._table.cache_clear()
    try:
        with pytest.raises(SystemExit) as stopped:
            can_i_run_it.fit_table("qlora")
    finally:
        can_i_run_it._table.cache_clear()
    assert not isinstance(stopped.value, Exception), "markdown-exec catches every Exception"
    message = str(stopped.value)
    assert message.startswith(f"error: {tmp_path / 'can_i_run_it.json'} can't be read")
    assert message.endswith("run `benchlib tables --only can_i_run_it` to make it, then build again.")


def test_a_tables_header_is_read_without_parsing_the_values_after_it():
    # What follows the fields asked for is never parsed: here it is not even JSON.
    text = '{\n  "table": "fake",\n  "inputs": {"a": "1"}, "setups": {"s": [1, 2]},\n  "models": [not json'
    assert tables.leading_fields(text, ("inputs", "table")) == {"table": "fake", "inputs": {"a": "1"}}
    assert tables.leading_fields('{"table": "fake"}', ("table", "inputs")) == {"table": "fake"}
    with pytest.raises(ValueError):
        tables.leading_fields("[1, 2]", ("table",))


def test_reading_some_fields_still_checks_which_table_it_is(fake):
    table, _ = fake
    tables.write(table, tables.compute(table))
    assert tables.read("fake", fields=("inputs",)) == {"table": "fake", "inputs": table.inputs()}
    with pytest.raises(tables.TableMissing, match="is not the other table"):
        tables.read("other", table.path, fields=("inputs",))


def test_fresh_copies_nothing_from_the_committed_file_and_a_plain_run_may(fake, monkeypatch):
    table, _ = fake
    tables.write(table, tables.compute(table))
    offered = []

    def compute(on_step):
        offered.append(tables.committed_to_reuse("fake"))
        return {"value": "computed"}

    monkeypatch.setitem(tables._REGISTRY, "fake", replace(table, compute=compute))
    for flags in (["--fresh"], []):
        result = CliRunner().invoke(app, ["tables", "--only", "fake", *flags])
        assert result.exit_code == 0, result.output
    # The plain run is offered the file the --fresh run wrote.
    assert offered[0] is None and offered[1]["value"] == "computed"
