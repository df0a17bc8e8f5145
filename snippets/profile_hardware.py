"""What did I get? CPU, RAM, disk, shared memory and GPU of this runtime, in GiB and GB."""
import os
import shutil
import subprocess


def both(n_bytes):
    # Tools disagree on units: /proc/meminfo says kB but means KiB, nvidia-smi says MiB.
    return f"{n_bytes / 2**30:.1f} GiB = {n_bytes / 1e9:.1f} GB"


def cpu_model():
    with open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    return "unknown"


def meminfo():
    values = {}
    with open("/proc/meminfo") as f:
        for line in f:
            key, rest = line.split(":", 1)
            values[key] = int(rest.split()[0]) * 1024  # the "kB" here are KiB
    return values


print(f"CPU:  {cpu_model()}, {os.cpu_count()} logical cores")
mem = meminfo()
print(f"RAM:  total {both(mem['MemTotal'])}, available now {both(mem['MemAvailable'])}")
for path in (os.getcwd(), "/dev/shm"):
    if os.path.exists(path):
        usage = shutil.disk_usage(path)
        print(f"Disk {path}: total {both(usage.total)}, free {both(usage.free)}")

if shutil.which("nvidia-smi"):
    out = subprocess.run(
        ["nvidia-smi", "--query-gpu=name,memory.total", "--format=csv,noheader,nounits"],
        capture_output=True, text=True, check=True,
    )
    for line in out.stdout.strip().splitlines():
        name, mib = (part.strip() for part in line.split(","))
        print(f"GPU:  {name}, {both(int(mib) * 2**20)}")
else:
    print("GPU:  none (nvidia-smi not found)")
