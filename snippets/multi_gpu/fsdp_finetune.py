"""Fully fine-tune a causal language model sharded over every GPU with FSDP.

Each process keeps 1/N of the weights, their gradients and the optimizer state;
a layer's whole weights exist only while it computes. Start it with torchrun:
    torchrun --standalone --nproc-per-node=2 fsdp_finetune.py
Without GPUs it runs on the CPU with the gloo backend, so you can try it anywhere.
"""
import os

import torch
import torch.distributed as dist
from torch.distributed.checkpoint.state_dict import StateDictOptions, get_model_state_dict
from torch.distributed.fsdp import fully_shard
from transformers import AutoModelForCausalLM, AutoTokenizer

MODEL_ID = "Qwen/Qwen2.5-0.5B"  # small enough to try anywhere; put a bigger one here
STEPS = int(os.environ.get("STEPS", "10"))
BATCH_PER_GPU, SEQ_LEN = 2, 128  # per process, as with DDP

TEXTS = [
    "Q: What does FSDP shard? A: Weights, gradients and optimizer state.",
    "Q: When is a layer whole? A: While it computes; then it is freed.",
    "Q: What crosses the link? A: Every layer's weights, and the gradients.",
    "Q: How many copies does DDP keep? A: A whole model on every GPU.",
]


def main():
    cuda = torch.cuda.is_available()
    # NCCL between GPUs, gloo on the CPU.
    dist.init_process_group("nccl" if cuda else "gloo")
    rank, world = dist.get_rank(), dist.get_world_size()
    local_rank = int(os.environ["LOCAL_RANK"])  # set by torchrun: this one's GPU
    device = torch.device("cuda", local_rank) if cuda else torch.device("cpu")
    if cuda:
        torch.cuda.set_device(device)

    tokenizer = AutoTokenizer.from_pretrained(MODEL_ID)
    tokenizer.pad_token = tokenizer.pad_token or tokenizer.eos_token
    # Every process reads the whole model into the VM's memory, in fp32 for
    # training; fully_shard then puts only its share of each weight on its GPU.
    model = AutoModelForCausalLM.from_pretrained(MODEL_ID, dtype=torch.float32)
    total = sum(p.numel() for p in model.parameters())
    for layer in model.model.layers:
        fully_shard(layer)  # one unit per layer: gathered whole one at a time
    fully_shard(model)  # the rest: embeddings, final norm, output layer
    # Each parameter is now a DTensor; to_local() is this process's shard.
    shard = sum(p.to_local().numel() for p in model.parameters())
    shards = [None] * world
    dist.all_gather_object(shards, (shard, str(device)))
    if rank == 0:
        for r, (n, where) in enumerate(shards):
            print(f"rank {r}: {n:,} of {total:,} parameters ({n / total:.1%}) on {where}")

    # Built from the shards, so the optimizer state is sharded too.
    optimizer = torch.optim.AdamW(model.parameters(), lr=5e-5)
    # Stand-in data: each process trains on its own texts, as under DDP.
    mine = [TEXTS[(rank + world * i) % len(TEXTS)] for i in range(BATCH_PER_GPU)]
    batch = tokenizer(mine, padding="max_length", max_length=SEQ_LEN,
                      return_tensors="pt").to(device)
    # No loss on padding.
    labels = batch["input_ids"].masked_fill(batch["attention_mask"] == 0, -100)
    model.train()
    for step in range(STEPS):
        loss = model(**batch, labels=labels).loss
        loss.backward()  # each process keeps only its shard of the gradients
        optimizer.step()
        optimizer.zero_grad()
        mean_loss = loss.detach()
        dist.all_reduce(mean_loss, op=dist.ReduceOp.AVG)  # over all processes
        if rank == 0:
            print(f"step {step + 1}/{STEPS} loss {mean_loss.item():.4f}")

    if cuda:
        peak = torch.tensor(torch.cuda.max_memory_allocated() / 2**30, device=device)
        dist.all_reduce(peak, op=dist.ReduceOp.MAX)
        if rank == 0:
            print(f"peak GPU memory {peak.item():.2f} GiB on the fullest GPU")
    # Every process sends its shards; rank 0 gets the whole model, on its CPU,
    # and saves it as an ordinary checkpoint that from_pretrained reads.
    options = StateDictOptions(full_state_dict=True, cpu_offload=True)
    state = get_model_state_dict(model, options=options)
    if rank == 0:
        model.save_pretrained("fsdp-finetuned", state_dict=state)
        tokenizer.save_pretrained("fsdp-finetuned")
        print("saved fsdp-finetuned/")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
