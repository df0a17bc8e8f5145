"""One DistributedDataParallel process, as torchrun starts it (one per device).

    python -m torch.distributed.run --standalone --nproc-per-node N \\
        -m benchlib.measure.distributed.torch_worker --device cuda --backend nccl --out report.json

torchrun sets RANK, LOCAL_RANK and WORLD_SIZE; this module only trains and times. Every rank
times its own steps and rank 0 keeps, per step, the slowest rank's time: a data-parallel step is
done when the last replica is. After training it checks that every replica holds the same
weights (the point of DDP), then times ``all_reduce`` alone for the bus bandwidth.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from dataclasses import asdict, replace
from typing import Any

from benchlib.measure.distributed.report import (
    SIZES,
    AllReduceTiming,
    RunSize,
    WorkerReport,
    worker_arguments,
    write_report,
)
from benchlib.measure.distributed.timing import time_steps


def _slowest(dist: Any, values: list[float]) -> list[float]:
    """Per index, the largest value any rank saw."""
    gathered: list[list[float] | None] = [None] * dist.get_world_size()
    dist.all_gather_object(gathered, values)
    return [max(column) for column in zip(*gathered)]  # type: ignore[arg-type]


def _replicas_in_sync(torch: Any, dist: Any, model: Any) -> bool:
    flat = torch.cat([p.detach().reshape(-1) for p in model.parameters()])
    high, low = flat.clone(), flat.clone()
    dist.all_reduce(high, op=dist.ReduceOp.MAX)
    dist.all_reduce(low, op=dist.ReduceOp.MIN)
    return bool(torch.equal(high, low))


def _time_allreduce(
    torch: Any, dist: Any, device: Any, sync: Callable[[], None], size: RunSize
) -> list[AllReduceTiming]:
    """nccl-tests' measurement in miniature: warm up, then the mean time of back-to-back all-reduces."""
    world, rank = dist.get_world_size(), dist.get_rank()
    out = []
    for mib in size.allreduce_mib:
        count = int(mib * 2**20) // 4
        buf = torch.full((count,), float(rank + 1), dtype=torch.float32, device=device)
        dist.all_reduce(buf)
        expected = world * (world + 1) / 2
        if not bool((buf == expected).all()):
            raise RuntimeError(f"all_reduce of {mib:g} MiB gave a wrong sum (expected {expected:g} everywhere)")
        for _ in range(2):
            dist.all_reduce(buf)
        dist.barrier()
        sync()
        start = time.perf_counter()
        for _ in range(size.allreduce_iters):
            dist.all_reduce(buf)
        sync()
        per_op = (time.perf_counter() - start) / size.allreduce_iters
        slowest = _slowest(dist, [per_op])[0]
        out.append(AllReduceTiming(bytes=count * 4, iterations=size.allreduce_iters, seconds=slowest))
    return out


def train(argv: list[str] | None = None) -> None:
    parser = worker_arguments("One DDP training process; start it with torchrun.")
    parser.add_argument("--backend", choices=["nccl", "gloo"], required=True)
    args = parser.parse_args(argv)
    size = SIZES[args.size]

    import torch
    import torch.distributed as dist
    from torch.nn.parallel import DistributedDataParallel

    from benchlib.models import fashion_mnist

    local_rank = int(os.environ["LOCAL_RANK"])
    if args.threads:
        torch.set_num_threads(args.threads)
    if args.device == "cuda":
        torch.cuda.set_device(local_rank)
        device = torch.device("cuda", local_rank)
        sync, sync_name = torch.cuda.synchronize, "torch.cuda.synchronize"
    else:
        device = torch.device("cpu")
        sync, sync_name = (lambda: None), "none (cpu is synchronous)"
    dist.init_process_group(backend=args.backend)
    try:
        rank, world = dist.get_rank(), dist.get_world_size()
        torch.manual_seed(0)
        model = fashion_mnist.torch_model().to(device)
        ddp = DistributedDataParallel(model, device_ids=[local_rank] if args.device == "cuda" else None)
        optimizer = torch.optim.Adam(ddp.parameters())
        loss_fn = torch.nn.CrossEntropyLoss()
        # Each rank its own synthetic batch, already on the device: the run measures compute and
        # gradient exchange, not an input pipeline.
        images, labels = fashion_mnist.synthetic(size.per_device_batch, seed=rank)
        x = (torch.from_numpy(images).float() / 255.0).unsqueeze(1).to(device)
        y = torch.from_numpy(labels).long().to(device)

        def steps(n: int) -> Any:
            loss = None
            for _ in range(n):
                optimizer.zero_grad(set_to_none=True)
                loss = loss_fn(ddp(x), y)
                loss.backward()
                optimizer.step()
            sync()
            return loss

        timed = time_steps(steps, size)
        timed = replace(timed, sample_times_s=_slowest(dist, timed.sample_times_s))
        in_sync = _replicas_in_sync(torch, dist, model)
        allreduce = _time_allreduce(torch, dist, device, sync, size) if world > 1 else []
        names: list[Any] = [None] * world
        dist.all_gather_object(names, torch.cuda.get_device_name(device) if args.device == "cuda" else None)
        if rank == 0:
            write_report(
                WorkerReport(
                    engine="torch",
                    framework="torch",
                    framework_version=torch.__version__,
                    launcher="torchrun",
                    backend=args.backend,
                    device=args.device,
                    device_names=[n for n in names if n],
                    world_size=world,
                    per_device_batch=size.per_device_batch,
                    threads_per_process=torch.get_num_threads(),
                    sync=sync_name,
                    replicas_in_sync=in_sync,
                    allreduce=allreduce,
                    **asdict(timed),
                ),
                args.out,
            )
        # Every rank past its last collective before any tears gloo down: torch 2.14's gloo aborted
        # a rank (SIGABRT, after the report was written) in about 1 run in 10 without it.
        dist.barrier()
    finally:
        dist.destroy_process_group()


def main(argv: list[str] | None = None) -> None:
    # @record writes this process's traceback where torchrun's failure summary finds it, so the
    # parent can name the root cause instead of "exit code 1".
    from torch.distributed.elastic.multiprocessing.errors import record

    record(train)(argv)


if __name__ == "__main__":
    main()
