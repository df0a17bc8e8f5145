"""Fine-tune with the Hugging Face Trainer, checkpointing where a disconnect can't reach.

After a disconnect or a runtime restart, run this cell again: it resumes from the newest
complete checkpoint, on Google Drive (Colab) or in /kaggle/working (Kaggle).
"""
import json
import os
import shutil

import torch
from transformers import AutoModelForCausalLM, AutoTokenizer, Trainer, TrainingArguments
from transformers.trainer_utils import get_last_checkpoint

MODEL_ID = "HuggingFaceTB/SmolLM2-135M"  # small and not gated
RUN_NAME = os.environ.get("RUN_NAME", "my-trainer-run")
TOTAL_STEPS = int(os.environ.get("TOTAL_STEPS", "2000"))
SAVE_EVERY_STEPS = int(os.environ.get("SAVE_EVERY_STEPS", "200"))
LOG_EVERY_STEPS = int(os.environ.get("LOG_EVERY_STEPS", "50"))

try:
    from google.colab import drive
except ImportError:
    drive = None
if drive:  # Colab: Google Drive outlives the runtime
    MOUNTPOINT = os.environ.get("DRIVE_MOUNTPOINT", "/content/drive")
    drive.mount(MOUNTPOINT)
    OUTPUT_DIR = os.path.join(MOUNTPOINT, "MyDrive", "checkpoints", RUN_NAME)
else:  # Kaggle: /kaggle/working is saved with each notebook version
    WORKING = os.environ.get("KAGGLE_WORKING_DIR", "/kaggle/working")
    OUTPUT_DIR = os.path.join(WORKING, RUN_NAME)
    # In a new session: Add Input > Your Work > this notebook, then set its path here.
    PREVIOUS_OUTPUT = os.environ.get("PREVIOUS_OUTPUT", "/kaggle/input/my-notebook")
    previous = os.path.join(PREVIOUS_OUTPUT, RUN_NAME)
    if not os.path.exists(OUTPUT_DIR) and os.path.isdir(previous):
        shutil.copytree(previous, OUTPUT_DIR)  # /kaggle/input is read-only: copy it first
        print(f"copied the previous version's checkpoints from {previous}")
os.makedirs(OUTPUT_DIR, exist_ok=True)


def complete(checkpoint):
    # The Trainer writes trainer_state.json last: a save cut short leaves it missing or torn.
    try:
        with open(os.path.join(checkpoint, "trainer_state.json")) as f:
            return json.load(f)["global_step"] > 0
    except (OSError, ValueError, KeyError):
        return False


last = get_last_checkpoint(OUTPUT_DIR)
while last and not complete(last):
    shutil.rmtree(last)
    print(f"removed {last}: the runtime stopped while saving it")
    last = get_last_checkpoint(OUTPUT_DIR)

tokenizer = AutoTokenizer.from_pretrained(MODEL_ID)
tokenizer.pad_token = tokenizer.pad_token or tokenizer.eos_token
# float32 weights: with fp16=True below, only the computation runs in half precision.
model = AutoModelForCausalLM.from_pretrained(MODEL_ID, dtype=torch.float32)

texts = [  # stand-in data: use your own dataset
    "Q: Why does my Colab session lose its files? A: The VM is reset; save to Drive.",
    "Q: Where do Kaggle outputs live? A: In /kaggle/working, saved with each version.",
    "Q: What does a checkpoint hold? A: The weights, the optimizer and the step.",
    "Q: How do I resume? A: Run the cell again; the Trainer finds the last checkpoint.",
]
batch = tokenizer(texts, padding="max_length", max_length=32, truncation=True)
# The labels are the tokens themselves; -100 puts no loss on the padding.
train_data = [{"input_ids": ids, "attention_mask": mask,
               "labels": [t if m else -100 for t, m in zip(ids, mask)]}
              for ids, mask in zip(batch["input_ids"], batch["attention_mask"])]

args = TrainingArguments(
    output_dir=OUTPUT_DIR,
    max_steps=TOTAL_STEPS,
    per_device_train_batch_size=2,
    learning_rate=5e-5,
    save_strategy="steps",
    save_steps=SAVE_EVERY_STEPS,  # a disconnect costs at most this many steps
    save_total_limit=2,  # older checkpoints are deleted: Drive's space is limited
    logging_steps=LOG_EVERY_STEPS,
    fp16=torch.cuda.is_available(),
    report_to="none",
    seed=0,
)
trainer = Trainer(model=model, args=args, train_dataset=train_data)
if last:
    print(f"resuming from {last}", flush=True)
# True resumes from the newest checkpoint in output_dir; with none there, it raises.
result = trainer.train(resume_from_checkpoint=last is not None)
trainer.save_model(os.path.join(OUTPUT_DIR, "final"))
losses = [entry["loss"] for entry in trainer.state.log_history if "loss" in entry]
print(f"finished at step {result.global_step}, last logged loss {losses[-1]:.4f}")
if drive:
    drive.flush_and_unmount()  # push pending writes to Drive before the VM goes away
