"""fastai transfer learning on generated cats-vs-dogs JPEGs: time per epoch over a batch-size sweep."""

import dataclasses

import pytest
from fakes import not_installed

from benchlib.measure.runner import run_workload
from benchlib.workloads import RunContext, get
from benchlib.workloads.fastai_transfer import is_cat, write_images

TINY = {
    "arch": "resnet18",
    "pretrained": False,
    "images": 20,
    "image_side": 32,
    "batch_sizes": [8],
    "precisions": ["fp32", "fp16"],
    "warmup_epochs": 0,
    "epochs": 1,
    "num_workers": 0,
}


def run_tiny(machine, **overrides):
    w = dataclasses.replace(get("fastai_transfer"), sizes={"quick": TINY | overrides})
    return run_workload(w, RunContext(device="cpu", machine=machine, size="quick"), "cpu")


def test_images_are_named_like_oxford_pets_and_balanced(tmp_path):
    from PIL import Image

    paths = write_images(tmp_path, 10, 32)
    assert len(paths) == 10 and all(p.suffix == ".jpg" and p.exists() for p in paths)
    labels = [is_cat(p.name) for p in paths]
    assert labels.count(True) == labels.count(False) == 5
    assert {p.name.split("_")[0] for p in paths if is_cat(p.name)} <= {"Abyssinian", "Bengal", "Persian", "Siamese"}
    with Image.open(paths[0]) as img:
        assert img.size == (40, 32) and img.mode == "RGB"


@pytest.mark.slow
def test_fp32_epoch_time_and_fp16_skipped_on_cpu(machine):
    records = run_tiny(machine)
    by = {r.dtype: r for r in records}
    fp32, fp16 = by["fp32"], by["fp16"]
    assert fp32.status == "ok", fp32.message
    assert (fp32.workload, fp32.framework, fp32.metric.name, fp32.metric.unit) == (
        "fastai_transfer",
        "fastai",
        "epoch_time",
        "s",
    )
    assert fp32.value == pytest.approx(fp32.stats.median) and fp32.stats.n == 1
    assert fp32.params["batch_size"] == 8 and fp32.params["num_workers"] == 0 and fp32.params["pretrained"] is False
    assert fp16.status == "skipped" and "to_fp16 needs CUDA" in fp16.message


@pytest.mark.slow
def test_oom_at_one_batch_size_keeps_the_sweep_going(machine, monkeypatch):
    from fastai.learner import Learner

    real_fit = Learner.fit

    def fit(self, *args, **kwargs):
        if self.dls.train.bs == 16:
            raise RuntimeError("CUDA out of memory. Tried to allocate 1.50 GiB")
        return real_fit(self, *args, **kwargs)

    monkeypatch.setattr(Learner, "fit", fit)
    records = run_tiny(machine, batch_sizes=[8, 16], precisions=["fp32"])
    assert [(r.params["batch_size"], r.status) for r in records] == [(8, "ok"), (16, "oom")]
    assert "out of memory at batch size 16" in records[1].message


@pytest.mark.slow
def test_unknown_arch_fails_naming_it(machine):
    [record] = run_tiny(machine, arch="resnet9000")
    assert record.status == "error" and "resnet9000" in record.message


def test_missing_fastai_skips(monkeypatch, machine):
    not_installed(monkeypatch, "fastai")
    [record] = run_tiny(machine)
    assert record.status == "skipped" and "fastai is not installed" in record.message


def test_standard_size_is_the_seeds_sweep():
    w = get("fastai_transfer")
    p = w.params("standard")
    assert p["arch"] == "resnet34" and p["batch_sizes"] == [16, 64, 256] and p["pretrained"] is False
    assert set(w.suites) == {"standard", "full"}
