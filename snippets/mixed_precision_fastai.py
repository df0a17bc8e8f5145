"""Mixed precision in fastai: to_fp16() on a cats-vs-dogs transfer-learning run."""
import os
import tempfile

import numpy as np
import torch
from fastai.vision.all import (
    ImageDataLoaders,
    PILImage,
    Resize,
    URLs,
    error_rate,
    get_image_files,
    resnet34,
    untar_data,
    vision_learner,
)

SYNTHETIC = bool(os.environ.get("SYNTHETIC_DATA"))
BATCH_SIZE = int(os.environ.get("BATCH_SIZE", "64"))
SIZE = 64 if SYNTHETIC else 224

if SYNTHETIC:  # no download: random images named like the Oxford-IIIT Pets files
    path = tempfile.mkdtemp()
    for i in range(32):
        name = ("Abyssinian" if i % 2 else "beagle") + f"_{i}.jpg"
        PILImage.create(np.random.randint(0, 256, (SIZE, SIZE, 3), dtype=np.uint8)).save(os.path.join(path, name))
else:
    path = untar_data(URLs.PETS) / "images"


def is_cat(filename):
    return filename[0].isupper()  # in this dataset cat breeds are capitalised


dls = ImageDataLoaders.from_name_func(
    path, get_image_files(path), valid_pct=0.2, seed=42, label_func=is_cat,
    item_tfms=Resize(SIZE), bs=BATCH_SIZE,
)
learn = vision_learner(dls, resnet34, metrics=error_rate, pretrained=not SYNTHETIC)
if torch.cuda.is_available():
    # float16 autocast plus loss scaling. Prefer to_bf16() only on compute capability 8.0+:
    # on a T4 fastai accepts it, but bfloat16 is then emulated and slow.
    learn = learn.to_fp16()
else:
    print("No GPU: fastai's mixed precision needs CUDA, so this runs in float32.")
learn.fine_tune(int(os.environ.get("EPOCHS", "1")))
print("mixed precision:", any(type(cb).__name__ == "MixedPrecision" for cb in learn.cbs))
