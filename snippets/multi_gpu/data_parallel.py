"""nn.DataParallel: one line, one process. Fine to try; DDP scales better."""
import torch
import torch.nn as nn

model = nn.Sequential(nn.Linear(512, 1024), nn.ReLU(), nn.Linear(1024, 10))
if torch.cuda.device_count() > 1:
    # Every forward pass copies the model to each GPU, splits the batch
    # between them and gathers the outputs on GPU 0, from one process.
    model = nn.DataParallel(model)
device = "cuda" if torch.cuda.is_available() else "cpu"
model = model.to(device)

x = torch.randn(256, 512, device=device)  # the whole batch; DataParallel splits it
out = model(x)
print(f"{torch.cuda.device_count()} GPU(s), {type(model).__name__}: "
      f"output {tuple(out.shape)} on {out.device}")
