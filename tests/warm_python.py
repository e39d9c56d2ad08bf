"""Child Pythons that start with torch already imported: forked from one server process that imported it once.

Importing torch costs about 2 s of CPU per process (``python -c 'import torch'``), which is most of what a test
that asks a fresh ``python -c CODE`` or ``python -m accelplug ...`` something pays. Where the point of such a
test is a process of its own (what a plugin does at import, entry-point discovery through ``PYTHONPATH``,
``sys.exit`` or 20 MB on fd 1 from a plugin, a hang bounded by a timeout) and not the start-up itself,
:class:`WarmPython` gives it that process for a fraction of the cost: a server imports torch (and only torch,
and what torch imports), then forks one child per run. Each child is set up as ``python`` would set up a new
process, and accelplug, its registry, every plugin and the code under test are imported fresh in it:

- environment exactly ``env`` (``os.environ`` replaced, so ``putenv`` reaches C code and grandchildren),
  working folder ``cwd``, ``sys.argv`` and ``sys.path`` as ``python -c``/``-m``/``SCRIPT`` set them, with
  ``PYTHONPATH`` in front of the interpreter's own entries;
- stdin from ``input`` (or ``/dev/null``), stdout and stderr to files the caller reads afterwards (no pipe to
  fill: a child may print megabytes), file descriptors 0, 1 and 2 themselves redirected;
- the code runs as ``__main__`` (a script's ``__file__`` absolute, as ``python SCRIPT`` gives it) and the child
  ends the way Python ends: ``SystemExit`` and uncaught exceptions give the exit status and traceback
  ``python`` gives, non-daemon threads are joined, ``atexit`` runs;
- on request, stderr into stdout's file and a process group of its own (``stderr=STDOUT``,
  ``start_new_session=True``), killed whole on a timeout.

What it is not: a test of start-up (what ``import accelplug`` imports, how long a process takes to start) or of a
variable Python itself reads at start-up (``PYTHONWARNINGS``, ``-X`` options, ``PYTHONHASHSEED``): those tests
start real processes, or give the variable to the server (``server_env``) when every run wants it. The server must
stay free of threads (it forks), so it imports nothing that starts one; torch's import does not.

Once torch is imported the server calls :func:`gc.freeze` (Python's advice for a process that forks): the
garbage collector of a child then never walks the objects of torch, neither in its collections nor in the
final one at exit, which would otherwise touch (and so copy) every page they lie on: that walk was most of
what a child's exit cost. Only the objects of the server's own import are frozen; whatever a child creates is
collected and finalized as in any Python.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
import threading
from collections.abc import Mapping, Sequence
from concurrent.futures import Future
from pathlib import Path

#: The server, run as ``python -c SERVER``. It reads one JSON request a line and answers ``{"id", "pid"}``
#: when it forked and ``{"id", "returncode"}`` when that child ended (``-N`` for signal N, as subprocess does).
#: In the child, ``serve()`` returns the request and the module level runs it, so an uncaught exception or
#: ``SystemExit`` ends the child exactly as it ends ``python``. ``gc.freeze()``: see the module's docstring.
SERVER = r"""
import gc, importlib, json, os, select, sys
import torch  # noqa: F401  (the point of the server)
for preload in sys.argv[1:]:  # WarmPython's preload (none: the loop never runs)
    importlib.import_module(preload)
if os.path.isdir("/proc/self/task") and len(os.listdir("/proc/self/task")) > 1:
    sys.exit("warm_python: importing torch and the preloads started a thread: this process must not fork")
gc.freeze()  # torch's objects to the permanent generation: no child collects, copies or tears them down

def serve():
    requests = os.dup(0)
    answers = os.fdopen(os.dup(1), "w")
    null = os.open(os.devnull, os.O_RDWR)
    os.dup2(null, 0)
    os.dup2(null, 1)
    os.close(null)
    pids, pending = {}, b""
    while True:
        while pids:
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                break
            if pid == 0:
                break
            answers.write(json.dumps({"id": pids.pop(pid), "returncode": os.waitstatus_to_exitcode(status)}) + "\n")
            answers.flush()
        if b"\n" not in pending:
            ready, _, _ = select.select([requests], [], [], 0.02 if pids else None)
            if not ready:
                continue
            chunk = os.read(requests, 1 << 16)
            if not chunk:
                return None
            pending += chunk
            continue
        line, pending = pending.split(b"\n", 1)
        request = json.loads(line)
        sys.stdout.flush()
        sys.stderr.flush()
        pid = os.fork()
        if pid == 0:
            os.close(requests)
            answers.close()
            return request
        pids[pid] = request["id"]
        answers.write(json.dumps({"id": request["id"], "pid": pid}) + "\n")
        answers.flush()

