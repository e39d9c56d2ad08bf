"""``lightning.pytorch.loggers.tensorboard``'s path: ``accelplug.loggers.tensorboard``, the same objects."""

from __future__ import annotations

from ...loggers.tensorboard import *  # noqa: F403 - the mirror follows whatever the module exports
from ...loggers.tensorboard import __all__ as __all__
