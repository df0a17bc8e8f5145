"""Where to get compute: the platform data file and its models.

Every number about a platform (quotas, RAM, prices, session limits) lives in
``benchlib/data/platforms.yaml`` with a source URL and an as-of date, so pages render it instead
of typing it. ``load_platforms()`` validates the file and names the file, platform, tier and
field when something is wrong.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from datetime import date
from pathlib import Path
from typing import Annotated, Any, Literal

import yaml
from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    HttpUrl,
    ValidationError,
    model_validator,
)

from benchlib.core.package_data import data_file, load_yaml

DATA_FILE = data_file("platforms.yaml")

FactStatus = Literal["verified", "unverified", "conflict"]

# The fields every tier must describe, in the order pages show them.
TIER_FIELDS: tuple[str, ...] = (
    "price",
    "accelerators",
    "quotas",
    "max_session",
    "idle_timeout",
    "ram",
    "disk",
    "persistence",
    "frameworks",
    "restrictions",
)

FIELD_LABELS: dict[str, str] = {
    "price": "Price",
    "accelerators": "Accelerators",
    "quotas": "Quotas",
    "max_session": "Maximum session",
    "idle_timeout": "Idle timeout",
    "ram": "RAM",
    "disk": "Disk",
    "persistence": "What persists",
    "frameworks": "Frameworks",
    "restrictions": "Restrictions",
}


class PlatformsFileError(ValueError):
    """The platforms data file is malformed; the message names the file, platform, tier and field."""

    def __init__(self, path: Path, location: str, problem: str) -> None:
        self.path = path
        self.location = location
        self.problem = problem
        super().__init__(f"{path}: {location}: {problem}" if location else f"{path}: {problem}")


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Sourced(_Model):
    """Where a statement comes from and how far to trust it."""

    source: HttpUrl
    as_of: date = Field(description="The date the source states (or, for undated pages, the newest copy read).")
    read_on: bool = Field(False, description="True where the source states no date: as_of is the day it was read.")
    status: FactStatus = "verified"
    note: str | None = Field(None, description="Why a fact is unverified or which sources disagree.")
    see_also: list[HttpUrl] = Field(default_factory=list, description="Further sources, e.g. the conflicting one.")

    @model_validator(mode="after")
    def _explain_doubt(self) -> Sourced:
        if self.status != "verified" and not self.note:
            raise ValueError(f"a fact marked '{self.status}' needs a note saying why")
        if self.as_of > date.today():
            raise ValueError(f"as_of {self.as_of} is in the future")
        return self


class Fact(Sourced):
    value: str = Field(min_length=1)


def _as_list(value: Any) -> Any:
    # A field with a single source is written as one mapping; several sources as a list.
    return [value] if isinstance(value, dict) else value


Facts = Annotated[list[Fact], BeforeValidator(_as_list), Field(min_length=1)]


class Signal(_Model):
    """One thing benchlib's probe looks at to recognise a platform."""

    kind: Literal["module", "env", "env_prefix", "path"]
    name: str
    value: str | None = Field(None, description="The value the variable must have, if any.")
    note: str | None = None


class Detection(Sourced):
    signals: list[Signal] = Field(default_factory=list)


class Hours(Sourced):
    """A limit in hours, with where it comes from."""

    value: float = Field(gt=0)


class Budget(_Model):
    """What one account may run on a tier's GPUs, in numbers, for `session_budgets`: the sessions a
    long job needs, and its share of a daily or weekly quota."""

    gpus: list[str] = Field(min_length=1, description="The tier's GPUs, as benchlib's specs name them.")
    most_gpus: int = Field(1, ge=1, description="The most of them one session gets (Kaggle's two T4s).")
    session_hours: Hours | None = Field(None, description="The longest a session runs before it is stopped.")
    gpu_hours_per_day: Hours | None = None
    gpu_hours_per_week: Hours | None = None


