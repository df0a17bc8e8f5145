"""Stand-in for ``nvidia-smi`` on a machine without an NVIDIA GPU: answers like a Colab T4.

``FAKE_GPU_COUNT`` sets how many T4s it reports (Kaggle's "GPU T4 x2" is 2). ``FAKE_NVSMI_OLD=1``
mimics a driver too old to know the ``compute_cap`` query field.
"""

from __future__ import annotations

import os
import sys

GPU = {"name": "Tesla T4", "memory.total": "15360", "driver_version": "550.54.15", "compute_cap": "7.5"}


def main(argv: list[str]) -> int:
    count = int(os.environ.get("FAKE_GPU_COUNT", "1"))
    query = next((a.split("=", 1)[1] for a in argv if a.startswith("--query-gpu=")), None)
    if query is None:
        print("| NVIDIA-SMI 550.54.15    Driver Version: 550.54.15    CUDA Version: 12.4 |")
        for i in range(count):
            print(f"| {i}  {GPU['name']}  Off |  0MiB / {GPU['memory.total']}MiB |")
        return 0
    fields = query.split(",")
    if "compute_cap" in fields and os.environ.get("FAKE_NVSMI_OLD") == "1":
        print('Field "compute_cap" is not a valid field to query.')
        return 2
    for i in range(count):
        row = {"index": str(i), **GPU}
        print(", ".join(row[f] for f in fields))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
