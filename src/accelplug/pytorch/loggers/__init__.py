"""``lightning.pytorch.loggers``'s path: every name of ``accelplug.loggers``, the same objects.

The tracker loggers' modules load when their name is first read; their packages (wandb, mlflow, comet_ml)
only when a logger is built.
"""

from __future__ import annotations

from ..._import_paths import lazy_submodules
from ...loggers import *  # noqa: F403 - the mirror follows whatever accelplug.loggers exports
from ...loggers import __all__ as __all__

__getattr__ = lazy_submodules(__name__, ())  # its other submodules, when first read (as after `import lightning`)
