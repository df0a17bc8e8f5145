"""Train with checkpoints on Google Drive, so a disconnect costs minutes, not hours.

After a disconnect or a runtime restart, run this cell again: it mounts Drive, loads the last
checkpoint and carries on from the step it saved.
"""
import os
import time

import torch
import torch.nn.functional as F
from google.colab import drive

MOUNTPOINT = os.environ.get("DRIVE_MOUNTPOINT", "/content/drive")
RUN_DIR = os.path.join(MOUNTPOINT, "MyDrive", "checkpoints", os.environ.get("RUN_NAME", "my-run"))
TOTAL_STEPS = int(os.environ.get("TOTAL_STEPS", "20000"))
SAVE_EVERY_STEPS = int(os.environ.get("SAVE_EVERY_STEPS", "1000"))
SAVE_EVERY_SECONDS = float(os.environ.get("SAVE_EVERY_SECONDS", "600"))  # and at least every 10 min
LOG_EVERY_STEPS = int(os.environ.get("LOG_EVERY_STEPS", "500"))
BATCH_SIZE = 64

drive.mount(MOUNTPOINT)
os.makedirs(RUN_DIR, exist_ok=True)
checkpoint = os.path.join(RUN_DIR, "checkpoint.pt")

device = "cuda" if torch.cuda.is_available() else "cpu"
torch.manual_seed(0)
model = torch.nn.Sequential(
    torch.nn.Linear(512, 512), torch.nn.ReLU(),
    torch.nn.Linear(512, 512), torch.nn.ReLU(),
    torch.nn.Linear(512, 10),
).to(device)
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)


def get_batch(step):
    # Stand-in for your DataLoader. Seeding by step gives a resumed run the same batches.
    g = torch.Generator().manual_seed(step)
    x = torch.randn(BATCH_SIZE, 512, generator=g)
    return x.to(device), x[:, :10].argmax(dim=1).to(device)


def save(step):
    # Write a temporary file next to the checkpoint, then rename it over the old one: a crash
    # mid-save leaves the previous checkpoint intact instead of half a file.
    tmp = checkpoint + ".tmp"
    with open(tmp, "wb") as f:
        torch.save({"step": step, "model": model.state_dict(),
                    "optimizer": optimizer.state_dict()}, f)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, checkpoint)


start = 0
if os.path.exists(checkpoint):
    state = torch.load(checkpoint, map_location=device)
    model.load_state_dict(state["model"])
    optimizer.load_state_dict(state["optimizer"])
    start = state["step"]
    print(f"resumed from step {start}", flush=True)

last_save = time.monotonic()
for step in range(start, TOTAL_STEPS):
    x, y = get_batch(step)
    loss = F.cross_entropy(model(x), y)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    done = step + 1
    if done % LOG_EVERY_STEPS == 0:
        print(f"step {done} loss {loss.item():.4f}", flush=True)
    if (done % SAVE_EVERY_STEPS == 0 or done == TOTAL_STEPS
            or time.monotonic() - last_save > SAVE_EVERY_SECONDS):
        save(done)
        last_save = time.monotonic()
        print(f"saved step {done}", flush=True)

print(f"finished {TOTAL_STEPS} steps, final loss {loss.item():.6f}" if start < TOTAL_STEPS
      else f"already finished: {checkpoint} holds step {start}")
drive.flush_and_unmount()  # push pending writes to Drive before the VM goes away
