"""Mixed precision in PyTorch: autocast plus GradScaler, with the right 16-bit type for the GPU."""
import os
import time

import torch
import torch.nn.functional as F

device = "cuda" if torch.cuda.is_available() else "cpu"
if device == "cuda":
    # bfloat16 runs in hardware from compute capability 8.0 (A100, L4, ...). A T4 is 7.5: use
    # float16. Don't ask torch.cuda.is_bf16_supported(): it says True on a T4 (emulated, slow).
    dtype = torch.bfloat16 if torch.cuda.get_device_capability() >= (8, 0) else torch.float16
else:
    dtype = torch.bfloat16  # CPU autocast runs in bfloat16
use_scaler = dtype == torch.float16  # float16 gradients underflow without loss scaling
print(f"device {device}, autocast dtype {dtype}, GradScaler {'on' if use_scaler else 'off'}")

BATCH_SIZE = int(os.environ.get("BATCH_SIZE", "256"))
STEPS = int(os.environ.get("STEPS", "300"))
torch.manual_seed(0)
model = torch.nn.Sequential(
    torch.nn.Linear(1024, 1024), torch.nn.GELU(),
    torch.nn.Linear(1024, 1024), torch.nn.GELU(),
    torch.nn.Linear(1024, 10),
).to(device)
optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
scaler = torch.amp.GradScaler(device, enabled=use_scaler)
teacher = torch.randn(1024, 10, device=device)  # stand-in task: learn a fixed linear labelling

start = time.perf_counter()
for step in range(STEPS):
    x = torch.randn(BATCH_SIZE, 1024, device=device)
    y = (x @ teacher).argmax(dim=1)
    with torch.autocast(device_type=device, dtype=dtype):  # matmuls in 16 bit, reductions in 32
        loss = F.cross_entropy(model(x), y)
    optimizer.zero_grad(set_to_none=True)
    scaler.scale(loss).backward()  # with the scaler off these are plain backward() and step()
    scaler.step(optimizer)
    scaler.update()
    if step == 0:
        first = loss.item()
print(f"loss {first:.3f} -> {loss.item():.3f} in {STEPS} steps, "
      f"{STEPS * BATCH_SIZE / (time.perf_counter() - start):.0f} samples/s")
