"""Stand-in for ``google.colab.drive``: mounting makes the mountpoint a plain local directory.

Each call is appended as a JSON line to the file named by ``FAKE_COLAB_LOG`` so tests can check
that a snippet mounted Drive and flushed it before finishing.
"""

from __future__ import annotations

import json
import os


def _record(event: str, **details: object) -> None:
    log = os.environ.get("FAKE_COLAB_LOG")
    if log:
        with open(log, "a", encoding="utf-8") as f:
            f.write(json.dumps({"event": event, **details}) + "\n")


def mount(mountpoint: str, force_remount: bool = False, timeout_ms: int = 120000, readonly: bool = False) -> None:
    # Real Colab asks for authorisation and attaches "My Drive" under the mountpoint.
    os.makedirs(os.path.join(mountpoint, "MyDrive"), exist_ok=True)
    _record("mount", mountpoint=mountpoint, force_remount=force_remount, readonly=readonly)
    print(f"Mounted at {mountpoint}")


def flush_and_unmount(timeout_ms: int = 24 * 60 * 60 * 1000) -> None:
    _record("flush_and_unmount", timeout_ms=timeout_ms)
    print("All changes made in this colab session should now be visible in Drive.")
