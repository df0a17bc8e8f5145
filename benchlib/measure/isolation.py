"""Run a function in a fresh child process, so that a crash there can't end the caller.

A workload that segfaults, is killed by the out-of-memory killer or calls ``os._exit`` takes only
its own process down; the parent learns the exit code or signal and the last lines of its
output, and goes on.

CUDA can't be used in a process forked from one that already initialised it, so children never
fork from the caller. On Linux they fork from a ``forkserver``: a fresh interpreter that imports
torch once but never touches a device, so each child starts in milliseconds instead of paying
seconds of imports. Elsewhere (macOS, Windows, where forking a process with system frameworks
loaded is unsafe) each child is a ``spawn``ed interpreter.

The child's stdout and stderr go to a temporary file that the parent reads afterwards; the
function's result comes back as text through a pipe. If the parent dies (SIGKILL, a Colab
disconnect), the child notices and exits instead of running on unobserved.

The forkserver and the children ignore Ctrl-C (SIGINT), which a terminal sends to every process
of the command: the parent alone handles it, stops its child and prints its message. An
interrupted forkserver printed the traceback of its imports after that message.
"""

from __future__ import annotations

import faulthandler
import multiprocessing
import os
import signal
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from multiprocessing.connection import Connection, wait
from pathlib import Path
from typing import Any

from benchlib.core.quiet import quiet_environment
from benchlib.results.schema import Crash

TAIL_LINES = 20
# What the parent reads back of a child's output: its end, where a crash leaves its last words.
OUTPUT_MAX_BYTES = 1 << 20


START_METHOD_ENV = "BENCHLIB_START_METHOD"


def default_start_method() -> str:
    """forkserver on Linux, spawn elsewhere; ``$BENCHLIB_START_METHOD=spawn`` forces a fresh interpreter per child."""
    chosen = os.environ.get(START_METHOD_ENV, "").strip()
    if chosen in ("forkserver", "spawn"):
        return chosen
    return "forkserver" if sys.platform.startswith("linux") else "spawn"


@dataclass(frozen=True)
class Isolated:
    """What came back from a child: its result (None if it died first) and how it ended."""

    result: str | None
    exit_code: int | None
    wall_s: float
    output: str
    # The child's process id: its GPU use belongs to the run, not to another process.
    pid: int | None = None

    def crash(self) -> Crash | None:
        """The crash, when the child died without returning a result."""
        if self.result is not None:
            return None
        sig = None
        if self.exit_code is not None and self.exit_code < 0:
            try:
                sig = signal.Signals(-self.exit_code).name
            except ValueError:
                sig = f"signal {-self.exit_code}"
        return Crash(exit_code=self.exit_code, signal=sig, stderr_tail=tail(self.output))

    def describe_crash(self) -> str:
        """One line for a record's message: how the process ended and its last words."""
        crash = self.crash()
        if crash is None:
            return ""
        if crash.signal:
            what = f"its process was killed by {crash.signal}"
            if crash.signal == "SIGKILL":
                what += " (the kernel's out-of-memory killer, or the platform, stops processes this way)"
        elif crash.exit_code:
            what = f"its process exited with code {crash.exit_code} before reporting a result"
        else:
            what = "its process ended without reporting a result"
        return what + _last_words(crash.stderr_tail)


def tail(text: str, lines: int = TAIL_LINES) -> list[str]:
    return text.splitlines()[-lines:]


def _last_words(lines: list[str]) -> str:
    """Where a crashed child was: faulthandler's innermost frame, else its last line of output."""
    for i, line in enumerate(lines[:-1]):
        if line.rstrip().endswith("(most recent call first):"):
            return f"; it crashed in {lines[i + 1].strip()}"
    last = next((line.strip() for line in reversed(lines) if line.strip()), None)
    return f"; last output: {last}" if last else ""


def _read_end(path: str) -> str:
    with open(path, "rb") as fh:
        size = fh.seek(0, os.SEEK_END)
        fh.seek(max(size - OUTPUT_MAX_BYTES, 0))
        data = fh.read()
    cut = f"[first {size - len(data)} bytes of output left out]\n" if size > len(data) else ""
    return cut + data.decode("utf-8", errors="replace")


def _exit_with_parent() -> None:
    """Exit when the parent process dies: a killed run must not leave a workload running."""
    parent = multiprocessing.parent_process()
    if parent is None:
        return

    def watch() -> None:
        wait([parent.sentinel])
        os._exit(1)

    threading.Thread(target=watch, name="benchlib-parent-watch", daemon=True).start()


