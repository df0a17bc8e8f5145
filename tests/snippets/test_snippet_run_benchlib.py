"""run_benchlib.py: install benchlib with pip as a reader would, probe, run the quick suite.

The suite is three tiny stand-ins (tests/fakes.py QUICK_STAND_IN): these tests check the install
and the files the snippet leaves, not what the suite measures.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest
from fakes import QUICK_STAND_IN
from snippet_runner import REPO, RunSnippet

from benchlib.results.schema import ResultsFile

TESTS = REPO / "tests"


def _results(folder: Path) -> list[ResultsFile]:
    files = sorted(folder.rglob("*.json"))
    assert files, f"no results under {folder}"
    return [ResultsFile.model_validate_json(f.read_text()) for f in files]


@pytest.mark.slow
def test_run_benchlib_where_it_is_installed(run_snippet: RunSnippet, tmp_path: Path) -> None:
    out = run_snippet("run_benchlib.py", env={**QUICK_STAND_IN, "PYTHONPATH": f"{REPO}{os.pathsep}{TESTS}"}).stdout
    assert "results file: benchlib-results/" in out
    (results,) = _results(tmp_path / "benchlib-results")
    assert results.suite == "quick" and results.provenance.kind == "measured"
    assert {m.workload for m in results.measurements}


@pytest.mark.slow
def test_run_benchlib_installs_it_with_pip_first(tmp_path: Path) -> None:
    # A fresh environment without benchlib, like a new Colab runtime. Its dependencies come from
    # this test's environment, so pip only builds benchlib itself (from a copy of this checkout,
    # standing in for the GitHub URL).
    source = tmp_path / "benchlib-src"
    source.mkdir()
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(REPO / name, source / name)
    shutil.copytree(REPO / "benchlib", source / "benchlib", ignore=shutil.ignore_patterns("__pycache__"))
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=120)
    python = venv / "bin" / "python"
    site = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    Path(site, "_test_deps.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")

    work = tmp_path / "notebook"
    work.mkdir()
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env.update({"BENCHLIB_SPEC": str(source), "PATH": f"{venv / 'bin'}{os.pathsep}{env['PATH']}", **QUICK_STAND_IN})
    code = (REPO / "snippets" / "run_benchlib.py").read_text()
    result = subprocess.run([str(python), "-c", code], cwd=work, env=env, capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    assert (venv / "bin" / "benchlib").exists()  # pip installed the command the snippet then ran
    (results,) = _results(work / "benchlib-results")
    assert results.machine.software is not None and results.machine.software.benchlib
