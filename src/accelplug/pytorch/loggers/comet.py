"""``lightning.pytorch.loggers.comet``'s path: ``accelplug.loggers.comet``, the same objects."""

from __future__ import annotations

from ...loggers.comet import *  # noqa: F403 - the mirror follows whatever the module exports
from ...loggers.comet import __all__ as __all__
