"""Run a PyTorch computation on the TPU with PyTorch/XLA and check where it ran."""
import os

import torch
import torch_xla
import torch_xla.runtime as xr

N = int(os.environ.get("MATRIX_SIZE", "8192"))

device = torch_xla.device()  # replaces the older xm.xla_device()
print(f"PyTorch/XLA {torch_xla.__version__}: device type {xr.device_type()}, "
      f"{xr.global_runtime_device_count()} device(s)")
if xr.device_type() != "TPU":
    print("WARNING: PyTorch/XLA found no TPU; it runs on", xr.device_type())

x = torch.randn(N, N, device=device, dtype=torch.bfloat16)
y = x @ x  # only recorded: XLA tensors are lazy
torch_xla.sync()  # compile and run everything recorded so far
print(f"result on {y.device}, mean {y.float().mean().item():.3f}")
