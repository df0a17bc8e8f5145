"""Seed 003's transfer learning: a fastai ``vision_learner`` (resnet34) on cats vs dogs.

The images are generated on disk as JPEGs named like the Oxford-IIIT Pet files (cat breeds
capitalised, dog breeds lower case), so the real fastai pipeline runs: file reading, JPEG
decoding, ``Resize``, ``aug_transforms`` augmentation, one-cycle training and validation.
Reported: time per epoch (training and validation, as fastai counts an epoch) for each batch
size of the sweep, in fp32 and with ``to_fp16`` (CUDA only: fastai's MixedPrecision uses CUDA
autocast, so elsewhere fp16 is recorded as skipped). Out of memory at one batch size is an
``oom`` record for it, and the sweep goes on, as the seed found at batch 256 on Colab.

``pretrained=False`` by default: weights can't be downloaded everywhere, and the time per epoch
doesn't depend on them. ``pretrained=True`` downloads them (and freezes the body, as fastai does).
"""

from __future__ import annotations

import tempfile
import time
import warnings
from pathlib import Path
from typing import Any

import numpy as np

from benchlib.backends import require
from benchlib.backends import torch_backend as tb
from benchlib.core.timing import Measurement
from benchlib.models.vision import TORCHVISION
from benchlib.results.schema import MeasurementRecord, Metric
from benchlib.workloads import NotPredicted, Plot, Ratio, RunContext, ScorePart, Workload, register
from benchlib.workloads._record import stats_of
from benchlib.workloads.amp import CHART as AMP_CHART

NAME = "fastai_transfer"
EPOCH_TIME = Metric(name="epoch_time", unit="s", higher_is_better=False)
CAT_BREEDS = ("Abyssinian", "Bengal", "Persian", "Siamese")
DOG_BREEDS = ("beagle", "boxer", "pug", "samoyed")

STANDARD: dict[str, Any] = {
    "arch": "resnet34",
    "pretrained": False,
    "images": 320,
    "image_side": 64,
    "batch_sizes": [16, 64, 256],
    "precisions": ["fp32", "fp16"],
    "warmup_epochs": 1,
    "epochs": 1,
    "num_workers": None,
}
SIZES: dict[str, dict[str, Any]] = {
    "quick": {**STANDARD, "images": 40, "image_side": 32, "batch_sizes": [16], "warmup_epochs": 0, "num_workers": 0},
    "standard": STANDARD,
    "full": {**STANDARD, "images": 2500, "image_side": 224, "epochs": 2},
}


def is_cat(name: str) -> bool:
    """Oxford-IIIT Pet's convention; module-level so DataLoader workers can pickle it."""
    return name[0].isupper()


