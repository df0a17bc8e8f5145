"""The shell snippets on the Run it yourself page, run as a reader would run them.

Each runs with bash in a copy of the project (so the build writes site/ and results/ there, not
here), with this environment's scripts (benchlib, mkdocs) first on PATH.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest
from fakes import QUICK_STAND_IN, QUICK_STAND_INS

from benchlib.core.cache import CACHE_ENV
from benchlib.results.contribution import validate_paths
from benchlib.results.store import read_results

ROOT = Path(__file__).resolve().parents[1]
SNIPPETS = ROOT / "snippets" / "site"
pytestmark = pytest.mark.slow


def reader_env(**extra: str) -> dict[str, str]:
    # benchlib's settings are the reader's defaults, except the cache: this session's own folder
    # (tests/conftest.py), so the snippets neither read nor write the user's.
    env = {k: v for k, v in os.environ.items() if not k.startswith("BENCHLIB_") or k == CACHE_ENV}
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    env["NO_MKDOCS_2_WARNING"] = "1"
    return env | extra


def run_snippet(name: str, cwd: Path, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["bash", "-e", str(SNIPPETS / name)],
        cwd=cwd,
        env=reader_env(**env),
        capture_output=True,
        text=True,
        timeout=900,
    )


@pytest.fixture(scope="module")
def project(tmp_path_factory) -> Path:
    """A copy of the repository as a reader's clone has it, plus the measurement and notebook caches."""
    copy = tmp_path_factory.mktemp("clone") / "project"
    skip = shutil.ignore_patterns("__pycache__", "*.egg-info", ".pytest_cache")

    def ignore(folder: str, names: list[str]) -> set[str]:
        top = {".venv", ".git", "site"} & set(names) if Path(folder) == ROOT else set()
        return top | skip(folder, names)

    shutil.copytree(ROOT, copy, ignore=ignore)
    return copy


def test_every_site_snippet_is_on_a_page_and_tested():
    pages = "".join(p.read_text(encoding="utf-8") for p in (ROOT / "docs").rglob("*.md"))
    tested = {"measure.sh", "build.sh", "serve.sh", "resume.sh"}
    for snippet in SNIPPETS.iterdir():
        assert f'--8<-- "snippets/site/{snippet.name}"' in pages, f"{snippet.name} is on no page"
        assert snippet.name in tested, f"{snippet.name} has no test here"


def test_measure_writes_a_valid_results_file(tmp_path):
    run = run_snippet("measure.sh", tmp_path, **QUICK_STAND_IN)
    assert run.returncode == 0, run.stdout + run.stderr
    good, bad = validate_paths([tmp_path / "results"])
    assert len(good) == 1 and not bad
    assert "1 valid, 0 invalid" in run.stdout


def test_build_makes_the_site_twice_the_second_with_this_machine(project, measurement_cache):
    # The measured build finds this machine's quick measurement in the cache, as a reader's second
    # build does: the session's (tests/conftest.py), made once for every build.
    run = run_snippet("build.sh", project, **{CACHE_ENV: str(measurement_cache)})
    assert run.returncode == 0, (run.stdout + run.stderr)[-4000:]
    results_page = (project / "site" / "benchmarks" / "results" / "index.html").read_text(encoding="utf-8")
    assert "the machine that built this site" in results_page
    assert (project / "site" / "notebooks" / "run-benchlib" / "index.html").is_file()


def test_serve_answers_on_its_address(project):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    server = subprocess.Popen(
        ["bash", str(SNIPPETS / "serve.sh")],
        cwd=project,
        env=reader_env(DEV_ADDR=f"127.0.0.1:{port}"),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        deadline = time.monotonic() + 300
        while True:
            try:
                # The address redirects to the path of site_url, where MkDocs serves the site.
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=5) as home:
                    base = home.url
                with urllib.request.urlopen(f"{base}benchmarks/results/", timeout=5) as response:
                    assert response.status == 200
                    assert b"Benchmark results" in response.read()
                    break
            except OSError:
                assert server.poll() is None, f"mkdocs serve exited: {server.stderr.read()[-4000:]}"
                assert time.monotonic() < deadline, "mkdocs serve did not answer within 300 s"
                time.sleep(1)
    finally:
        os.killpg(server.pid, signal.SIGTERM)  # the session started above: bash and its mkdocs
        server.wait(timeout=30)


def test_resume_snippet_finishes_a_budget_cut_run(tmp_path):
    """A zero budget skips every workload; the resume line then runs them into the same file.
    (The quick suite is the stand-in: the real one's run is the builds' measurement, checked in
    tests/test_site_notebook.py.)"""
    out = tmp_path / "drive"
    result = run_snippet("resume.sh", tmp_path, OUT=str(out), SUITE="quick", BUDGET="0", **QUICK_STAND_IN)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "skipped" in " ".join(result.stderr.split())
    good, bad = validate_paths([out])
    assert not bad and len(good) == 1
    finished = read_results(good[0])
    assert finished.complete
    assert sorted((m.workload, m.status) for m in finished.measurements) == [(w, "ok") for w in QUICK_STAND_INS]


def test_resume_snippet_ends_green_when_the_budget_was_enough(tmp_path):
    """The run finishes within its budget; the resume line then has nothing to do, and says so."""
    out = tmp_path / "drive"
    result = run_snippet("resume.sh", tmp_path, OUT=str(out), SUITE="quick", BUDGET="3600", **QUICK_STAND_IN)
    assert result.returncode == 0, result.stdout + result.stderr
    (path,) = validate_paths([out])[0]
    assert read_results(path).complete
    assert f"nothing left to run; {path} is complete" in " ".join(result.stderr.split())
