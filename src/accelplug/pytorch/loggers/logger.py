"""``lightning.pytorch.loggers.logger``'s path: ``accelplug.loggers.logger``, the same objects."""

from __future__ import annotations

from ...loggers.logger import *  # noqa: F403 - the mirror follows whatever the module exports
from ...loggers.logger import __all__ as __all__
