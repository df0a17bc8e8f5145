# One process per GPU, each holding half of the model. In a notebook, put "!" first.
torchrun --standalone --nproc-per-node=2 fsdp_finetune.py
