"""Will it fit? Training memory, measured and predicted.

* ``benchlib max-batch`` (:mod:`benchlib.fit.search`): the largest batch that trains without
  running out of memory, found by real trials in child processes.
* ``benchlib fit`` (:mod:`benchlib.fit.predict`): the same question answered without the GPU,
  by tracing a training step on fake tensors.

Both train the models of :mod:`benchlib.fit.models` with the step of :mod:`benchlib.fit.step`;
the commands themselves are in :mod:`benchlib.cli.max_batch` and :mod:`benchlib.cli.fit`. Torch
is imported only inside functions.
"""
