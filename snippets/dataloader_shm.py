"""Fix 'DataLoader worker ... killed by signal: Bus error' on Kaggle: fit the workers to /dev/shm.

DataLoader workers hand each batch to the main process through shared memory (/dev/shm).
When the batches in flight don't fit there, a worker dies with a bus error or "No space left
on device". So measure /dev/shm and start only as many workers as fit.
"""
import os
import shutil

import torch
from torch.utils.data import DataLoader, Dataset

BATCH_SIZE = int(os.environ.get("BATCH_SIZE", "64"))
PREFETCH = 2  # batches each worker keeps ready (PyTorch's default)


class RandomImages(Dataset):
    """Stand-in for your dataset: 224x224 RGB images as float tensors."""

    def __len__(self):
        return int(os.environ.get("NUM_IMAGES", "2048"))

    def __getitem__(self, i):
        return torch.rand(3, 224, 224), i % 10


dataset = RandomImages()
image, _ = dataset[0]
batch_bytes = image.element_size() * image.nelement() * BATCH_SIZE
shm_free = shutil.disk_usage("/dev/shm").free
# Keep the batches in flight (workers x prefetch) within half of the free shared memory.
workers = min(os.cpu_count() or 1, int(shm_free // 2 // (batch_bytes * PREFETCH)))
print(f"/dev/shm free: {shm_free / 2**20:.0f} MiB, one batch: {batch_bytes / 2**20:.0f} MiB "
      f"-> num_workers={workers}")
if workers == 0:
    print("No worker fits: loading in the main process, which needs no shared memory. "
          "A smaller batch (or smaller images) lets workers back in.")

loader = DataLoader(dataset, batch_size=BATCH_SIZE, num_workers=workers,
                    prefetch_factor=PREFETCH if workers else None)
seen = sum(len(images) for images, _ in loader)
print(f"loaded {seen} images")
