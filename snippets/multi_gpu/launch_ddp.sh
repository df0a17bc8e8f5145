# One process per GPU: 2 on Kaggle's GPU T4 x2. In a notebook, put "!" first.
torchrun --standalone --nproc-per-node=2 ddp_train.py
