"""Calling third-party plugin code so that it cannot hang, kill or confuse the program that asked.

Every call into an entry-point plugin (its import, its hooks, its accelerators' class-level queries)
goes through :func:`start`: the call runs in a daemon worker thread and the caller waits for it at
most ``ACCELPLUG_PLUGIN_TIMEOUT_S`` seconds. Whatever the plugin does -- raise, call ``sys.exit()``,
raise ``KeyboardInterrupt`` itself, or never return -- the caller gets a :class:`CallOutcome` that
says so in words, and goes on.

Why a thread and not a child process: the plugin's classes must live in the calling process anyway
(the Trainer runs them), so a child could not protect the import, would cost a fresh interpreter and
``import torch`` (about 1.5 s) for every probe, and could answer differently from the parent (an
environment changed at run time, a backend imported by hand). A thread costs tens of microseconds.
What a thread cannot do: stop a call that hangs (it is abandoned, still running, until the process
exits; a daemon thread never delays exit) or survive ``os._exit()`` or a crash in C code. Built-in
accelerators and classes a program registers itself are trusted and called directly.
"""

from __future__ import annotations

import threading
from collections.abc import Callable

# perf_counter bound once: code that patches time.perf_counter (a test timing its own callback with a mocked
# clock) must not feed the plugin calls' timings, nor have them use up its values.
from time import perf_counter as _clock
from typing import Generic, TypeVar

from ._record import record
from .envvars import env_float

__all__ = [
    "DEFAULT_TIMEOUT_S",
    "TIMEOUT_ENV",
    "CallOutcome",
    "PendingCall",
    "call",
    "describe_exception",
    "in_plugin_call",
    "plugin_timeout",
    "start",
]

TIMEOUT_ENV = "ACCELPLUG_PLUGIN_TIMEOUT_S"
#: Long enough for a plugin that imports a vendor SDK (several seconds is common), short enough that
#: a hung driver query is reported while the user is still watching.
DEFAULT_TIMEOUT_S = 10.0

T = TypeVar("T")

_worker = threading.local()


def in_plugin_call() -> bool:
    """Whether this thread is running plugin code started by :func:`start` (a worker thread)."""
    return bool(getattr(_worker, "active", False))


def plugin_timeout() -> float:
    """The bound on one plugin call, from ``ACCELPLUG_PLUGIN_TIMEOUT_S`` (validated when read)."""
    return env_float(TIMEOUT_ENV, DEFAULT_TIMEOUT_S, minimum=0.01, maximum=3600)


def describe_exception(exc: BaseException) -> str:
    """What an exception means for the caller, in words ("called sys.exit(3)", "raised KeyError: 'x'")."""
    if isinstance(exc, SystemExit):
        return f"called sys.exit({exc.code!r})"
    message = str(exc)
    return f"raised {type(exc).__name__}: {message}" if message else f"raised {type(exc).__name__}"


@record(frozen=True)
class CallOutcome(Generic[T]):
    """How a call into plugin code ended: its value, or what went wrong (``error``)."""

    value: T | None
    #: None on success; otherwise "raised ...", "called sys.exit(...)" or "did not return within ...".
    error: str | None
    #: The exception the call raised (None on success and on a timeout).
    exception: BaseException | None
    seconds: float
    timed_out: bool = False

    @property
    def ok(self) -> bool:
        return self.error is None


class PendingCall(Generic[T]):
    """A call running in its own daemon thread; :meth:`outcome` waits for it, up to a deadline."""

    def __init__(self, fn: Callable[[], T], name: str) -> None:
        self._fn = fn
        self._done = threading.Event()
        self._value: T | None = None
        self._exception: BaseException | None = None
        self._start = _clock()
        self._seconds = 0.0
        self._thread = threading.Thread(target=self._run, name=f"accelplug-plugin-call:{name}", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        _worker.active = True
        try:
            self._value = self._fn()
        except BaseException as exc:  # SystemExit and KeyboardInterrupt too: the plugin raised them, not the user
            self._exception = exc
        finally:
            self._seconds = _clock() - self._start
            self._done.set()

    def outcome(self, deadline: float) -> CallOutcome[T]:
        """The outcome, waiting until ``deadline`` (a ``time.perf_counter()`` value) at most."""
        if not self._done.wait(max(0.0, deadline - _clock())):
            waited = _clock() - self._start
            return CallOutcome(None, f"did not return within {waited:.1f} s", None, waited, timed_out=True)
        if self._exception is not None:
            return CallOutcome(None, describe_exception(self._exception), self._exception, self._seconds)
        return CallOutcome(self._value, None, None, self._seconds)


def start(fn: Callable[[], T], name: str) -> PendingCall[T]:
    """Start ``fn()`` in a daemon thread named after ``name``; wait for it with ``.outcome(deadline)``."""
    return PendingCall(fn, name)


def call(fn: Callable[[], T], name: str, timeout: float | None) -> CallOutcome[T]:
    """Run ``fn()`` and report how it ended.

    With ``timeout=None`` the call runs in this thread (trusted code: built-ins, a program's own
    classes): exceptions and ``SystemExit`` are reported, ``KeyboardInterrupt`` still stops the
    program. With a timeout it runs in a worker thread that is abandoned if it does not return.
    """
    if timeout is not None:
        return start(fn, name).outcome(_clock() + timeout)
    begin = _clock()
    try:
        value = fn()
    except (Exception, SystemExit) as exc:
        return CallOutcome(None, describe_exception(exc), exc, _clock() - begin)
    return CallOutcome(value, None, None, _clock() - begin)
