"""``accelplug.cli.main`` run in the test process, seen as a child process would be seen.

The console script and ``python -m accelplug`` call :func:`accelplug.cli.main`; :func:`run_in_process`
calls it too, inside typer's ``CliRunner`` isolation (stdin, stdout, stderr and the prompts of typer's
click swapped for in-memory streams), and answers a ``subprocess.CompletedProcess`` as ``subprocess.run``
would. A sweep of refusals then costs milliseconds a case instead of a torch import (about 1.5 s on the
2-core machine).

What a fresh process would start with is reset around every call: ``os.environ`` (set to ``env`` for the
call, put back whole afterwards, since a command may set variables for the workers it would start), the
plugin registry, the record of unknown ``ACCELPLUG_*`` variables already reported, the ``--debug`` switch
of the last call and the temporary folder Python chose. A Python warning reaches the captured stderr as it
would a child's stderr (where a stray one would break "one line on stderr"); the kinds a fresh interpreter
does not print (``DeprecationWarning`` and the like) are handed on to the test run's own warnings instead.

An exception other than ``SystemExit`` propagates: a crash fails the test with its own traceback rather
than hiding behind a return code of 1.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import warnings
from collections.abc import Mapping, Sequence

#: Categories a Python started without ``-W`` does not print (``python -c 'import warnings; print(warnings.filters)'``).
_SILENT_IN_A_FRESH_PROCESS = (DeprecationWarning, PendingDeprecationWarning, ImportWarning, ResourceWarning)


def _fresh_process_state() -> None:
    """Forget what an earlier call in this process left behind that a new process would not have."""
    from accelplug import envvars
    from accelplug.cli.app import state
    from accelplug.registry import reset_registry

    reset_registry()
    envvars._REPORTED.clear()
    state.debug = False
    tempfile.tempdir = None  # read TMPDIR again


def run_in_process(
    args: Sequence[str], *, env: Mapping[str, str], input: str | None = None
) -> subprocess.CompletedProcess[str]:
    """``accelplug ARGS`` with exactly the environment ``env`` and ``input`` on stdin."""
    from typer.testing import CliRunner

    from accelplug.cli import main

    saved = dict(os.environ)
    os.environ.clear()
    os.environ.update(env)
    _fresh_process_state()
    code = 0
    try:
        with warnings.catch_warnings(record=True) as caught, CliRunner().isolation(input=input) as (stdout, stderr, _):
            warnings.simplefilter("always")
            try:
                main(list(args))
            except SystemExit as exit_:
                code = exit_.code if isinstance(exit_.code, int) else (0 if exit_.code is None else 1)
            for warning in caught:
                if not issubclass(warning.category, _SILENT_IN_A_FRESH_PROCESS):
                    sys.stderr.write(
                        warnings.formatwarning(warning.message, warning.category, warning.filename, warning.lineno)
                    )
            sys.stdout.flush()
            sys.stderr.flush()
            out, err = stdout.getvalue().decode(), stderr.getvalue().decode()
    finally:
        os.environ.clear()
        os.environ.update(saved)
        _fresh_process_state()
    for warning in caught:
        if issubclass(warning.category, _SILENT_IN_A_FRESH_PROCESS):
            warnings.warn_explicit(warning.message, warning.category, warning.filename, warning.lineno)
    return subprocess.CompletedProcess(["accelplug", *args], code, out, err)
