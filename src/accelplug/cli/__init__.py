"""The ``accelplug`` command line (also ``python -m accelplug``).

``main`` is the console-script entry point. It turns a ``MisconfigurationException`` raised anywhere
below into one message on stderr and exit code 2, the same code click uses for a bad option, so a
script can tell "you asked for something impossible" (2) from a crash (1). ``--debug`` keeps the
traceback for bug reports.
"""

from __future__ import annotations

import sys
import traceback

__all__ = ["main"]

#: Exit status for a configuration error, as documented in the public contract.
EXIT_MISCONFIGURATION = 2


def main(argv: list[str] | None = None) -> None:
    """Run the CLI; ``argv`` defaults to ``sys.argv[1:]``."""
    from ..errors import MisconfigurationException
    from .app import app, state

    try:
        app(args=argv, prog_name="accelplug")
    except MisconfigurationException as exc:
        if state.debug:
            traceback.print_exc()
        print(f"accelplug: error: {exc}", file=sys.stderr)
        sys.exit(EXIT_MISCONFIGURATION)
