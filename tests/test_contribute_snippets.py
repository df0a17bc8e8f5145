"""The contribute snippets on Run it yourself, run as a reader runs them: Colab's and Kaggle's cells
with a ``pip`` and a ``benchlib`` that record their calls (tests/test_campaign_snippets.py's
stand-ins), the CPU try for real in tests/test_results_contribution.py, and the maintainer's import here."""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
from test_campaign_snippets import INSTALL_FROM_GITHUB, run
from typer.testing import CliRunner

from benchlib.cli import app

ROOT = Path(__file__).resolve().parents[1]
FOLDER = ROOT / "snippets" / "contribute"
PAGES = [ROOT / "docs" / "benchmarks" / "run-it-yourself.md", ROOT / "docs" / "contributing.md"]


def ipython(name: str) -> list[str]:
    return [sys.executable, "-m", "IPython", "--quick", "--no-banner", "--colors=nocolor", str(FOLDER / name)]


def test_every_contribute_snippet_is_on_a_page():
    pages = "".join(page.read_text(encoding="utf-8") for page in PAGES)
    for path in FOLDER.iterdir():
        assert f'--8<-- "snippets/contribute/{path.name}"' in pages, path.name


def test_the_snippets_use_only_the_commands_flags():
    help_text = CliRunner().invoke(app, ["contribute", "--help"], env={"COLUMNS": "200"}).output
    for path in FOLDER.iterdir():
        for line in path.read_text().splitlines():
            words = shlex.split(line.lstrip("!"), comments=True)
            if words[:2] != ["benchlib", "contribute"]:
                continue
            for flag in (w for w in words if w.startswith("--")):
                assert re.search(rf"{flag}\b", help_text), (flag, path.name)


@pytest.mark.parametrize(
    ("cell", "out"), [("colab.ipy", "/content/contribution"), ("kaggle.ipy", "/kaggle/working/contribution")]
)
def test_the_notebook_cells_install_and_contribute(tmp_path, cell, out):
    pytest.importorskip("IPython")
    result, calls = run(ipython(cell), tmp_path, PYTHONPATH=str(tmp_path / "stub-modules"))
    assert result.returncode == 0, result.stdout + result.stderr
    assert calls == [["pip", *INSTALL_FROM_GITHUB], ["benchlib", "contribute", "--out", out]]


@pytest.mark.slow  # over 3 s here: kept out of the fast command (README command 3)
def test_the_maintainers_import_files_the_inbox_and_empties_it(tmp_path):
    from test_results_contribution import ready_file

    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    inbox = tmp_path / "results" / "contributed"
    path = ready_file(inbox)
    subprocess.run(["git", "-C", str(tmp_path), "add", "."], check=True)
    git_user = ["-c", "user.name=maintainer", "-c", "user.email=maintainer@example.org"]
    subprocess.run(["git", "-C", str(tmp_path), *git_user, "commit", "-qm", "merged contribution"], check=True)
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
    result = subprocess.run(
        ["bash", "-e", str(FOLDER / "import.sh")], cwd=tmp_path, env=env, capture_output=True, text=True
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert not path.exists()
    machine_folders = [p for p in (tmp_path / "results").iterdir() if p.name != "contributed"]
    assert [len(list(folder.glob("*.json"))) for folder in machine_folders] == [2]
