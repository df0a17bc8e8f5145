"""Which committed run the notebook page shows as its sample output: the run a reader makes.

Apart from `benchlib.site.notebook`, which `benchlib.site.data` imports to measure the build machine
with the notebook: this module reads the site's data.
"""

from __future__ import annotations

from pathlib import Path

from benchlib.site.data import MEASURED, site_data
from benchlib.site.notebook import NOTEBOOK_SUITE
from benchlib.workloads import SIZES


def sample_run() -> Path | None:
    """The committed run the notebook page shows, or None where the results hold none.

    Measured on a GPU, as a reader's run in Colab or Kaggle is, in one of the suites (the notebook's
    own first), with the most workloads, the newest of those. The build machine's run is never one.
    """
    frame = site_data().frame
    runs = frame[
        (frame["source"] == MEASURED)
        & (frame["derived"] == "")
        & frame["suite"].isin(SIZES)
        & frame["device"].notna()
        & (frame["device"] != "cpu")
    ]
    if runs.empty:
        return None
    by_file = runs.groupby("file")
    ranked = by_file.agg(workloads=("workload", "nunique"), created=("created", "first"))
    ranked["own_suite"] = by_file["suite"].first() == NOTEBOOK_SUITE
    return Path(ranked.sort_values(["own_suite", "workloads", "created"]).index[-1])
