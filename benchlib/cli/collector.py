"""`collector_paused`: Python's cyclic garbage collector off while a command traces a model.

Importing torch, sympy and transformers makes about half a million objects that live as long as
the process, and each full collection walks all of them again: 1.4 s of a cold `benchlib
predict`'s 6 s of CPU, to free a dozen megabytes of cycles. Reference counting still frees what
is in no cycle; the collector is back on, as it was, when the command ends.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def collector_paused() -> Iterator[None]:
    """No cyclic garbage collection inside; usable as a decorator of a command."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        # What the command made goes to the oldest generation, unscanned: else the first collection
        # after `enable` walks all of it at once (0.4 s), just before a command's process exits.
        gc.freeze()
        gc.unfreeze()
        if was_enabled:
            gc.enable()
