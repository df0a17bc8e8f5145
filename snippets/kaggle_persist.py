"""Checkpoints on Kaggle: /kaggle/working is saved with each notebook version.

To continue in a new session, add this notebook's last version as input (Add Input >
Your Work > this notebook) and set PREVIOUS_OUTPUT to where it appears under /kaggle/input.
"""
import os
import shutil

import torch
import torch.nn.functional as F

WORKING = os.environ.get("KAGGLE_WORKING_DIR", "/kaggle/working")
PREVIOUS_OUTPUT = os.environ.get("PREVIOUS_OUTPUT", "/kaggle/input/my-notebook")
TOTAL_STEPS = int(os.environ.get("TOTAL_STEPS", "20000"))
SAVE_EVERY_STEPS = int(os.environ.get("SAVE_EVERY_STEPS", "1000"))

checkpoint = os.path.join(WORKING, "checkpoint.pt")
previous = os.path.join(PREVIOUS_OUTPUT, "checkpoint.pt")
if not os.path.exists(checkpoint) and os.path.exists(previous):
    shutil.copy(previous, checkpoint)  # /kaggle/input is read-only: copy before writing
    print(f"copied the previous version's checkpoint from {previous}")

device = "cuda" if torch.cuda.is_available() else "cpu"
torch.manual_seed(0)
model = torch.nn.Sequential(torch.nn.Linear(512, 512), torch.nn.ReLU(), torch.nn.Linear(512, 10)).to(device)
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)

start = 0
if os.path.exists(checkpoint):
    state = torch.load(checkpoint, map_location=device)
    model.load_state_dict(state["model"])
    optimizer.load_state_dict(state["optimizer"])
    start = state["step"]
    print(f"resumed from step {start}")

for step in range(start, TOTAL_STEPS):
    g = torch.Generator().manual_seed(step)  # stand-in data; use your DataLoader
    x = torch.randn(64, 512, generator=g)
    loss = F.cross_entropy(model(x.to(device)), x[:, :10].argmax(dim=1).to(device))
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    if (step + 1) % SAVE_EVERY_STEPS == 0 or step + 1 == TOTAL_STEPS:
        tmp = checkpoint + ".tmp"  # write, then rename: never half a checkpoint
        torch.save({"step": step + 1, "model": model.state_dict(),
                    "optimizer": optimizer.state_dict()}, tmp)
        os.replace(tmp, checkpoint)
        print(f"saved step {step + 1}", flush=True)

print(f"done: {checkpoint} holds step {max(start, TOTAL_STEPS)}")
