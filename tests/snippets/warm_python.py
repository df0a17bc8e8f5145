"""A warm interpreter per framework family: the snippet tests pay for importing torch or TensorFlow once.

A server process imports the family's framework, then runs each snippet in a fork of itself: the
fork changes to the snippet's folder, takes the snippet's environment, writes to files of its own
and runs the snippet's text as ``__main__`` in a fresh namespace, as ``python -c`` would, then
exits with the snippet's exit code. So every snippet still starts from the same clean state; it
only skips the import. A snippet that needs what a warm process can't give (a stand-in module
that replaces one the server imported, an environment variable a framework reads while it is
imported) runs in a fresh interpreter instead (`snippet_runner.needs_fresh_interpreter`).
"""

from __future__ import annotations

import json
import os
import queue
import signal
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

# The server: one JSON request per line on stdin; on stdout, the snippet's pid once it started, then
# its exit code once it ended.
SERVER = r"""
import json, os, sys, traceback
for module in sys.argv[1:]:
    __import__(module)
for line in sys.stdin:
    request = json.loads(line)
    sys.stdout.flush(); sys.stderr.flush()
    pid = os.fork()
    if pid == 0:
        code = 0
        try:
            os.setsid()
            out = os.open(request["stdout"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
            err = os.open(request["stderr"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
            os.dup2(out, 1); os.dup2(err, 2)
            devnull = os.open(os.devnull, os.O_RDONLY); os.dup2(devnull, 0)
            os.chdir(request["cwd"])
            os.environ.clear(); os.environ.update(request["env"])
            extra = [p for p in request["env"].get("PYTHONPATH", "").split(os.pathsep) if p]
            sys.path[1:1] = extra  # after "", the working folder, as for python -c
            sys.argv = ["-c"]
            namespace = {"__name__": "__main__", "__builtins__": __builtins__}
            exec(compile(request["code"], "<string>", "exec"), namespace)
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
            if exc.code is not None and not isinstance(exc.code, int):
                print(exc.code, file=sys.stderr)
        except BaseException:
            traceback.print_exc()
            code = 1
        finally:
            sys.stdout.flush(); sys.stderr.flush()
            os._exit(code)
    print(json.dumps({"pid": pid}), flush=True)
    _, status = os.waitpid(pid, 0)
    print(json.dumps({"returncode": os.waitstatus_to_exitcode(status)}), flush=True)
"""


class WarmPython:
    """One warm server for a family of snippets (the modules it imports once); runs one snippet at a time."""

    def __init__(self, modules: tuple[str, ...], env: dict[str, str]) -> None:
        self.modules = modules
        self._lock = threading.Lock()
        self._server = subprocess.Popen(
            [sys.executable, "-c", SERVER, *modules],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env=env,
            text=True,
        )
        self._lines: queue.Queue[str] = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def run(self, code: str, cwd: Path, env: dict[str, str], timeout: float) -> subprocess.CompletedProcess[str]:
        """Run ``code`` as ``python -c`` would, in ``cwd`` with ``env``; TimeoutExpired after ``timeout`` s."""
        with self._lock, tempfile.TemporaryDirectory(prefix="warm-python-") as captured:
            out, err = Path(captured) / "stdout", Path(captured) / "stderr"
            request = {"code": code, "cwd": str(cwd), "env": env, "stdout": str(out), "stderr": str(err)}
            self._ask(json.dumps(request) + "\n")
            pid = json.loads(self._answer(60))["pid"]
            try:
                returncode = json.loads(self._answer(timeout))["returncode"]
            except subprocess.TimeoutExpired:
                os.killpg(pid, signal.SIGKILL)  # the snippet and whatever it started: its own session
                self._answer(60)
                raise subprocess.TimeoutExpired(["python", "-c", "<snippet>"], timeout) from None
            return subprocess.CompletedProcess(
                ["python", "-c", code], returncode, out.read_text(errors="replace"), err.read_text(errors="replace")
            )

    def _ask(self, line: str) -> None:
        assert self._server.stdin is not None
        self._server.stdin.write(line)
        self._server.stdin.flush()

    def _answer(self, timeout: float) -> str:
        """The server's next line; TimeoutExpired if none comes in ``timeout`` s, RuntimeError if it died."""
        try:
            line = self._lines.get(timeout=timeout)
        except queue.Empty:
            raise subprocess.TimeoutExpired(["warm python", *self.modules], timeout) from None
        if not line:
            raise RuntimeError(f"the warm interpreter for {', '.join(self.modules)} ended (exit {self._server.wait()})")
        return line

    def _read(self) -> None:
        """Hand each line the server writes to `_answer`; an empty one once it has ended."""
        assert self._server.stdout is not None
        for line in self._server.stdout:
            self._lines.put(line)
        self._lines.put("")

    def close(self) -> None:
        """End the server."""
        if self._server.poll() is None:
            self._server.kill()
        self._server.wait()
