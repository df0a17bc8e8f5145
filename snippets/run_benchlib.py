"""Install benchlib, describe this machine and run the quick benchmark suite."""
import importlib.util
import os
import shutil
import subprocess
import sys
from pathlib import Path

if importlib.util.find_spec("benchlib") is None:
    # BENCHLIB_SPEC installs from elsewhere, e.g. your fork or a local checkout.
    spec = os.environ.get("BENCHLIB_SPEC", "benchlib @ git+https://github.com/gpu-field-guide/gpu-field-guide")
    subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", spec], check=True)

# The `benchlib` command; `python -m benchlib.cli` is the same program where it is not on PATH.
cli = shutil.which("benchlib")
benchlib = [cli] if cli else [sys.executable, "-m", "benchlib.cli"]
# Kaggle saves /kaggle/working with the notebook; elsewhere results go next to the notebook.
out = Path("/kaggle/working/benchlib-results" if os.path.isdir("/kaggle/working") else "benchlib-results")

subprocess.run(benchlib + ["probe"], check=True)
run = subprocess.run(benchlib + ["run", "--suite", "quick", "--out", str(out)])
if run.returncode == 1:
    print("Some workloads failed; their messages are in the table above. The rest were saved.")
elif run.returncode != 0:
    raise SystemExit(run.returncode)
for results_file in sorted(out.rglob("*.json")):
    print("results file:", results_file)
