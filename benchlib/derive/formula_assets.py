"""The formulas as the "Can I run it?" picker fetches them: one file per model, from the committed table.

``benchlib/tables/llm_formulas.json`` holds every shipped model's memory and time formulas, a few
megabytes in all. The picker (docs/assets/javascripts/can-i-run-it.js) needs one model's at a
time, so `benchlib tables` writes each model's entry of the table, and nothing else, to
``docs/assets/formulas/<model>.json`` right after it writes the table (`write_assets`), and
removes the file of a model the table no longer holds. The files are committed with the table;
``tests/test_derive_formula_assets.py`` checks they are exactly what the committed table gives
(`stale_assets`).

Here, below both the command that writes them and the site, and given the table's contents: the
reader of committed tables is theirs to call.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from benchlib.core.files import write_atomically
from benchlib.core.paths import docs_dir

TABLE = "llm_formulas"
# A model's name as a file name: shipped models are named so (`llama-3.1-8b`).
_NAME = re.compile(r"[a-z0-9][a-z0-9._-]*")


def assets_folder() -> Path:
    """Where the site serves the formulas from, inside the configured docs folder."""
    return docs_dir() / "assets" / "formulas"


def asset_texts(table: dict[str, Any]) -> dict[str, str]:
    """Each model's file name and text: its entry of ``table``, compact."""
    texts = {}
    for entry in table["models"]:
        name = entry["model"]
        if not _NAME.fullmatch(name):
            raise ValueError(f"{TABLE}: model {name!r} can't be a file name; name it with a-z, 0-9, '.', '_' and '-'")
        texts[f"{name}.json"] = json.dumps(entry, separators=(",", ":"), ensure_ascii=False) + "\n"
    return texts


def write_assets(table: dict[str, Any], folder: Path | None = None) -> list[Path]:
    """Write each model's formulas (``table``: the table's contents) into ``folder`` (default
    `assets_folder`), each file atomically, and remove the files of models the table doesn't hold;
    the files written, leaving out those that held their text already."""
    folder = folder or assets_folder()
    texts = asset_texts(table)
    written = [write_atomically(folder / name, text) for name, text in texts.items() if _text_of(folder / name) != text]
    for old in folder.glob("*.json"):
        if old.name not in texts:
            old.unlink()
    return written


def _text_of(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, ValueError):
        return None


def stale_assets(table: dict[str, Any], folder: Path | None = None) -> list[str]:
    """What differs between ``folder``'s files and what ``table`` gives: a file missing, changed or left over."""
    folder = folder or assets_folder()
    texts = asset_texts(table)
    reasons = []
    for name, text in texts.items():
        path = folder / name
        held = _text_of(path)
        if held is None:
            reasons.append(f"{path} is missing")
        elif held != text:
            reasons.append(f"{path} is not what the table gives")
    reasons += [
        f"{old} is of a model the table doesn't hold" for old in sorted(folder.glob("*.json")) if old.name not in texts
    ]
    return reasons