class Tier(_Model):
    name: str
    price: Facts
    accelerators: Facts
    quotas: Facts
    max_session: Facts
    idle_timeout: Facts
    ram: Facts
    disk: Facts
    persistence: Facts
    frameworks: Facts
    restrictions: Facts
    budget: Budget | None = None

    def field(self, name: str) -> list[Fact]:
        if name not in TIER_FIELDS:
            raise KeyError(f"unknown tier field {name!r}; known: {', '.join(TIER_FIELDS)}")
        facts: list[Fact] = getattr(self, name)
        return facts


class ComputeUnits(_Model):
    """Tiers that sell compute units which GPUs burn by the hour, so a page can turn units into GPU-hours.

    Each tier's first price fact says how many units it buys ("100 compute units") and its first
    quota fact gives each GPU's burn rate ("T4 1.19").
    """

    tiers: list[str] = Field(min_length=1)
    gpus: list[str] = Field(
        min_length=1, description="The GPUs to convert units into hours of, as the rates name them."
    )


class Platform(_Model):
    name: str
    url: HttpUrl
    page: str | None = Field(None, description="The guide page about it, relative to docs/.")
    summary: str
    detection: Detection
    tiers: dict[str, Tier] = Field(min_length=1)
    history: list[Fact] = Field(default_factory=list, description="What the platform used to give, oldest first.")
    paid: Annotated[list[Fact], BeforeValidator(_as_list)] = Field(
        default_factory=list, description="What paying buys in GPU time, where no tier sells compute units."
    )
    compute_units: ComputeUnits | None = None

    @model_validator(mode="after")
    def _unit_tiers_exist(self) -> Platform:
        if self.compute_units:
            unknown = [t for t in self.compute_units.tiers if t not in self.tiers]
            if unknown:
                raise ValueError(f"compute_units names unknown tiers {unknown}")
        return self

    def tier_title(self, tier: Tier) -> str:
        """The tier as a reader names it: "Kaggle Free", or the platform's name alone where it ends
        with the tier's ("Hugging Face ZeroGPU", not "Hugging Face ZeroGPU ZeroGPU")."""
        return self.name if self.name.endswith(tier.name) else f"{self.name} {tier.name}"


class Need(_Model):
    """One row of the 'Which one should I use?' table."""

    need: str
    field: str
    tiers: list[str] = Field(min_length=1, description="'platform/tier' references.")
    match: str | None = Field(None, description="Only show facts whose value contains this text.")
    advice: str

    @model_validator(mode="after")
    def _known_field(self) -> Need:
        if self.field not in TIER_FIELDS:
            raise ValueError(f"field {self.field!r} is not a tier field ({', '.join(TIER_FIELDS)})")
        return self


class PlatformsData(_Model):
    platforms: dict[str, Platform] = Field(min_length=1)
    needs: list[Need] = Field(default_factory=list)

    @model_validator(mode="after")
    def _needs_point_at_tiers(self) -> PlatformsData:
        for need in self.needs:
            for ref in need.tiers:
                platform_id, _, tier_id = ref.partition("/")
                platform = self.platforms.get(platform_id)
                if platform is None or tier_id not in platform.tiers:
                    raise ValueError(f"need {need.need!r} refers to unknown tier {ref!r}")
        return self

    def tier(self, ref: str) -> tuple[Platform, Tier]:
        """Look up a 'platform/tier' reference."""
        platform_id, _, tier_id = ref.partition("/")
        try:
            platform = self.platforms[platform_id]
            return platform, platform.tiers[tier_id]
        except KeyError:
            raise KeyError(f"no tier {ref!r} in the platforms data") from None


def _describe(loc: tuple[int | str, ...]) -> str:
    """Turn a pydantic error location into 'platform 'x', tier 'y', field 'z'' words."""
    parts: list[str] = []
    rest = list(loc)
    if rest[:1] == ["platforms"] and len(rest) >= 2:
        parts.append(f"platform {rest[1]!r}")
        rest = rest[2:]
        if rest[:1] == ["tiers"] and len(rest) >= 2:
            parts.append(f"tier {rest[1]!r}")
            rest = rest[2:]
    elif rest[:1] == ["needs"] and len(rest) >= 2:
        parts.append(f"needs[{rest[1]}]")
        rest = rest[2:]
    if rest:
        parts.append("field " + repr(".".join(str(p) for p in rest)))
    return ", ".join(parts)