def start(request):
    if request["new_session"]:
        os.setsid()
    for fd, path, flags in ((0, request["stdin"], os.O_RDONLY), (1, request["stdout"], os.O_WRONLY),
                            (2, request["stderr"], os.O_WRONLY)):
        if path is None:  # stderr into stdout's file, at the same offset (subprocess's STDOUT)
            os.dup2(1, fd)
            continue
        opened = os.open(path, flags)
        os.dup2(opened, fd)
        os.close(opened)
    os.chdir(request["cwd"])
    os.environ.clear()
    os.environ.update(request["env"])
    extra = [p for p in request["env"].get("PYTHONPATH", "").split(os.pathsep) if p]
    first, *rest = request["args"]
    main = type(sys)("__main__")
    main.__dict__["__builtins__"] = __builtins__
    if first == "-c":
        sys.argv = ["-c", *rest[1:]]
        head = ""
    elif first == "-m":
        sys.argv = ["-m", *rest[1:]]
        head = os.getcwd()
    else:
        sys.argv = [first, *rest]
        head = os.path.dirname(os.path.abspath(first))
    sys.path[:] = [head, *[os.path.abspath(p) for p in extra], *sys.path[1:]]
    import importlib
    importlib.invalidate_caches()
    return first, rest, main

request = serve()
if request is None:
    sys.exit(0)
del serve
first, rest, main = start(request)
del start, request
if first == "-c":
    sys.modules["__main__"] = main
    exec(compile(rest[0], "<string>", "exec"), main.__dict__)
elif first == "-m":
    import runpy
    runpy._run_module_as_main(rest[0], alter_argv=True)
elif os.path.isfile(first) and not first.endswith(".zip"):
    # as python SCRIPT runs it: __main__ a module of its own with __file__ (and the code's file name) absolute,
    # sys.argv[0] as given (runpy.run_path would make that absolute too)
    from importlib.machinery import SourceFileLoader
    path = os.path.abspath(first)
    main.__dict__.update(__file__=path, __cached__=None, __loader__=SourceFileLoader("__main__", path))
    sys.modules["__main__"] = main
    with open(path, "rb") as source:
        code = compile(source.read(), path, "exec")
    exec(code, main.__dict__)
else:  # a folder or zip file with a __main__.py
    import runpy
    runpy.run_path(first, run_name="__main__")
