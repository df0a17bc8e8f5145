"""Every dated fact the guide shows, oldest first, so a maintainer knows what to re-check (`benchlib facts`).

The facts come from the platform data (``benchlib/data/platforms.yaml``), the accelerator specs
(``benchlib/data/gpus.yaml``), the dated buying advice (``benchlib/data/buying_advice.yaml``) and the
reported results (``results/reported/*.json``), the published LLM peak memories
(``benchlib/data/published_llm_memory.yaml``) and the published LLM speeds
(``benchlib/data/published_llm_*speed.yaml``, ``published_llm_prefill.yaml``). Age and the "may be out of date" verdict use the
site's own rule (`benchlib.core.freshness`), so this list and the pages agree.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from datetime import date
from pathlib import Path
from typing import Literal

from benchlib.core.freshness import latest_day

Origin = Literal["platforms", "gpus", "advice", "reported", "memory", "speed"]
ORIGIN_FILES: dict[Origin, str] = {
    "platforms": "benchlib/data/platforms.yaml",
    "gpus": "benchlib/data/gpus.yaml",
    "advice": "benchlib/data/buying_advice.yaml",
    "reported": "results/reported/",
    "memory": "benchlib/data/published_llm_memory.yaml",
    "speed": "benchlib/data/published_llm_*.yaml",
}
SPEED_FILES = ("published_llm_speed.yaml", "published_llm_training_speed.yaml", "published_llm_prefill.yaml")
# The specs fields that change after a chip launches (and that the site marks when old); the rest
# (bandwidth, TFLOPS, memory, formats) describe fixed hardware.
SPEC_FIELDS_THAT_AGE = frozenset({"cloud_prices", "purchase_prices_usd", "launch_price_usd", "notes"})


@dataclass(frozen=True)
class DatedFact:
    """One dated statement: where it lives, what it is, when its source dates it and who says it."""

    origin: Origin
    key: str
    as_of: str
    source: str
    ages: bool = True

    @property
    def day(self) -> date:
        return latest_day(self.as_of)


def _numbered(key: str, i: int, count: int) -> str:
    return f"{key} #{i}" if count > 1 else key


def platform_facts() -> Iterator[DatedFact]:
    from benchlib.catalog.platforms import TIER_FIELDS, load_platforms

    for pid, platform in load_platforms().platforms.items():
        yield DatedFact(
            "platforms", f"{pid} detection", platform.detection.as_of.isoformat(), str(platform.detection.source)
        )
        for i, fact in enumerate(platform.history, 1):
            yield DatedFact("platforms", f"{pid} history #{i}", fact.as_of.isoformat(), str(fact.source))
        for tid, tier in platform.tiers.items():
            for field in TIER_FIELDS:
                facts = tier.field(field)
                for i, fact in enumerate(facts, 1):
                    key = _numbered(f"{pid}/{tid} {field}", i, len(facts))
                    yield DatedFact("platforms", key, fact.as_of.isoformat(), str(fact.source))


def spec_facts() -> Iterator[DatedFact]:
    from benchlib.catalog.gpus import CloudPrice, Fact, load_accelerators

    for spec in load_accelerators():
        for field in type(spec).model_fields:
            value = getattr(spec, field)
            items = value if isinstance(value, list) else [value]
            dated = [item for item in items if isinstance(item, (Fact, CloudPrice))]
            for i, item in enumerate(dated, 1):
                label = (
                    f"{field} ({item.provider})" if isinstance(item, CloudPrice) else _numbered(field, i, len(dated))
                )
                yield DatedFact("gpus", f"{spec.name} {label}", item.as_of, item.source, field in SPEC_FIELDS_THAT_AGE)


def advice_facts() -> Iterator[DatedFact]:
    import yaml

    from benchlib.core.package_data import data_file

    advice = yaml.safe_load(data_file("buying_advice.yaml").read_text(encoding="utf-8"))
    for guide in advice["guides"]:
        for i, claim in enumerate(guide["claims"], 1):
            yield DatedFact("advice", f"{guide['id']} claim #{i}", _date_text(claim["as_of"]), str(claim["source"]))
    if electricity := advice.get("electricity"):  # the break-even's price per kWh
        yield DatedFact("advice", "electricity price", _date_text(electricity["as_of"]), str(electricity["source"]))


def _date_text(as_of: object) -> str:
    return as_of.isoformat() if isinstance(as_of, date) else str(as_of)


def reported_facts(directory: Path | None = None) -> Iterator[DatedFact]:
    """One fact per reported results file: its run id, dated and sourced by its provenance."""
    from benchlib.core.paths import reported_dir
    from benchlib.results.load import load_results

    folder = directory or reported_dir()
    if not folder.is_dir() or not any(folder.rglob("*.json")):
        raise FileNotFoundError(f"no reported results in {folder}")
    files = load_results(folder).drop_duplicates("file")
    for run_id, as_of, url in zip(files["run_id"], files["source_as_of"], files["source_url"]):
        if isinstance(as_of, str) and isinstance(url, str):
            yield DatedFact("reported", run_id, as_of, url)


def published_memory_facts() -> Iterator[DatedFact]:
    """One fact per source of published LLM peak memories that gives a date."""
    import yaml

    from benchlib.predict.published_memory import PUBLISHED

    for source in yaml.safe_load(PUBLISHED.read_text(encoding="utf-8"))["sources"]:
        if source.get("as_of"):
            yield DatedFact("memory", source["id"], str(source["as_of"]), source["url"])


def published_speed_facts() -> Iterator[DatedFact]:
    """One fact per source of published LLM speeds that gives a date."""
    import yaml

    from benchlib.core.package_data import data_file

    for name in SPEED_FILES:
        for source in yaml.safe_load(data_file(name).read_text(encoding="utf-8"))["sources"]:
            if source.get("as_of"):
                yield DatedFact("speed", source["id"], str(source["as_of"]), source["url"])


def dated_facts(reported_dir: Path | None = None) -> list[DatedFact]:
    """Every dated fact, oldest first (ties by file and key)."""
    found = [
        *platform_facts(),
        *spec_facts(),
        *advice_facts(),
        *reported_facts(reported_dir),
        *published_memory_facts(),
        *published_speed_facts(),
    ]
    return sorted(found, key=lambda f: (f.day, f.origin, f.key))
