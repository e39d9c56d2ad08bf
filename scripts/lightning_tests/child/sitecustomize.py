"""Start-up hook for the Python processes a test run on accelplug starts: the same placeholder import as the tests'.

The tool puts this folder on ``PYTHONPATH`` after accelplug's own start-up hook (which turns the redirect on and
then runs this one); a spawned worker re-imports the test module, which needs the same substitutions.
"""

from __future__ import annotations

import importlib.machinery
import importlib.util
import os
import sys

_HERE = os.path.dirname(os.path.abspath(__file__))

if os.environ.get("LT_FRAMEWORK") == "accelplug" and os.environ.get("LT_PLACEHOLDERS") in ("1", "harness"):
    sys.path.insert(0, os.path.dirname(_HERE))
    import ltshim

    ltshim.install()

_folders = [os.path.abspath(entry or os.curdir) for entry in sys.path]
_later = sys.path[_folders.index(_HERE) + 1 :] if _HERE in _folders else []
_spec = importlib.machinery.PathFinder.find_spec("sitecustomize", _later)
if _spec is not None and _spec.loader is not None:
    _spec.loader.exec_module(importlib.util.module_from_spec(_spec))