"""


def _server_env(extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """The server's environment: no ``PYTHONPATH`` (each child puts its own in front of ``sys.path``) and
    single-threaded OpenBLAS and OpenMP, so that importing torch (and numpy) starts no thread in a process
    that forks. A child's torch and numpy keep these thread counts whatever its own ``env`` says. ``extra``
    (:class:`WarmPython`'s ``server_env``) last."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env.update(OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1", MKL_NUM_THREADS="1")
    env.update(extra or {})
    return env


class WarmPython:
    """``run(args, env=..., cwd=..., timeout=..., input=...)``: ``python ARGS`` as a child of the warm server.

    Thread-safe: several runs may be under way at once (each in its own child). :meth:`close` ends the server;
    children still running are the caller's (their pids are known until they end).

    ``server_env``: variables for the server itself. What Python reads once at its own start-up is the server's
    in every child, whatever the child's ``env`` says: a run that needs ``PYTHONHASHSEED=0`` (the order of a
    set of strings, the same in every run) gives it here, and in the child's ``env`` for what reads it there.

    ``preload``: more of torch's own modules for the server to import after torch, for runs that import them
    anyway: ``torch._dynamo`` (about as costly as torch), which ``import lightning`` imports and torch itself
    imports when a first optimizer is built, so a run of a Lightning or accelplug fit has it either way, only
    sooner. Never a module of the code under test; the server refuses to start if a preload started a thread.
    """

    def __init__(self, *, server_env: Mapping[str, str] | None = None, preload: Sequence[str] = ()) -> None:
        self._folder = tempfile.mkdtemp(prefix="accelplug-warm-")
        self._server = subprocess.Popen(
            [sys.executable, "-c", SERVER, *preload],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            env=_server_env(server_env),
        )
        self._lock = threading.Lock()
        self._next = 0
        self._pids: dict[int, Future[int]] = {}
        self._ends: dict[int, Future[int]] = {}
        self._reader = threading.Thread(target=self._read_answers, daemon=True)
        self._reader.start()

    def _read_answers(self) -> None:
        assert self._server.stdout is not None
        for line in self._server.stdout:
            answer = json.loads(line)
            with self._lock:
                if "pid" in answer:
                    self._pids[answer["id"]].set_result(answer["pid"])
                else:
                    self._ends.pop(answer["id"]).set_result(answer["returncode"])
        with self._lock:  # the server ended: nothing more will be answered
            for future in [*self._pids.values(), *self._ends.values()]:
                if not future.done():
                    future.set_exception(RuntimeError("the warm Python server ended"))

    def run(
        self,
        args: Sequence[str],
        *,
        env: Mapping[str, str],
        cwd: str | Path,
        timeout: float,
        input: str | None = None,
        stderr_to_stdout: bool = False,
        new_session: bool = False,
    ) -> subprocess.CompletedProcess[str]:
        """Like ``subprocess.run([sys.executable, *args], capture_output=True, text=True, ...)``.

        ``stderr_to_stdout``: as ``stderr=subprocess.STDOUT`` (both in ``stdout``, in the order written; ``stderr``
        is None). ``new_session``: as ``start_new_session=True``, the child leads a process group of its own.
        On ``timeout`` the child (with ``new_session``, its whole process group: what it started too) is killed
        and :class:`subprocess.TimeoutExpired` raised with what it printed.
        """
        with self._lock:
            key = self._next
            self._next += 1
            pid_future: Future[int] = Future()
            end_future: Future[int] = Future()
            self._pids[key] = pid_future
            self._ends[key] = end_future
        base = Path(self._folder) / str(key)
        stdin, stdout, stderr = base.with_suffix(".in"), base.with_suffix(".out"), base.with_suffix(".err")
        stdin.write_text(input or "")
        stdout.touch()
        stderr.touch()
        request = {
            "id": key,
            "args": list(args),
            "env": dict(env),
            "cwd": str(cwd),
            "stdin": str(stdin),
            "stdout": str(stdout),
            "stderr": None if stderr_to_stdout else str(stderr),
            "new_session": new_session,
        }
        assert self._server.stdin is not None
        with self._lock:
            self._server.stdin.write(json.dumps(request) + "\n")
            self._server.stdin.flush()
        pid = pid_future.result(timeout=60)
        try:
            returncode = end_future.result(timeout=timeout)
        except TimeoutError:
            if new_session:
                os.killpg(pid, signal.SIGKILL)
            else:
                os.kill(pid, signal.SIGKILL)
            end_future.result(timeout=60)
            out, err = self._read(stdout, stderr)
            raise subprocess.TimeoutExpired(
                [sys.executable, *args], timeout, out, None if stderr_to_stdout else err
            ) from None
        out, err = self._read(stdout, stderr)
        return subprocess.CompletedProcess([sys.executable, *args], returncode, out, None if stderr_to_stdout else err)

    @staticmethod
    def _read(*paths: Path) -> tuple[str, str]:
        out, err = (p.read_bytes().decode(errors="replace") for p in paths)
        for p in paths:
            p.unlink()
        paths[0].with_suffix(".in").unlink(missing_ok=True)
        return out, err

    def close(self) -> None:
        if self._server.stdin is not None:
            self._server.stdin.close()
        self._server.wait(timeout=60)
        if self._server.stdout is not None:
            self._server.stdout.close()
        self._reader.join(timeout=10)
        for leftover in Path(self._folder).iterdir():
            leftover.unlink()
        os.rmdir(self._folder)
