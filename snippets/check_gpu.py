"""Which GPU did this runtime give me? Works in Colab, Kaggle and any Linux box."""
import shutil
import subprocess

FIELDS = "index,name,memory.total,driver_version,compute_cap"


def query_nvidia_smi():
    """One dict per GPU, or an empty list when there is no NVIDIA GPU."""
    if shutil.which("nvidia-smi") is None:
        return []
    for fields in (FIELDS, FIELDS.rsplit(",", 1)[0]):  # old drivers lack compute_cap
        out = subprocess.run(
            ["nvidia-smi", f"--query-gpu={fields}", "--format=csv,noheader,nounits"],
            capture_output=True, text=True,
        )
        if out.returncode == 0:
            names = fields.split(",")
            return [dict(zip(names, (v.strip() for v in line.split(","))))
                    for line in out.stdout.strip().splitlines()]
    return []


gpus = query_nvidia_smi()
if not gpus:
    print("No NVIDIA GPU visible. Colab: Runtime > Change runtime type > T4 GPU. "
          "Kaggle: Settings > Accelerator > GPU T4 x2.")
for gpu in gpus:
    mib = int(gpu["memory.total"])  # nvidia-smi reports MiB (2**20 bytes)
    line = (f"GPU {gpu['index']}: {gpu['name']}, {mib} MiB = {mib * 2**20 / 1e9:.1f} GB, "
            f"driver {gpu['driver_version']}")
    if "compute_cap" in gpu:
        major = int(gpu["compute_cap"].split(".")[0])
        line += (f", compute capability {gpu['compute_cap']} "
                 f"(bfloat16 in hardware: {'yes' if major >= 8 else 'no, use float16'})")
    print(line)

try:
    import torch
except ImportError:
    torch = None
if torch is not None:
    print(f"PyTorch {torch.__version__}: CUDA available = {torch.cuda.is_available()}")
    for i in range(torch.cuda.device_count()):
        free, total = torch.cuda.mem_get_info(i)
        print(f"  cuda:{i} {torch.cuda.get_device_name(i)}: "
              f"{free / 2**30:.1f} GiB free of {total / 2**30:.1f} GiB")
