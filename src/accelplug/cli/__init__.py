"""The ``accelplug`` command line (also ``python -m accelplug``).

``main`` is the console-script entry point. Every way a command line can be wrong ends the same way:
one line on stderr starting ``accelplug: error:`` and exit code 2 — a ``MisconfigurationException``
raised anywhere below (a value accelplug cannot honour) as well as a usage error found by the
option parser (an unknown option, a missing value). Exit code 2 is what click and argparse use for a
bad option, so a script can tell "you asked for something impossible" (2) from a crash (1).
``--debug`` keeps the traceback of a configuration error for bug reports.

Before any command runs, ``ACCELPLUG_*`` variables that accelplug does not read (``ACCELPLUG_DEVICE``
for ``ACCELPLUG_DEVICES``) are reported as warnings with the closest known name, once per process.
"""

from __future__ import annotations

import importlib.metadata
import os
import sys
import traceback
from typing import NoReturn

__all__ = ["EXIT_MISCONFIGURATION", "main"]

#: ``from accelplug import cli; cli.LightningCLI(...)``: Lightning's CLI names, loaded (with jsonargparse) on use.
_LIGHTNING_CLI = frozenset({"LightningArgumentParser", "LightningCLI", "SaveConfigCallback"})


def __getattr__(name: str) -> object:
    if name in _LIGHTNING_CLI:
        from .. import lightning_cli

        return getattr(lightning_cli, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


#: Exit status for a configuration error, as documented in the public contract.
EXIT_MISCONFIGURATION = 2


def _one_line(text: str) -> str:
    """Messages may wrap (an unavailable accelerator's cause and remedy); the CLI prints them on one line."""
    return " ".join(text.split())


def _fail(message: str) -> NoReturn:
    print(f"accelplug: error: {_one_line(message)}", file=sys.stderr, flush=True)
    sys.exit(EXIT_MISCONFIGURATION)


def _usage_error_message(exc: Exception) -> str:
    """A parser error (typer's vendored click) as one sentence plus where to read the usage.

    Only typer's public ``TyperException`` is imported; the rest (``format_message``, the
    ``possibilities`` of an unknown option, the context naming the command) is read by attribute,
    because typer keeps its click classes private.
    """
    possibilities = getattr(exc, "possibilities", None)
    if possibilities is not None:  # an unknown option: "Did you mean", in accelplug's words
        message = str(getattr(exc, "message", exc)).rstrip(".")
        message += f". Did you mean {' or '.join(sorted(possibilities))}?" if possibilities else "."
    else:
        format_message = getattr(exc, "format_message", None)
        message = str(format_message() if callable(format_message) else exc)
        if not message.endswith((".", "?", "!")):
            message += "."
    ctx = getattr(exc, "ctx", None)
    command = getattr(ctx, "command_path", None) or "accelplug"
    return f"{message} See '{command} --help'."


#: Commands that diagnose this machine: they run again without torch's backend autoloading when a backend breaks
#: ``import torch``, and report it; every other command stops with the facts (:mod:`accelplug.hardware.torch_backends`).
_DIAGNOSING = ("list", "env")


def _survive_a_failing_torch_backend(args: list[str]) -> None:
    """Before any command imports torch: when an autoloaded device backend makes ``import torch`` fail, run
    ``list``/``env`` again with autoloading off (they report the backend), and stop any other command with exit 2."""
    from ..hardware import torch_backends

    if not any(True for _ in importlib.metadata.entry_points(group=torch_backends.GROUP)):
        return  # nothing for torch to autoload: nothing can fail here, and torch is not imported early
    failure = torch_backends.torch_import_failure()
    if failure is None:
        return
    if args[:1] and args[0] in _DIAGNOSING and torch_backends.FAILURE_ENV not in os.environ:
        env = {**os.environ, torch_backends.AUTOLOAD_ENV: "0", torch_backends.FAILURE_ENV: failure.to_json()}
        sys.stdout.flush()
        sys.stderr.flush()
        os.execve(sys.executable, [sys.executable, "-m", "accelplug", *args], env)
    _fail(failure.describe())


def main(argv: list[str] | None = None) -> None:
    """Run the CLI; ``argv`` defaults to ``sys.argv[1:]``."""
    import typer

    from ..envvars import unreported_unknown_variables
    from ..errors import MisconfigurationException
    from .app import app, state

    if "_ACCELPLUG_COMPLETE" not in os.environ:  # the shell is asking for completions: print nothing else
        for warning in unreported_unknown_variables():
            print(f"accelplug: warning: {warning}", file=sys.stderr, flush=True)
    _survive_a_failing_torch_backend(sys.argv[1:] if argv is None else argv)
    try:
        code = app(args=argv, prog_name="accelplug", standalone_mode=False)
    except MisconfigurationException as exc:
        if state.debug:
            traceback.print_exc()
        _fail(str(exc))
    except typer.TyperException as exc:
        if getattr(exc, "exit_code", 1) != EXIT_MISCONFIGURATION:
            raise  # not a usage error: let it show what it is
        if type(exc).__name__ == "NoArgsIsHelpError":
            # `accelplug` alone prints its help (on stderr, exit 2, as click does): not an error line.
            print(exc.format_message(), file=sys.stderr)
            sys.exit(EXIT_MISCONFIGURATION)
        _fail(_usage_error_message(exc))
    except typer.Abort:
        print("accelplug: aborted.", file=sys.stderr)
        sys.exit(1)
    sys.exit(code if isinstance(code, int) else 0)
