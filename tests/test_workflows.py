"""The GitHub Actions workflows: they lint clean, the deploy builds what the README builds without
measuring the runner, and its build and check steps run here as they would there."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
WORKFLOWS = ROOT / ".github" / "workflows"
DEPLOY = WORKFLOWS / "deploy.yml"
PULL_REQUEST = WORKFLOWS / "pull-request.yml"
ACTIONLINT = Path(sys.executable).parent / "actionlint"


def steps(path: Path, job: str) -> list[dict]:
    return yaml.safe_load(path.read_text(encoding="utf-8"))["jobs"][job]["steps"]


def readme_install() -> str:
    """The install that starts each of the README's commands."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    first = re.search(r"^python3 -m venv .*$", readme, flags=re.M).group(0)
    return first.split(" && BENCHLIB_MEASURE")[0]


def actionlint(*paths: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(ACTIONLINT), "-no-color", *map(str, paths)], capture_output=True, text=True)


def test_both_workflows_lint_clean(tmp_path: Path) -> None:
    assert {p.name for p in WORKFLOWS.glob("*.yml")} == {DEPLOY.name, PULL_REQUEST.name}
    run = actionlint(DEPLOY, PULL_REQUEST)
    assert run.returncode == 0, run.stdout + run.stderr
    # The linter does find mistakes: a job that needs one that doesn't exist.
    broken = tmp_path / "broken.yml"
    broken.write_text(DEPLOY.read_text(encoding="utf-8").replace("needs: build", "needs: bulid"), encoding="utf-8")
    assert actionlint(broken).returncode != 0


def test_the_deploy_installs_from_the_lock_builds_without_measuring_and_publishes_only_after_the_checks() -> None:
    build = steps(DEPLOY, "build")
    runs = [s.get("run", "") for s in build]
    assert readme_install() in runs
    assert ".venv/bin/mkdocs build --strict" in runs
    assert not any("BENCHLIB_MEASURE" in r or "BENCHLIB_MEASURE" in str(s.get("env", {})) for r, s in zip(runs, build))
    uses = [s.get("uses", "") for s in build]
    check = next(i for i, s in enumerate(build) if "BENCHLIB_BUILT_SITE" in s.get("env", {}))
    upload = next(i for i, u in enumerate(uses) if u.startswith("actions/upload-pages-artifact@"))
    assert runs.index(".venv/bin/mkdocs build --strict") < check < upload
    workflow = yaml.safe_load(DEPLOY.read_text(encoding="utf-8"))
    assert workflow["jobs"]["deploy"]["needs"] == "build"
    assert steps(DEPLOY, "deploy")[0]["uses"].startswith("actions/deploy-pages@")
    assert workflow[True]["push"]["branches"] == ["main"]  # YAML 1.1 reads the key `on` as True


def test_pull_requests_run_the_fast_tests_and_validate_changed_results() -> None:
    runs = " ".join(s.get("run", "") for s in steps(PULL_REQUEST, "check"))
    assert readme_install() in runs
    assert '.venv/bin/pytest -n auto -m "not slow and not browser"' in runs
    assert "benchlib validate" in runs and "results/**.json" in runs


@pytest.mark.slow
def test_the_deploy_build_and_its_checks_run_here(tmp_path: Path) -> None:
    build = next(s["run"] for s in steps(DEPLOY, "build") if "mkdocs build" in s.get("run", ""))
    check = next(s for s in steps(DEPLOY, "build") if "BENCHLIB_BUILT_SITE" in s.get("env", {}))
    site = tmp_path / "site"
    # As on a runner: no benchlib settings, and not inside this pytest session (or its xdist worker).
    env = {k: v for k, v in os.environ.items() if not k.startswith(("BENCHLIB_", "PYTEST_"))}
    env |= {"SITE_DIR": str(site)}
    built = subprocess.run(build, shell=True, cwd=ROOT, env=env, capture_output=True, text=True, timeout=1200)
    assert built.returncode == 0, (built.stdout + built.stderr)[-4000:]
    assert (site / "index.html").is_file() and (site / "gpus" / "can-i-run-it" / "index.html").is_file()
    env |= {name: str(site) for name in check["env"]}
    checked = subprocess.run(check["run"], shell=True, cwd=ROOT, env=env, capture_output=True, text=True, timeout=1200)
    assert checked.returncode == 0, (checked.stdout + checked.stderr)[-4000:]
    assert " passed" in checked.stdout and " skipped" not in checked.stdout
