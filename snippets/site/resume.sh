# On Colab, mount Drive first so results outlive the session; elsewhere any folder works
OUT="${OUT:-/content/drive/MyDrive/benchlib-results}"
# Start no workload that would not finish within BUDGET seconds; the rest are recorded as skipped
benchlib run --suite "${SUITE:-standard}" --out "$OUT" --budget "${BUDGET:-1200}"
# After a disconnect or a budget cut, run only what is unfinished, into the same file
benchlib run --resume "$OUT"
