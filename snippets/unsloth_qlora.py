# In Colab first run: !pip install -q unsloth
"""QLoRA of Llama 3.1 8B on a free Colab T4 with Unsloth: a 4-bit base model, LoRA adapters, a short
fine-tune with checkpoints on Google Drive, and the adapter saved there.

After a disconnect or a runtime restart, run this cell again: it resumes from the newest checkpoint.
"""
from unsloth import FastLanguageModel  # noqa: I001 (first: Unsloth patches transformers and peft on import)

import os
import shutil

import torch
from google.colab import drive
from transformers import DataCollatorForLanguageModeling, Trainer, TrainingArguments
from transformers.trainer_utils import get_last_checkpoint

# Unsloth's copy of Llama 3.1 8B, stored in 4 bits: a smaller download, and no licence to accept.
MODEL_ID = "unsloth/Meta-Llama-3.1-8B-bnb-4bit"
# The largest batch of 1,024-token samples a T4 fits, as `benchlib fit --model llama-3.1-8b
# --mode qlora --gpu T4 --seq-len 1024 --grad-checkpointing` predicts with plain transformers and peft.
BATCH_SIZE, SEQ_LEN, LORA_RANK, STEPS = 2, 1024, 16, 60
MOUNTPOINT = os.environ.get("DRIVE_MOUNTPOINT", "/content/drive")
OUTPUT_DIR = os.path.join(MOUNTPOINT, "MyDrive", "checkpoints", "llama-3.1-8b-unsloth")

drive.mount(MOUNTPOINT)  # Drive outlives the runtime; the VM's disk does not
model, tokenizer = FastLanguageModel.from_pretrained(
    model_name=MODEL_ID, max_seq_length=SEQ_LEN, load_in_4bit=True,
    dtype=None,  # float16 on a T4, which has no bfloat16; bfloat16 where the GPU has it
)
model = FastLanguageModel.get_peft_model(
    model, r=LORA_RANK, lora_alpha=LORA_RANK,
    lora_dropout=0, bias="none",  # Unsloth's fast path needs both
    target_modules=["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"],
    use_gradient_checkpointing="unsloth",  # Unsloth's variant keeps the saved activations in CPU memory
    random_state=3407,
)
model.print_trainable_parameters()

examples = [  # stand-in data in Alpaca's shape: use your own, e.g. load_dataset("yahma/alpaca-cleaned")
    ("Why does my Colab session lose its files?", "The VM is reset when the runtime ends; save to Drive."),
    ("What is NF4?", "A 4-bit data type whose levels fit normally distributed weights."),
    ("Why train adapters?", "Only a few million weights get gradients and optimizer state."),
    ("What does gradient checkpointing do?", "It recomputes activations instead of storing them."),
    ("Which GPU does free Colab give?", "Usually a T4."),
    ("Why fp16 on a T4?", "It has fp16 tensor cores but no bfloat16 hardware."),
    ("How big is a LoRA adapter?", "Small: it is saved apart from the base model."),
    ("How do I resume after a disconnect?", "Run the cell again; the Trainer finds the last checkpoint."),
]
prompt = "### Instruction:\n{}\n\n### Response:\n{}"
# The end-of-text token teaches the model to stop; the collator pads each batch and masks the padding.
train_data = [tokenizer(prompt.format(q, a) + tokenizer.eos_token, truncation=True, max_length=SEQ_LEN)
              for q, a in examples]

os.makedirs(OUTPUT_DIR, exist_ok=True)
last = get_last_checkpoint(OUTPUT_DIR)
while last and not os.path.exists(os.path.join(last, "trainer_state.json")):  # the Trainer writes it last
    shutil.rmtree(last)
    print(f"removed {last}: the runtime stopped while saving it")
    last = get_last_checkpoint(OUTPUT_DIR)

bf16 = torch.cuda.is_bf16_supported(including_emulation=False)  # a T4 only emulates bfloat16
args = TrainingArguments(
    output_dir=OUTPUT_DIR,
    per_device_train_batch_size=BATCH_SIZE,
    gradient_accumulation_steps=4,  # 4 x BATCH_SIZE samples per optimizer step
    max_steps=STEPS,
    learning_rate=2e-4,
    warmup_steps=5,
    logging_steps=10,
    save_steps=20,  # a disconnect costs at most this many steps
    save_total_limit=2,  # each checkpoint holds the adapter and its optimizer state
    fp16=not bf16,  # with a loss scaler: fp16 gradients underflow without one
    bf16=bf16,
    report_to="none",
    seed=3407,
)
trainer = Trainer(model=model, args=args, train_dataset=train_data,
                  data_collator=DataCollatorForLanguageModeling(tokenizer, mlm=False))
if torch.cuda.is_available():
    torch.cuda.reset_peak_memory_stats()  # measure training, not loading
if last:
    print(f"resuming from {last}")
result = trainer.train(resume_from_checkpoint=last)
losses = [entry["loss"] for entry in trainer.state.log_history if "loss" in entry]
print(f"finished at step {result.global_step}, last logged loss {losses[-1]:.4f}")
if torch.cuda.is_available():
    print(f"peak GPU memory {torch.cuda.max_memory_allocated() / 2**30:.2f} GiB (batch {BATCH_SIZE}, "
          f"seq len {SEQ_LEN}, LoRA rank {LORA_RANK}, {'bf16' if bf16 else 'fp16'}, Unsloth)")

model.save_pretrained(os.path.join(OUTPUT_DIR, "adapter"))  # only the adapter weights
tokenizer.save_pretrained(os.path.join(OUTPUT_DIR, "adapter"))
drive.flush_and_unmount()  # push pending writes to Drive before the VM goes away
