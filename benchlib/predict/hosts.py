"""The machine around the GPU: an eager engine's kernels are launched by its CPU, one by one.

``model.generate()`` in eager PyTorch spends a fixed host time on every kernel it launches (Python,
the dispatcher, the CUDA driver). A kernel runs while the next is being launched, so an op takes
the longer of the two (`benchlib.predict.engines.time_ops`), and a small model's decode step,
whose kernels are short, goes at the speed of the host. That time belongs to the CPU, not the GPU:
a desktop's few fast cores launch faster than a server's many slower ones, and a notebook's
shared vCPUs are slower still.

Each host class has its launch cost, set once: fitted on published measurements whose host is
known or clearly implied, and says which; where none was found (Colab's and Kaggle's VMs), assumed
a server's and labelled so. Each GPU gets the host readers find it on (`default_host`); ``--host``
overrides it.
"""

from __future__ import annotations

from dataclasses import dataclass

from benchlib.catalog.gpus import AcceleratorSpec
from benchlib.predict.roofline import EAGER_LAUNCH_S

# Fitted by benchmarks/llm_speed_published.py on bitsandbytes' own benchmark (benchmarking/README.md,
# 2024-12), the one published generate() measurement on a GeForce card found: its RTX 4090 fp16 and
# bf16 rows. A GeForce card is a desktop's (NVIDIA's licence keeps it out of data centres).
DESKTOP_LAUNCH_S = 3e-6


@dataclass(frozen=True)
class Host:
    """One class of machine an eager engine runs on, and its host seconds per kernel launch."""

    name: str
    title: str
    launch_s: float
    status: str  # fitted, or assumed where no published measurement with this host was found
    basis: str


HOSTS: dict[str, Host] = {
    "server": Host(
        "server",
        "a data-centre server (Xeon or EPYC cores)",
        EAGER_LAUNCH_S,
        "fitted",
        "fitted on Qwen2.5's transformers tables (A100 80GB SXM servers)",
    ),
    "desktop": Host(
        "desktop",
        "a desktop PC (a recent Core or Ryzen)",
        DESKTOP_LAUNCH_S,
        "fitted",
        "fitted on bitsandbytes' benchmark on an RTX 4090 (its fp16 and bf16 rows)",
    ),
    "colab": Host(
        "colab",
        "Google Colab's VM (2 shared vCPUs)",
        EAGER_LAUNCH_S,
        "assumed",
        "assumed a server's: no published generate() measurement with a Colab host was found",
    ),
    "kaggle": Host(
        "kaggle",
        "Kaggle's VM (4 shared vCPUs)",
        EAGER_LAUNCH_S,
        "assumed",
        "assumed a server's: no published generate() measurement with a Kaggle host was found",
    ),
}
# A host's fields that are prose: they change no number, so a digest of the hosts' constants leaves them out.
PROSE_FIELDS = ("title", "status", "basis")
# The free notebooks' GPUs: where readers meet them.
NOTEBOOK_GPUS = {"T4": "colab", "L4": "colab", "P100 PCIe 16GB": "kaggle"}


def default_host(spec: AcceleratorSpec) -> Host:
    """The host readers find a GPU on: a T4 or L4 on Colab, a P100 on Kaggle, a GeForce card in a
    desktop, every other card in a server."""
    if spec.name in NOTEBOOK_GPUS:
        return HOSTS[NOTEBOOK_GPUS[spec.name]]
    return HOSTS["desktop" if spec.name.startswith("GeForce") else "server"]


def find_host(name: str) -> Host:
    """The host class called ``name``; ValueError lists them."""
    if name not in HOSTS:
        raise ValueError(f"--host {name!r}: choose one of {', '.join(HOSTS)}")
    return HOSTS[name]
