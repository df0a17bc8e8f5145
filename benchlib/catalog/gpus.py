"""Published specs of the GPUs and TPUs the Field Guide talks about.

The data lives in ``benchlib/data/gpus.yaml``. Every figure is a :class:`Fact` that carries its
source URL, an as-of date and a status:

* ``verified``: the cited source states it;
* ``conflict``: sources disagree; ``value`` is the figure used and ``note`` says what disagrees;
* ``unverified``: not re-checked (the research marked it "n.r.", "?", "~" or "not verified").

:func:`peak_tflops` and :func:`peak_bandwidth_gbps` (and the same methods on
:class:`AcceleratorSpec`) only ever return ``verified`` or ``conflict`` figures. An ``unverified``
figure gives ``None``, so an efficiency check never calls a measurement impossible against a
guessed peak.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable, Iterator
from datetime import date
from difflib import get_close_matches
from pathlib import Path
from typing import Annotated, Any, Generic, Literal, TypeVar, get_args, get_origin

import yaml
from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    PositiveFloat,
    PositiveInt,
    StringConstraints,
    ValidationError,
    model_validator,
)

from benchlib.core.package_data import data_file, load_yaml

__all__ = [
    "PEAK_DTYPES",
    "AcceleratorSpec",
    "CloudPrice",
    "Fact",
    "SpecsError",
    "find_accelerator",
    "load_accelerators",
    "peak_bandwidth_gbps",
    "peak_tflops",
]

Status = Literal["verified", "unverified", "conflict"]
PEAK_DTYPES: tuple[str, ...] = ("fp32", "tf32", "fp16", "bf16")
_DEFAULT_FILE_LABEL = "benchlib/data/gpus.yaml"


class SpecsError(ValueError):
    """The specs file is malformed; the message names the file, the accelerator and the field."""


def _date_to_text(value: Any) -> Any:
    # YAML reads an unquoted 2024-03-10 as a date; keep the ISO text the file means.
    if isinstance(value, date):
        return value.isoformat()[:10]
    return value


_AS_OF_SHAPE = re.compile(r"(\d{4})(?:-(\d{2})(?:-(\d{2}))?)?")


def _check_as_of(text: str) -> str:
    match = _AS_OF_SHAPE.fullmatch(text)
    if match is None:
        raise ValueError(f"as_of must be an ISO date (YYYY, YYYY-MM or YYYY-MM-DD), got {text!r}")
    year, month, day = (int(part) if part else 1 for part in match.groups())
    try:
        earliest = date(year, month, day)
    except ValueError as exc:
        raise ValueError(f"as_of {text!r} is not a real date ({exc})") from None
    if earliest > date.today():
        raise ValueError(f"as_of {text!r} is in the future")
    return text


AsOf = Annotated[str, BeforeValidator(_date_to_text), AfterValidator(_check_as_of)]
SourceUrl = Annotated[str, StringConstraints(pattern=r"^https?://\S+$")]
Text = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1)]

T = TypeVar("T")


class _Frozen(BaseModel):
    # Frozen so the cached default specs cannot be changed by one caller under another.
    model_config = ConfigDict(extra="forbid", frozen=True)


class Fact(_Frozen, Generic[T]):
    """One published figure with where it comes from and how far it can be trusted."""

    value: T
    source: SourceUrl
    as_of: AsOf
    status: Status
    note: Text | None = None
    # True where the source states no date: as_of is then the day it was read, shown as "read on".
    read_on: bool = False

    @model_validator(mode="after")
    def _conflict_is_explained(self) -> Fact[T]:
        if self.status == "conflict" and self.note is None:
            raise ValueError("a 'conflict' fact needs a note saying which sources disagree")
        return self

    @property
    def usable_as_peak(self) -> bool:
        """True for ``verified`` and ``conflict`` figures; an ``unverified`` one is never a peak."""
        return self.status != "unverified"


class CloudPrice(_Frozen):
    """An hourly price one provider charged, on a given date."""

    provider: Text
    usd_per_hour: PositiveFloat
    usd_per_hour_max: PositiveFloat | None = Field(None, description="Upper end when the source gives a range.")
    units: PositiveInt = Field(1, description="Accelerators the hourly price buys (a TPU v6e-4 slice is 4 chips).")
    as_of: AsOf
    source: SourceUrl
    status: Status
    note: Text | None = None

    @model_validator(mode="after")
    def _range_is_ordered(self) -> CloudPrice:
        if self.usd_per_hour_max is not None and self.usd_per_hour_max < self.usd_per_hour:
            raise ValueError("usd_per_hour_max is below usd_per_hour")
        if self.status == "conflict" and self.note is None:
            raise ValueError("a 'conflict' price needs a note saying which sources disagree")
        return self


Number = Fact[PositiveFloat]
_DEFAULT_KEYS = frozenset({"source", "as_of", "status", "read_on"})


class AcceleratorSpec(_Frozen):
    """Published figures for one accelerator: a GPU board or a TPU chip.

    Figures are for the unit the vendor describes; ``devices_per_unit`` says how many devices
    NVML/torch/JAX list for it (2 for a dual-GPU K80 board or a TPU v3 chip). The peak methods
    divide by it, because a benchmark runs on one listed device.
    """

    name: Text
    aliases: list[Text] = Field(default_factory=list, description="Names NVML, torch and JAX report.")
    vendor: Text
    kind: Literal["gpu", "tpu"]
    architecture: Fact[Text]
    year: Fact[Annotated[int, Field(ge=1990, le=2100)]]
    devices_per_unit: Fact[PositiveInt] | None = None
    memory_gb: Number | None = None
    smi_memory_mib: Fact[PositiveInt] | None = Field(
        None,
        description="Total memory of one device as nvidia-smi prints it (MiB), from a published output or a probe.",
    )
    bandwidth_gbps: Number | None = None
    fp32_tflops: Number | None = None
    fp16_tflops: Number | None = Field(None, description="Non-tensor-core FP16, for GPUs without FP16 tensor cores.")
    tf32_tensor_tflops: Number | None = None
    fp16_tensor_tflops: Number | None = None
    bf16_tensor_tflops: Number | None = None
    int8_tops: Number | None = None
    tdp_w: Number | None = None
    launch_price_usd: Number | None = None
    purchase_prices_usd: list[Number] = Field(default_factory=list, description="Street prices seen after launch.")
    bf16_supported: Fact[bool] | None = None
    tf32_supported: Fact[bool] | None = None
    cloud_prices: list[CloudPrice] = Field(default_factory=list)
    notes: list[Fact[Text]] = Field(default_factory=list)

    @model_validator(mode="before")
    @classmethod
    def _apply_defaults(cls, data: Any) -> Any:
        # Most facts of one accelerator share a source, date and status; `defaults` states them
        # once. A bare value takes all three; a mapping may override any of them.
        if not isinstance(data, dict) or "defaults" not in data:
            return data
        data = dict(data)
        defaults = data.pop("defaults")
        if not isinstance(defaults, dict) or not set(defaults) <= _DEFAULT_KEYS:
            raise ValueError(f"defaults must be a mapping with only {sorted(_DEFAULT_KEYS)}, got {defaults!r}")
        for field, shape in _FACT_FIELDS.items():
            raw = data.get(field)
            if raw is None:
                continue
            if shape == "list" and isinstance(raw, list):
                data[field] = [_fill(item, defaults) for item in raw]
            elif shape == "one":
                data[field] = _fill(raw, defaults)
        return data

    @model_validator(mode="after")
    def _consistent(self) -> AcceleratorSpec:
        for figure, flag in (("bf16_tensor_tflops", "bf16_supported"), ("tf32_tensor_tflops", "tf32_supported")):
            supported = getattr(self, flag)
            if getattr(self, figure) is not None and supported is not None and not supported.value:
                raise ValueError(f"{figure} is given but {flag} is false")
        # A label's GB are GiB (a "16 GB" T4 holds 16 GiB), and nvidia-smi never shows more.
        if self.smi_memory_mib and self.memory_gb and self.smi_memory_mib.value > self.memory_gb.value * 1024:
            raise ValueError("smi_memory_mib is larger than memory_gb: is it in MiB, and for one device?")
        return self

    def facts(self) -> Iterator[tuple[str, Fact[Any]]]:
        """Every fact with its field name (``notes[0]`` for list items), for audits and tables."""
        for field, shape in _FACT_FIELDS.items():
            value = getattr(self, field)
            if shape == "list":
                yield from ((f"{field}[{i}]", fact) for i, fact in enumerate(value))
            elif value is not None:
                yield field, value

    def peak_tflops(self, dtype: str) -> float | None:
        """Per-device dense peak in TFLOPS for ``dtype`` (fp32, tf32, fp16, bf16), or None.

        fp16, bf16 and tf32 use the tensor-core figure. Only where a GPU has no FP16 tensor cores
        does fp16 fall back to the plain FP16 rate (P100); an unverified tensor figure is not
        replaced by the lower one. ``unverified`` figures give None.
        """
        _check_dtype(dtype)
        if dtype == "fp16" and self.fp16_tensor_tflops is None:
            return self._per_device(self.fp16_tflops)
        figure = {
            "fp32": self.fp32_tflops,
            "tf32": self.tf32_tensor_tflops,
            "fp16": self.fp16_tensor_tflops,
            "bf16": self.bf16_tensor_tflops,
        }[dtype]
        return self._per_device(figure)

    def peak_bandwidth_gbps(self) -> float | None:
        """Per-device peak memory bandwidth in GB/s, or None when unknown or ``unverified``."""
        return self._per_device(self.bandwidth_gbps)

    def hourly_prices(self) -> list[CloudPrice]:
        """Each cloud price for one accelerator (a slice's price over its units), cheapest first."""
        per_unit = [
            p.model_copy(
                update={
                    "usd_per_hour": p.usd_per_hour / p.units,
                    "units": 1,
                    "usd_per_hour_max": p.usd_per_hour_max / p.units if p.usd_per_hour_max else None,
                }
            )
            for p in self.cloud_prices
        ]
        return sorted(per_unit, key=lambda p: p.usd_per_hour)

    def _per_device(self, figure: Fact[float] | None) -> float | None:
        if figure is None or not figure.usable_as_peak:
            return None
        if self.devices_per_unit is None:
            return figure.value
        if not self.devices_per_unit.usable_as_peak:
            return None
        return figure.value / self.devices_per_unit.value


def _fill(raw: Any, defaults: dict[str, Any]) -> Any:
    if isinstance(raw, dict):
        # A fact with its own date says itself whether that date is a reading day.
        inherited = {k: v for k, v in defaults.items() if not (k == "read_on" and "as_of" in raw)}
        return {**inherited, **raw}
    return {**defaults, "value": raw}


def _is_fact(annotation: Any) -> bool:
    return isinstance(annotation, type) and issubclass(annotation, Fact)


def _fact_shape(annotation: Any) -> Literal["one", "list"] | None:
    if get_origin(annotation) is list:
        return "list" if any(_is_fact(arg) for arg in get_args(annotation)) else None
    if _is_fact(annotation) or any(_is_fact(arg) for arg in get_args(annotation)):
        return "one"
    return None


# Derived from the model so a new fact field needs no second list to keep in step.
_FACT_FIELDS: dict[str, Literal["one", "list"]] = {
    name: shape
    for name, info in AcceleratorSpec.model_fields.items()
    if (shape := _fact_shape(info.annotation)) is not None
}


def _check_dtype(dtype: str) -> None:
    if dtype not in PEAK_DTYPES:
        raise ValueError(f"unknown dtype {dtype!r}; expected one of {', '.join(PEAK_DTYPES)}")


# ----------------------------------------------------------------------------- loading


def load_accelerators(path: Path | None = None) -> list[AcceleratorSpec]:
    """Read and validate a specs file; the packaged ``gpus.yaml`` (cached) when ``path`` is None.

    Raises :class:`SpecsError` naming the file, the accelerator and the field for malformed data,
    and when two accelerators answer to the same reported name.
    """
    if path is None:
        return list(_default_specs())
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as exc:
        raise SpecsError(f"{path}: cannot read specs file: {exc.strerror or exc}") from None
    return list(_parse(text, str(path)))


@functools.cache
def _default_specs() -> tuple[AcceleratorSpec, ...]:
    text = data_file("gpus.yaml").read_text(encoding="utf-8")
    return _parse(text, _DEFAULT_FILE_LABEL)


def _parse(text: str, where: str) -> tuple[AcceleratorSpec, ...]:
    try:
        data = load_yaml(text)
    except yaml.YAMLError as exc:
        raise SpecsError(f"{where}: not valid YAML: {exc}") from None
    if not isinstance(data, dict) or not isinstance(data.get("accelerators"), list):
        raise SpecsError(f"{where}: expected a mapping with an 'accelerators' list")
    unknown = set(data) - {"anchors", "accelerators"}
    if unknown:
        raise SpecsError(f"{where}: unknown top-level keys {sorted(unknown)} (allowed: anchors, accelerators)")
    specs = []
    for position, raw in enumerate(data["accelerators"], start=1):
        name = raw.get("name") if isinstance(raw, dict) else None
        label = repr(name) if isinstance(name, str) else f"#{position}"
        try:
            specs.append(AcceleratorSpec.model_validate(raw))
        except ValidationError as exc:
            problems = "; ".join(_describe(error) for error in exc.errors())
            raise SpecsError(f"{where}: accelerator {label}: {problems}") from None
    _name_index(specs, where)
    return tuple(specs)


def _describe(error: Any) -> str:
    field = ".".join(str(part) for part in error["loc"]) or "(entry)"
    message = error["msg"]
    if error["type"] == "model_type" and str(error.get("ctx", {}).get("class_name", "")).startswith("Fact"):
        # pydantic would print the full generic type here; say what the file should hold instead.
        message = "expected a mapping {value, source, as_of, status}; a bare value needs the accelerator's defaults"
    return f"field {field}: {message}"


# ----------------------------------------------------------------------------- name matching

# Vendor words NVML sometimes adds and sometimes leaves out ("Tesla T4", "NVIDIA T4").
_VENDOR_WORDS = frozenset({"nvidia", "tesla"})
# A TPU slice type ("v3-8", "v5litepod-16") names chips of its prefix.
_TPU_SLICE = re.compile(r"(v\d+[a-z]*)-\d+")


def _normal_key(name: str) -> tuple[str, ...]:
    """Words of a device name, lower-cased, without vendor words, in sorted order.

    Whole-word equality keeps "A100" from matching "A10G", "P100-PCIE-12GB" from matching the
    16 GB card and "H100 NVL" from matching "H100 PCIe"; sorting lets "A100 40GB SXM4" equal
    "A100-SXM4-40GB".
    """
    text = name.strip().casefold()
    if (slice_type := _TPU_SLICE.fullmatch(text)) is not None:
        text = slice_type.group(1)
    text = re.sub(r"(\d)\s+gb\b", r"\1gb", text)
    words = re.split(r"[\s\-_/,()]+", text)
    return tuple(sorted(word for word in words if word and word not in _VENDOR_WORDS))


_Index = tuple[dict[str, AcceleratorSpec], dict[tuple[str, ...], AcceleratorSpec]]


def _name_index(specs: Iterable[AcceleratorSpec], where: str) -> _Index:
    exact: dict[str, AcceleratorSpec] = {}
    normal: dict[tuple[str, ...], AcceleratorSpec] = {}
    for spec in specs:
        for label in (spec.name, *spec.aliases):
            key = _normal_key(label)
            if not key:
                raise SpecsError(f"{where}: accelerator {spec.name!r}: alias {label!r} has no model words")
            for other in (exact.setdefault(label.strip().casefold(), spec), normal.setdefault(key, spec)):
                if other is not spec:
                    raise SpecsError(f"{where}: accelerator {spec.name!r}: name {label!r} also matches {other.name!r}")
    return exact, normal


@functools.cache
def _default_index() -> _Index:
    return _name_index(_default_specs(), _DEFAULT_FILE_LABEL)


def find_accelerator(reported_name: str) -> AcceleratorSpec | None:
    """The accelerator a device name from NVML, torch or JAX refers to, or None.

    Tries a case-insensitive alias match first, then a whole-word match that ignores vendor words,
    punctuation and word order ("NVIDIA Tesla T4" -> T4). Never a substring match: "NVIDIA A100"
    alone (40 or 80 GB?) and MIG slices return None.
    """
    exact, normal = _default_index()
    found = exact.get(reported_name.strip().casefold())
    return found if found is not None else normal.get(_normal_key(reported_name))


class UnknownGPU(KeyError):
    """A GPU name the specs don't know, or a figure a GPU's specs lack; the message says what to do."""

    def __str__(self) -> str:
        return str(self.args[0])


def find_gpu(name: str, instead: str = "choose a GPU") -> AcceleratorSpec:
    """The GPU called ``name`` (the specs' name or an alias NVML reports), for a command's ``--gpu``.

    Resolve a name once, where it comes in, and pass the spec on. UnknownGPU suggests near matches,
    lists every GPU a name several share ("RTX 3080": its 10 GB and 12 GB cards), and for a TPU says
    ``instead`` (what the command does instead).
    """
    spec = find_accelerator(name)
    if spec is None and not name.strip().lower().startswith("geforce"):
        # Readers write "RTX 4090", as --help's examples do; the specs keep NVIDIA's "GeForce RTX 4090".
        spec = find_accelerator(f"GeForce {name.strip()}")
    if spec is not None and spec.kind == "gpu":
        return spec
    if spec is not None:
        raise UnknownGPU(f"{spec.name} is a {spec.kind.upper()}, not a GPU; {instead}")
    gpus = [a for a in _default_specs() if a.kind == "gpu"]
    # A name short of a memory size or form factor ("RTX 3080", "A100 80GB") lists every GPU it
    # could be, not whichever spellings happen to look alike.
    words = set(_normal_key(name)) - {"geforce"}
    variants = [a.name for a in gpus if words and words < set(_normal_key(a.name))]
    if 1 < len(variants) <= _MAX_VARIANTS:
        hint = f" (more than one GPU has that name: {', '.join(repr(v) for v in variants)}; give one in full)"
    else:
        labels = [label for a in gpus for label in (a.name, *a.aliases)]
        close = variants if len(variants) == 1 else get_close_matches(name, labels, n=3, cutoff=0.5)
        hint = f" (did you mean {', '.join(repr(c) for c in close)}?)" if close else ""
    raise UnknownGPU(f"unknown GPU {name!r}{hint}; the GPUs benchlib knows are in {_DEFAULT_FILE_LABEL}")


# More GPUs than this sharing a name's words ("RTX") is a vague name, not a choice between variants.
_MAX_VARIANTS = 6


def reported_gpu(reported_name: object) -> AcceleratorSpec | None:
    """The GPU a results file or NVML calls ``reported_name``; None when the name is missing (a
    results frame's NaN included) or isn't a GPU the specs list."""
    spec = find_accelerator(reported_name) if isinstance(reported_name, str) and reported_name else None
    return spec if spec is not None and spec.kind == "gpu" else None


def gpu_spec_name(reported_name: object) -> str | None:
    """The specs' name of the GPU a results file or NVML calls ``reported_name`` (see `reported_gpu`)."""
    spec = reported_gpu(reported_name)
    return spec.name if spec is not None else None


def peak_tflops(reported_name: str, dtype: str) -> float | None:
    """Per-device dense peak TFLOPS of a reported device for fp32, tf32, fp16 or bf16.

    None when the device is unknown, has no such figure, or the figure is ``unverified`` (so
    efficiency is never judged against a guessed peak). Raises ValueError for an unknown dtype.
    """
    _check_dtype(dtype)
    spec = find_accelerator(reported_name)
    return None if spec is None else spec.peak_tflops(dtype)


def peak_bandwidth_gbps(reported_name: str) -> float | None:
    """Per-device peak memory bandwidth (GB/s) of a reported device; None if unknown or unverified."""
    spec = find_accelerator(reported_name)
    return None if spec is None else spec.peak_bandwidth_gbps()
