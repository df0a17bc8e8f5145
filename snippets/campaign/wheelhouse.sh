# On a machine with network and a clone of the repository: collect in wheels/ everything
# `benchlib campaign` needs that a GPU machine's torch install lacks, for that machine's
# Python and torch. Usage: bash snippets/campaign/wheelhouse.sh PYTHON_VERSION TORCH_VERSION
set -euo pipefail
PYTHON_VERSION="${1:-${PYTHON_VERSION:-}}"
TORCH_VERSION="${2:-${TORCH_VERSION:-}}"
if [[ -z "$PYTHON_VERSION" || -z "$TORCH_VERSION" ]]; then
  echo "usage: bash wheelhouse.sh PYTHON_VERSION TORCH_VERSION, the two values target_versions.sh" \
       "prints on the GPU machine (for example: bash wheelhouse.sh 3.11 2.5.1+cu121)" >&2
  exit 2
fi
if [[ ! "$PYTHON_VERSION" =~ ^3\.[0-9]+$ ]]; then
  echo "wheelhouse.sh: PYTHON_VERSION '$PYTHON_VERSION' is not a Python version such as 3.11" >&2
  exit 2
fi
if [[ ! "$TORCH_VERSION" =~ ^2\.([0-9]+)\.([0-9]+)(\+[a-z0-9]+)?$ ]] || ((BASH_REMATCH[1] < 2)); then
  echo "wheelhouse.sh: TORCH_VERSION '$TORCH_VERSION' is not torch 2.2 or later such as 2.5.1+cu121;" \
       "benchlib needs torch 2.2 or later" >&2
  exit 2
fi
# torch 2.N.P ships with torchvision 0.(N+15).P; a +cuXYZ or +cpu build gets its torchvision
# from the same PyTorch index, where the wheels carry the same label.
LABEL="${BASH_REMATCH[3]}"
TORCHVISION_VERSION="0.$((BASH_REMATCH[1] + 15)).${BASH_REMATCH[2]}$LABEL"
INDEX="https://pypi.org/simple"
[[ -n "$LABEL" ]] && INDEX="https://download.pytorch.org/whl/${LABEL#+}"
TARGET=(--only-binary=:all: --python-version "$PYTHON_VERSION" -d wheels)

pip wheel --no-deps -w wheels .
pip download --no-deps "${TARGET[@]}" --index-url "$INDEX" --platform manylinux_2_28_x86_64 \
    --platform linux_x86_64 "torchvision==$TORCHVISION_VERSION"
# benchlib's dependencies and transformers' (on any Python from 3.10), less what torch brings
pip download --no-deps "${TARGET[@]}" --platform manylinux_2_17_x86_64 \
    pydantic pydantic-core annotated-types typing-inspection \
    pandas numpy python-dateutil pytz six tzdata \
    psutil nvidia-ml-py pyyaml platformdirs \
    typer click shellingham annotated-doc rich markdown-it-py mdurl pygments \
    transformers huggingface-hub hf-xet tokenizers safetensors regex tqdm packaging \
    httpx2 httpcore2 h11 anyio idna exceptiongroup truststore tomli pillow
echo "wheels/ is ready: copy it to the GPU machine, next to install_offline.sh"