def _child_main(conn: Connection, target: Callable[..., str], args: tuple[Any, ...], log_path: str) -> None:
    try:
        fd = os.open(log_path, os.O_WRONLY | os.O_APPEND)
    except FileNotFoundError:
        # The parent removed the log, interrupted while it started this child: nothing waits for it.
        os._exit(1)
    sys.stdout.flush()
    sys.stderr.flush()
    os.dup2(fd, 1)
    os.dup2(fd, 2)
    os.close(fd)
    # On a segfault, the Python stack goes to the log, so the parent can quote where it died.
    faulthandler.enable(all_threads=False)
    quiet_environment()  # before the workload imports its framework
    _exit_with_parent()
    result = target(*args)
    conn.send_bytes(result.encode("utf-8"))
    conn.close()


def _receive(conn: Connection, proc: Any) -> str | None:
    """The child's result, or None if it died before sending all of it."""
    ready = wait([conn, proc.sentinel])
    if conn in ready or conn.poll():
        try:
            return conn.recv_bytes().decode("utf-8")
        except (EOFError, OSError):
            return None
    return None


@contextmanager
def _started_ignoring_sigint() -> Iterator[None]:
    """Processes started in here ignore SIGINT from their first instruction on (an ignored signal stays
    ignored across exec, and Python keeps it so): a handler set once a child runs would leave its
    start-up, seconds of imports for the forkserver, open to the terminal's Ctrl-C. The caller ignores it
    meanwhile too: for the milliseconds a process takes to start, not while one is waited for."""
    if threading.current_thread() is not threading.main_thread() or signal.getsignal(signal.SIGINT) is None:
        yield  # signal.signal works in the main thread only, and can't restore a handler set outside Python
        return
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


@contextmanager
def _holding_sigint() -> Iterator[None]:
    """A Ctrl-C while a child starts is held until it has started, then raised, so the caller kills a
    whole child: cut between the forkserver's fork and the handing over of the child's data, the child
    dies printing multiprocessing's EOFError traceback. A second Ctrl-C raises at once, for a start
    still waiting on the forkserver's imports."""
    if threading.current_thread() is not threading.main_thread() or signal.getsignal(signal.SIGINT) in (
        None,
        signal.SIG_IGN,
    ):
        yield  # nothing to hold: not the main thread, or Ctrl-C isn't Python's to raise
        return
    held: list[int] = []

    def hold(signum: int, frame: Any) -> None:
        if held:
            raise KeyboardInterrupt
        held.append(signum)

    previous = signal.signal(signal.SIGINT, hold)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)
    if held:
        raise KeyboardInterrupt


def _start_forkserver() -> None:
    """Start the forkserver (and multiprocessing's resource tracker) if they aren't running; they keep
    SIGINT ignored, and so does every child forked from the forkserver."""
    import multiprocessing.forkserver

    with _started_ignoring_sigint():
        multiprocessing.forkserver.ensure_running()


def prestart(preload: Sequence[str]) -> None:
    """Start the forkserver now, so that its imports overlap with the caller's own start-up work."""
    if default_start_method() != "forkserver":
        return
    multiprocessing.get_context("forkserver").set_forkserver_preload(list(preload))
    _start_forkserver()


def run_isolated(
    target: Callable[..., str], *args: Any, start_method: str | None = None, preload: Sequence[str] = ()
) -> Isolated:
    """Call ``target(*args)`` in a child process and return what it returned, or how it died.

    ``target`` must be a module-level function (the child imports it by name) returning text.
    An exception in it prints its traceback to the child's output and counts as a crash.
    ``preload`` names modules the forkserver imports once for all children; they must not
    initialise a GPU at import (torch doesn't). The forkserver keeps the environment it started
    with, so pass what a child needs as arguments rather than through environment variables.
    """
    method = start_method or default_start_method()
    ctx = multiprocessing.get_context(method)
    if method == "forkserver" and preload:
        # Only takes effect before this process's forkserver starts; later calls reuse it.
        ctx.set_forkserver_preload(list(preload))
    fd, log_path = tempfile.mkstemp(prefix="benchlib-child-", suffix=".log")
    os.close(fd)
    receiver, sender = ctx.Pipe(duplex=False)
    # Not a daemon: a daemonic process may not start its own children (DataLoader workers).
    proc = ctx.Process(target=_child_main, args=(sender, target, args, log_path), name="benchlib-workload")
    started = time.perf_counter()
    try:
        if method == "forkserver":
            # Not proc.start() itself: it waits for the forkserver's imports, when Ctrl-C must still stop the caller.
            _start_forkserver()
            with _holding_sigint():
                proc.start()
        else:
            with _started_ignoring_sigint():
                proc.start()
        sender.close()
        result = _receive(receiver, proc)
        proc.join()
    except BaseException:
        # Ctrl-C or an error here: the child must not outlive the run.
        if proc.is_alive():
            proc.kill()
            proc.join()
        raise
    finally:
        receiver.close()
        output = _read_end(log_path)
        Path(log_path).unlink(missing_ok=True)
    return Isolated(
        result=result, exit_code=proc.exitcode, wall_s=time.perf_counter() - started, output=output, pid=proc.pid
    )
