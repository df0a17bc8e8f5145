"""Where benchlib finds the project's folders: configuration, not where benchlib is installed."""

from __future__ import annotations

from pathlib import Path

import pytest

from benchlib.core import paths

CONFIG = """site_name: x
docs_dir: pages
site_url: !ENV [SITE_URL, "https://example.org/"]
markdown_extensions:
  - pymdownx.emoji:
      emoji_index: !!python/name:material.extensions.emoji.twemoji
extra:
  benchlib:
    results_dir: data/runs
"""


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (tmp_path / "mkdocs.yml").write_text(CONFIG, encoding="utf-8")
    (tmp_path / "sub" / "deeper").mkdir(parents=True)
    monkeypatch.chdir(tmp_path / "sub" / "deeper")
    for name in ("MKDOCS_CONFIG_DIR", paths.RESULTS_ENV, paths.REPORTED_ENV, paths.REFERENCE_ENV, paths.DOCS_ENV):
        monkeypatch.delenv(name, raising=False)
    return tmp_path


def test_the_project_is_the_nearest_folder_with_mkdocs_yml(project: Path) -> None:
    assert paths.project_root() == project


def test_mkdocs_yml_names_the_folders_and_defaults_fill_the_rest(project: Path) -> None:
    assert paths.results_dir() == project / "data" / "runs"
    assert paths.docs_dir() == project / "pages"
    assert paths.reported_dir() == project / "results" / "reported"
    assert paths.reference_dir() == project / "results" / "reference"


def test_the_environment_wins(project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(paths.RESULTS_ENV, str(tmp_path / "elsewhere"))
    monkeypatch.setenv(paths.REPORTED_ENV, "cited")  # relative: to the project root
    assert paths.results_dir() == tmp_path / "elsewhere"
    assert paths.reported_dir() == project / "cited"


def test_mkdocs_config_dir_is_the_root_while_mkdocs_builds(
    project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    other = tmp_path / "other"
    other.mkdir()
    monkeypatch.setenv("MKDOCS_CONFIG_DIR", str(other))
    assert paths.project_root() == other and paths.results_dir() == other / "results"


def test_nothing_in_benchlib_reaches_outside_the_package_through_its_own_file() -> None:
    package = Path(paths.__file__).parent
    offenders = [
        f"{py.relative_to(package)}:{n}"
        for py in package.rglob("*.py")
        for n, line in enumerate(py.read_text(encoding="utf-8").splitlines(), 1)
        if "__file__" in line and ".parents[" in line
    ]
    assert not offenders, offenders
