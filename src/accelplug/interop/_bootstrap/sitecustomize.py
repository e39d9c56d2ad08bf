"""Start-up hook for the Python processes a ``python -m accelplug.interop`` run starts.

``python -m accelplug.interop`` puts this file's folder first on ``PYTHONPATH``, so every Python process started
below it imports this module while it starts (Python's ``site`` imports ``sitecustomize``), before any of the
program's code. A worker started with ``multiprocessing``'s spawn re-imports the script's modules first thing,
and those import Lightning: the redirect has to be on by then, and only a start-up hook runs that early.

It turns the redirect on when ``ACCELPLUG_LIGHTNING_REDIRECT`` says so, then runs the ``sitecustomize`` this
one hides (the next one on ``sys.path`` after this folder, if any), so a system's own start-up hook still runs.
A Python that has no accelplug (another virtual environment started as a subprocess) is left alone.
"""

from __future__ import annotations

import importlib.machinery
import importlib.util
import os
import sys

_HERE = os.path.dirname(os.path.abspath(__file__))


def _activate() -> None:
    if not os.environ.get("ACCELPLUG_LIGHTNING_REDIRECT", "").strip():
        return
    try:
        from accelplug.interop import activate_from_environment
    except ImportError:  # a Python without accelplug
        return
    activate_from_environment()


def _run_hidden_sitecustomize() -> None:
    # Only the entries after this folder: one before it would have been found first, and searching the whole
    # path again could find a hook that chains back here.
    folders = [os.path.abspath(entry or os.curdir) for entry in sys.path]
    later = sys.path[folders.index(_HERE) + 1 :] if _HERE in folders else []
    spec = importlib.machinery.PathFinder.find_spec("sitecustomize", later)
    if spec is None or spec.loader is None:
        return
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)


_activate()
_run_hidden_sitecustomize()
