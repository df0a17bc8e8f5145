"""Train on every GPU of this machine with DistributedDataParallel.

One process per GPU; start it with torchrun, which tells each process its rank:
    torchrun --standalone --nproc-per-node=2 ddp_train.py
Without GPUs it runs on the CPU with the gloo backend, so you can try it anywhere.
"""
import os
import time

import torch
import torch.distributed as dist
import torch.nn as nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler

EPOCHS = int(os.environ.get("EPOCHS", "3"))
BATCH_PER_GPU = 128  # per process: the global batch is 128 x the number of GPUs


def main():
    cuda = torch.cuda.is_available()
    # NCCL between GPUs, gloo on the CPU.
    dist.init_process_group("nccl" if cuda else "gloo")
    rank, world = dist.get_rank(), dist.get_world_size()
    local_rank = int(os.environ["LOCAL_RANK"])  # set by torchrun: this one's GPU
    device = torch.device("cuda", local_rank) if cuda else torch.device("cpu")
    if cuda:
        torch.cuda.set_device(device)

    # Stand-in data: put your Dataset here. Every process builds the same
    # dataset; the DistributedSampler hands each a different part of it.
    g = torch.Generator().manual_seed(0)
    images = torch.randn(4096, 1, 28, 28, generator=g)
    labels = (images.mean(dim=(1, 2, 3)) > 0).long()
    dataset = TensorDataset(images, labels)
    sampler = DistributedSampler(dataset, shuffle=True)
    # persistent_workers: the loader's worker processes start once, not every
    # epoch; forking them again in each epoch can hang a DDP job.
    loader = DataLoader(dataset, batch_size=BATCH_PER_GPU, sampler=sampler,
                        num_workers=2, pin_memory=cuda, persistent_workers=True)

    model = nn.Sequential(
        nn.Conv2d(1, 32, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
        nn.Conv2d(32, 64, 3, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d(1),
        nn.Flatten(), nn.Linear(64, 2),
    ).to(device)
    # DDP starts every process from rank 0's weights.
    model = DDP(model, device_ids=[local_rank] if cuda else None)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)

    for epoch in range(EPOCHS):
        sampler.set_epoch(epoch)  # a new shuffle each epoch, the same everywhere
        start, seen = time.perf_counter(), 0
        for x, y in loader:
            x = x.to(device, non_blocking=True)
            y = y.to(device, non_blocking=True)
            loss = nn.functional.cross_entropy(model(x), y)
            optimizer.zero_grad()
            loss.backward()  # DDP averages the gradients of all processes here
            optimizer.step()
            seen += len(x)
        # Whole-job numbers: samples of all processes, and their summed losses.
        totals = torch.tensor([seen, loss.item()], device=device)
        dist.all_reduce(totals)
        if rank == 0:
            seconds = time.perf_counter() - start
            print(f"epoch {epoch}: {int(totals[0])} samples on {world} processes "
                  f"in {seconds:.1f} s ({totals[0] / seconds:.0f} samples/s), "
                  f"loss {totals[1] / world:.3f}")

    if rank == 0:  # one process saves; .module is the model inside DDP
        torch.save(model.module.state_dict(), "model.pt")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