def load_platforms(path: Path | str = DATA_FILE) -> PlatformsData:
    """Read and validate the platforms data file, once per build: cached until the file changes.

    Raises:
        PlatformsFileError: the file is not valid YAML or does not match the schema; the message
            names the file, the platform, the tier and the field.
    """
    path = Path(path)
    return _load_platforms(path, path.stat().st_mtime_ns if path.exists() else 0)


@functools.lru_cache(maxsize=8)
def _load_platforms(path: Path, _mtime_ns: int) -> PlatformsData:
    try:
        raw = load_yaml(path.read_text(encoding="utf-8"))
    except yaml.YAMLError as exc:
        raise PlatformsFileError(path, "", f"not valid YAML: {exc}") from exc
    if not isinstance(raw, dict):
        raise PlatformsFileError(path, "", "expected a mapping with 'platforms' at the top level")
    try:
        return PlatformsData.model_validate(raw)
    except ValidationError as exc:
        first = exc.errors()[0]
        more = f" (and {exc.error_count() - 1} more problems)" if exc.error_count() > 1 else ""
        raise PlatformsFileError(path, _describe(tuple(first["loc"])), first["msg"] + more) from exc


@dataclass(frozen=True)
class SessionBudget:
    """How a job of ``hours`` on one GPU fits one tier's limits (None where the tier sets none)."""

    tier: str
    hours: float
    sessions: int | None
    session_hours: float | None
    days: float | None  # of the daily quota
    daily_hours: float | None
    weeks: float | None  # of the weekly quota
    weekly_hours: float | None
    as_of: date  # the oldest date of the limits used
    sources: tuple[str, ...]

    def describe(self) -> str:
        """One line a reader reads: "Kaggle Notebooks Free: 2 sessions of at most 12 h; 47% of its 30 GPU
        hours a week (limits as of 2026-08-10)"."""
        parts = []
        if self.sessions is not None:
            parts.append(f"{self.sessions:,} session{'s' * (self.sessions != 1)} of at most {self.session_hours:g} h")
        for share, quota, period in ((self.weeks, self.weekly_hours, "week"), (self.days, self.daily_hours, "day")):
            if share is not None:
                of = f"its {quota:g} GPU hours a {period}"
                parts.append(f"{share:.0%} of {of}" if share < 1 else f"{share:,.1f} {period}s of {of}")
        return f"{self.tier}: {'; '.join(parts)} (limits as of {self.as_of.isoformat()})"


def session_budgets(gpu: str, hours: float, data: PlatformsData | None = None, count: int = 1) -> list[SessionBudget]:
    """How a job of ``hours`` on ``count`` of ``gpu`` (a name as benchlib's specs give it) fits the
    limits of each tier that offers that many in a session and states its limits in numbers."""
    import math

    budgets = []
    for platform in (data or load_platforms()).platforms.values():
        for tier in platform.tiers.values():
            budget = tier.budget
            if budget is None or gpu not in budget.gpus or count > budget.most_gpus:
                continue
            session, day, week = budget.session_hours, budget.gpu_hours_per_day, budget.gpu_hours_per_week
            used = [limit for limit in (session, day, week) if limit is not None]
            budgets.append(
                SessionBudget(
                    tier=platform.tier_title(tier),
                    hours=hours,
                    sessions=max(1, math.ceil(hours / session.value)) if session else None,
                    session_hours=session.value if session else None,
                    days=hours / day.value if day else None,
                    daily_hours=day.value if day else None,
                    weeks=hours / week.value if week else None,
                    weekly_hours=week.value if week else None,
                    as_of=min(limit.as_of for limit in used),
                    sources=tuple(dict.fromkeys(str(limit.source) for limit in used)),
                )
            )
    return budgets
