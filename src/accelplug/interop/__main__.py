"""``python -m accelplug.interop``: run a script or a module with Lightning's names resolving to accelplug.

    python -m accelplug.interop train.py --max-epochs 3
    python -m accelplug.interop -m pytest tests/

The script runs as ``__main__`` exactly as ``python train.py`` would run it (``sys.argv``, ``sys.path[0]``), after
the redirect is on. The Python processes it starts get the redirect too: the launcher sets
``ACCELPLUG_LIGHTNING_REDIRECT=1`` and puts a start-up hook (``_bootstrap/sitecustomize.py``) first on
``PYTHONPATH``, because a spawned worker re-imports the script's modules before any of the script's code runs.
Exit status 2 with the message on stderr for a configuration error, as the ``accelplug`` command does.
"""

from __future__ import annotations

import os
import runpy
import sys
from collections.abc import MutableMapping
from pathlib import Path

from ..errors import MisconfigurationException
from ._redirect import ENV_VAR, redirect_target, use_accelplug_for_lightning

USAGE = (
    "usage: python -m accelplug.interop script.py [args...]\n"
    "       python -m accelplug.interop -m module [args...]\n"
    "Runs the script with `lightning`, `lightning.pytorch`, `pytorch_lightning`, `lightning.fabric` and\n"
    "`lightning_fabric` imported from accelplug, in this process and in the Python processes it starts."
)

#: The folder whose ``sitecustomize.py`` turns the redirect on in child processes.
BOOTSTRAP_DIR = Path(__file__).resolve().parent / "_bootstrap"


def child_environment(environ: MutableMapping[str, str]) -> None:
    """Set ``environ`` so that Python processes started with it turn the redirect on when they start."""
    environ[ENV_VAR] = "1"
    entries = [entry for entry in environ.get("PYTHONPATH", "").split(os.pathsep) if entry]
    if str(BOOTSTRAP_DIR) not in entries:
        environ["PYTHONPATH"] = os.pathsep.join([str(BOOTSTRAP_DIR), *entries])


def main(argv: list[str]) -> int:
    """Run ``argv`` (the launcher's arguments, without the program name); returns the exit status."""
    if not argv or argv[0] in ("-h", "--help"):
        print(USAGE, file=sys.stdout if argv else sys.stderr)
        return 0 if argv else 2
    if argv[0] == "-m" and len(argv) < 2:
        print("python -m accelplug.interop: -m needs a module name\n" + USAGE, file=sys.stderr)
        return 2
    try:
        use_accelplug_for_lightning()
    except MisconfigurationException as error:
        print(f"python -m accelplug.interop: {error}", file=sys.stderr)
        return 2
    child_environment(os.environ)
    if argv[0] == "-m":
        sys.argv = [argv[1], *argv[2:]]
        # a Lightning program (``lightning.pytorch.utilities.upgrade_checkpoint``) runs as accelplug's module:
        # its alias only stands for an imported module, it has no code of its own to run
        runpy.run_module(redirect_target(argv[1]) or argv[1], run_name="__main__", alter_sys=True)
        return 0
    script = Path(argv[0])
    if not script.is_file():
        print(f"python -m accelplug.interop: no such script: {argv[0]!r}\n" + USAGE, file=sys.stderr)
        return 2
    sys.argv = list(argv)
    sys.path[0] = str(script.resolve().parent)
    runpy.run_path(str(script), run_name="__main__")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
