"""``lightning.pytorch.loggers.csv_logs``'s path: ``accelplug.loggers.csv_logs``, the same objects."""

from __future__ import annotations

from ...loggers.csv_logs import *  # noqa: F403 - the mirror follows whatever the module exports
from ...loggers.csv_logs import __all__ as __all__
