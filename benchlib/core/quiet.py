"""Keep the frameworks' start-up chatter out of benchlib's output.

TensorFlow 2.16+ logs through absl before its logging is set up, so ``TF_CPP_MIN_LOG_LEVEL`` does
not reach the oneDNN notice, "Could not find cuda drivers" or, on a machine without a GPU,
"failed call to cuInit". C++ writes those lines straight to file descriptor 2, beneath Python's
``sys.stderr``: `native_stderr_filtered` filters that descriptor while TensorFlow loads and first
looks for GPUs, and the runner filters what isolated workloads printed the same way
(`drop_noise`). Lines that are not known noise, errors included, pass unchanged.
"""

from __future__ import annotations

import os
import re
import sys
import tempfile
import warnings
from collections.abc import Iterator
from contextlib import contextmanager

# Set before a framework is imported; a value the user set wins.
FRAMEWORK_ENV = {
    # Once TF's logging is up: hide its C++ INFO and WARNING lines, keep ERROR.
    "TF_CPP_MIN_LOG_LEVEL": "2",
}

_NOISE = re.compile(
    r"WARNING: All log messages before absl::InitializeLog\(\) is called are written to STDERR"
    # absl's INFO and WARNING lines: "I0000 00:00:1795425353.340343   12416 port.cc:153] ..."
    r"|[IW]\d{4} \d\d:\d\d:\d+\.\d+ +\d+ \S+:\d+\] "
    # The second line of the CPU-instructions INFO above.
    r"|To enable the following instructions: .*rebuild TensorFlow with the appropriate compiler flags"
    # ERROR lines that mean nothing for the run: TF probing CUDA where there is no GPU, and TF and
    # torch each registering the same CUDA plugins (Colab).
    r"|E\d{4} .*(failed call to cuInit|Unable to register cu\w+ factory|computation placer already registered)"
)

# Python warnings that say nothing about a run. tqdm.auto, which frameworks import while a workload
# loads, warns "IProgress not found" (with the path of tqdm in the virtualenv) in a Jupyter kernel
# without ipywidgets, where it can't draw a widget progress bar; benchlib shows no progress bars.
NOISY_WARNINGS = (r"IProgress not found",)


def quiet_environment() -> None:
    """Set `FRAMEWORK_ENV` in this process (and so in the processes it starts), keeping the user's values."""
    for name, value in FRAMEWORK_ENV.items():
        os.environ.setdefault(name, value)
    quiet_warnings()


def quiet_warnings() -> None:
    """Ignore `NOISY_WARNINGS` in this process: a notebook that runs benchlib shows no tqdm warning."""
    for message in NOISY_WARNINGS:
        warnings.filterwarnings("ignore", message=message)


def is_noise(line: str) -> bool:
    return _NOISE.match(line) is not None


def drop_noise(text: str) -> str:
    """``text`` without the lines of known framework noise."""
    return "".join(line for line in text.splitlines(keepends=True) if not is_noise(line))


@contextmanager
def native_stderr_filtered() -> Iterator[None]:
    """While the block runs, collect what is written to file descriptor 2; then write back all but the noise.

    A file rather than a pipe: C++ code that writes while holding the GIL can't block on a pipe
    nobody is reading. Where there is no descriptor 2 to redirect, the block runs unfiltered.
    """
    try:
        sys.stderr.flush()
        original = os.dup(2)
    except (OSError, ValueError, AttributeError):
        yield
        return
    with tempfile.TemporaryFile() as capture:
        os.dup2(capture.fileno(), 2)
        try:
            yield
        finally:
            try:
                sys.stderr.flush()
            except (OSError, ValueError):
                pass
            os.dup2(original, 2)
            os.close(original)
            capture.seek(0)
            kept = drop_noise(capture.read().decode("utf-8", errors="replace"))
            if kept:
                sys.stderr.write(kept)
