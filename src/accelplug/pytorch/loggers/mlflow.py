"""``lightning.pytorch.loggers.mlflow``'s path: ``accelplug.loggers.mlflow``, the same objects."""

from __future__ import annotations

from ...loggers.mlflow import *  # noqa: F403 - the mirror follows whatever the module exports
from ...loggers.mlflow import __all__ as __all__