def write_images(folder: Path, count: int, side: int, seed: int = 0) -> list[Path]:
    """``count`` JPEGs, half cats, half dogs, a little larger than ``side`` so Resize has work.

    Each is a smooth random picture (an upscaled 8x8 noise image): it compresses and decodes
    like a photo, unlike per-pixel noise.
    """
    from PIL import Image

    rng = np.random.default_rng(seed)
    paths = []
    source = (side * 5 // 4, side)
    for i in range(count):
        breeds = CAT_BREEDS if i % 2 == 0 else DOG_BREEDS
        small = Image.fromarray(rng.integers(0, 256, (8, 8, 3), dtype=np.uint8))
        path = folder / f"{breeds[(i // 2) % len(breeds)]}_{i}.jpg"
        small.resize(source, Image.BILINEAR).save(path, quality=90)
        paths.append(path)
    return paths


def run(ctx: RunContext, params: dict[str, Any]) -> list[MeasurementRecord]:
    torch = tb.import_torch()
    require("fastai", "install it with `pip install 'benchlib[fastai]'`")
    # fastai calls torch.jit.script, which torch 2.14 deprecates: a FutureWarning per run that
    # says nothing about this measurement.
    warnings.filterwarnings("ignore", message=r".*torch\.jit\.script.*deprecated", category=FutureWarning)
    import torchvision.models
    from fastai.callback.core import Callback
    from fastai.vision.all import ImageDataLoaders, Resize, aug_transforms, error_rate, vision_learner

    sync, sync_name = tb.sync_function(ctx.device)
    name = tb.device_name(ctx.device, ctx.cpu_name)
    arch_name = params["arch"]
    if arch_name not in TORCHVISION:
        raise ValueError(f"unknown arch {arch_name!r}; known: {', '.join(sorted(TORCHVISION))}")
    arch = getattr(torchvision.models, TORCHVISION[arch_name])
    # Worker processes hand batches over through /dev/shm. Kaggle's containers had a tiny one
    # and above batch 16 the workers died ("DataLoader worker ... killed by signal: Bus error",
    # seed 003); 0 workers load in the main process and avoid it, and is what the CPU needs.
    workers = params["num_workers"] if params["num_workers"] is not None else (0 if ctx.device == "cpu" else 2)

    class EpochTimer(Callback):
        """Wall time of each epoch (training + validation), synchronised at both ends."""

        def before_fit(self) -> None:
            self.times: list[float] = []

        def before_epoch(self) -> None:
            sync()
            self.start = time.perf_counter()

        def after_epoch(self) -> None:
            sync()
            self.times.append(time.perf_counter() - self.start)

    records: list[MeasurementRecord] = []
    with tempfile.TemporaryDirectory(prefix="benchlib-pets-") as tmp:
        files = write_images(Path(tmp), params["images"], params["image_side"])
        for precision in params["precisions"]:
            for bs in params["batch_sizes"]:
                settings = {
                    "mode": "training",
                    "arch": arch_name,
                    "pretrained": params["pretrained"],
                    "batch_size": bs,
                    "image_side": params["image_side"],
                    "images": len(files),
                    "valid_pct": 0.2,
                    "num_workers": workers,
                    "epochs": params["epochs"],
                    "warmup_epochs": params["warmup_epochs"],
                    "data": "synthetic",
                }
                base = dict(
                    workload=NAME,
                    framework="fastai",
                    device=ctx.device,
                    device_name=name,
                    dtype=precision,
                    params=settings,
                    metric=EPOCH_TIME,
                )
                if precision == "fp16" and ctx.device != "cuda":
                    records.append(
                        MeasurementRecord(
                            **base,
                            status="skipped",
                            message=f"{NAME}: to_fp16 needs CUDA (fastai's MixedPrecision uses CUDA autocast); this run is on {ctx.device}",
                        )
                    )
                    continue
                dls = ImageDataLoaders.from_name_func(
                    tmp,
                    files,
                    is_cat,
                    valid_pct=0.2,
                    seed=42,
                    item_tfms=Resize(params["image_side"]),
                    batch_tfms=aug_transforms(),
                    bs=bs,
                    num_workers=workers,
                    device=torch.device(ctx.device),
                )
                learn = vision_learner(dls, arch, pretrained=params["pretrained"], metrics=error_rate)
                if precision == "fp16":
                    learn = learn.to_fp16()
                timer = EpochTimer()
                try:
                    with learn.no_bar(), learn.no_logging():
                        learn.fit_one_cycle(params["warmup_epochs"] + params["epochs"], cbs=[timer])
                except Exception as exc:
                    if not tb.is_oom(exc):
                        raise RuntimeError(f"{precision} at batch size {bs}: {type(exc).__name__}: {exc}") from exc
                    del learn, dls
                    tb.empty_cache(ctx.device)
                    records.append(
                        MeasurementRecord(
                            **base,
                            status="oom",
                            message=f"{NAME}: out of memory at batch size {bs} ({precision}): {exc}",
                        )
                    )
                    continue
                warm, timed = timer.times[: params["warmup_epochs"]], timer.times[params["warmup_epochs"] :]
                m = Measurement(
                    times=tuple(timed),
                    number_per_sample=1,
                    warmup_s=sum(warm),
                    sync=sync_name,
                    threads=tb.threads(),
                    label=f"{NAME} {precision} bs{bs}",
                )
                records.append(MeasurementRecord(**base, value=m.median, stats=stats_of(m)))
    return records


register(
    Workload(
        name=NAME,
        framework="fastai",
        description="fastai vision_learner (resnet34) time per epoch on generated cats-vs-dogs JPEGs, fp32 and to_fp16, batch sizes 16/64/256.",
        metric=EPOCH_TIME,
        sizes=SIZES,
        run=run,
        expected_s={"quick": 4.5, "standard": 31.3},
        suites=("standard", "full"),
        # to_fp16's gain: fp32 time over fp16 time at the same batch size, in the same run (or source).
        plots=(Plot(AMP_CHART, "speedup", "fastai to_fp16 · batch {param_batch_size}"),),
        derived=(
            Ratio(
                "speedup", "x", over="dtype", numerator="fp32", denominator="fp16", same=("metric", "param_batch_size")
            ),
        ),
        score=(
            ScorePart(
                "fastai-resnet34-b64",
                "training",
                "epoch_time",
                {"arch": "resnet34", "batch_size": 64, "image_side": 64},
                "fastai resnet34 transfer learning, batch 64, time per epoch",
            ),
        ),
        not_predicted=NotPredicted(
            "fastai transfer-learning epoch times (Colab, Kaggle)",
            "the dataset size and image size behind each epoch aren't stated",
        ),
    )
)
