# In Colab first run: !pip install -q bitsandbytes peft
"""QLoRA: a 4-bit NF4 base model, trainable LoRA adapters on every linear layer, a few steps."""
import torch
from peft import LoraConfig, get_peft_model, prepare_model_for_kbit_training
from transformers import AutoModelForCausalLM, AutoTokenizer, BitsAndBytesConfig

MODEL_ID = "Qwen/Qwen2.5-0.5B"  # not gated; meta-llama/Llama-3.2-1B is, and needs an HF token
BATCH_SIZE, SEQ_LEN, LORA_RANK, STEPS = 4, 512, 16, 6

# A T4 (compute capability 7.5) only emulates bfloat16, and plain is_bf16_supported() says True there.
bf16 = torch.cuda.is_bf16_supported(including_emulation=False)
compute_dtype, dtype_name = (torch.bfloat16, "bf16") if bf16 else (torch.float16, "fp16")
quantization = BitsAndBytesConfig(load_in_4bit=True, bnb_4bit_quant_type="nf4",
                                  bnb_4bit_use_double_quant=True, bnb_4bit_compute_dtype=compute_dtype)
tokenizer = AutoTokenizer.from_pretrained(MODEL_ID)
tokenizer.pad_token = tokenizer.pad_token or tokenizer.eos_token  # Llama's tokenizer has none
model = AutoModelForCausalLM.from_pretrained(MODEL_ID, quantization_config=quantization, device_map="auto")
# Casts the norms and embeddings to fp32 for stable training; checkpointing recomputes activations
# in the backward pass instead of keeping them (non-reentrant: the variant PyTorch recommends).
model = prepare_model_for_kbit_training(model, use_gradient_checkpointing=True,
                                        gradient_checkpointing_kwargs={"use_reentrant": False})
lora = LoraConfig(r=LORA_RANK, lora_alpha=2 * LORA_RANK, lora_dropout=0.05,
                  target_modules="all-linear", task_type="CAUSAL_LM")
model = get_peft_model(model, lora)
model.print_trainable_parameters()

texts = [
    "Q: Why does my Colab session lose its files? A: The VM is reset; save to Drive.",
    "Q: What is NF4? A: A 4-bit data type whose levels fit normally distributed weights.",
    "Q: Why train adapters? A: Only a few million weights get gradients and optimizer state.",
    "Q: What does gradient checkpointing do? A: It recomputes activations instead of storing them.",
    "Q: Which GPU does free Colab give? A: Usually a T4 with 15 GB of memory.",
    "Q: Why fp16 on a T4? A: It has fp16 tensor cores but no bfloat16 hardware.",
    "Q: What is a paged optimizer? A: One whose state can spill to CPU memory under pressure.",
    "Q: How big is a LoRA adapter? A: A few megabytes, saved apart from the base model.",
]
batch = tokenizer(texts, padding="max_length", max_length=SEQ_LEN, truncation=True, return_tensors="pt")
labels = batch["input_ids"].masked_fill(batch["attention_mask"] == 0, -100)  # no loss on padding

# The adapters' weights are few, so plain AdamW's state is small, and CUDA memory stats count it
# (a paged optimizer's state lives outside PyTorch's allocator).
optimizer = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=2e-4)
scaler = torch.amp.GradScaler(model.device.type, enabled=compute_dtype == torch.float16)  # fp16 grads underflow
if torch.cuda.is_available():
    torch.cuda.reset_peak_memory_stats()  # measure training, not loading
model.train()
for step in range(STEPS):
    rows = [(step * BATCH_SIZE + i) % len(texts) for i in range(BATCH_SIZE)]
    with torch.autocast(model.device.type, dtype=compute_dtype):
        loss = model(input_ids=batch["input_ids"][rows].to(model.device),
                     attention_mask=batch["attention_mask"][rows].to(model.device),
                     labels=labels[rows].to(model.device)).loss
    scaler.scale(loss).backward()
    scaler.step(optimizer)
    scaler.update()
    optimizer.zero_grad(set_to_none=True)
    print(f"step {step + 1}/{STEPS} loss {loss.item():.4f}")

setup = (f"batch {BATCH_SIZE}, seq len {SEQ_LEN}, LoRA rank {LORA_RANK}, {dtype_name} compute, "
         "AdamW, gradient checkpointing")
if torch.cuda.is_available():
    print(f"peak GPU memory {torch.cuda.max_memory_allocated() / 2**30:.2f} GiB ({setup})")
else:
    print(f"no GPU, so no peak GPU memory to report ({setup})")
model.save_pretrained("qlora-adapter")  # only the adapter weights, a few MB
