"""``lightning.pytorch.loggers``'s path: every name of ``accelplug.loggers``, the same objects.

The tracker loggers' modules load when their name is first read; their packages (wandb, mlflow, comet_ml)
only when a logger is built.
"""

from __future__ import annotations

from ...loggers import *  # noqa: F403 - the mirror follows whatever accelplug.loggers exports
from ...loggers import __all__ as __all__
