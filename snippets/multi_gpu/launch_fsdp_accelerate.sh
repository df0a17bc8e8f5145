# train.py: your script for Accelerate or the Trainer. In a notebook, put "!" first.
accelerate launch --use_fsdp --fsdp_version 2 \
    --fsdp_auto_wrap_policy TRANSFORMER_BASED_WRAP --num_processes 2 train.py
