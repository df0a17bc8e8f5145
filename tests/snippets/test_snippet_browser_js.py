"""keep_alive.js against stand-ins for Colab's page, old and new, run under Node."""

from __future__ import annotations

import json
import shutil
import subprocess

import pytest
from snippet_runner import FAKES, SNIPPETS

NODE = shutil.which("node")
pytestmark = pytest.mark.skipif(NODE is None, reason="Node.js is needed to run the browser snippet")


def _run(page: str) -> dict:
    out = subprocess.run(
        [str(NODE), str(FAKES / "colab_page.js"), str(SNIPPETS / "keep_alive.js"), page],
        capture_output=True,
        text=True,
        timeout=30,
        check=True,
    ).stdout
    return json.loads(out)


@pytest.mark.parametrize("page", ["current", "2019"])
def test_keep_alive_clicks_connect_every_minute(page: str) -> None:
    result = _run(page)
    assert result["intervals"] == [60_000]
    assert result["clicks"] == 3
    assert result["handle"] == 42  # kept on window so clearInterval can stop it
    assert all(kind == "log" and "clicked Connect" in text for kind, text in result["lines"])


def test_keep_alive_warns_instead_of_failing_when_the_page_changed() -> None:
    result = _run("changed")
    assert result["clicks"] == 0
    assert [kind for kind, _ in result["lines"]] == ["warn"] * 3
    assert "no Connect button found" in result["lines"][0][1]
