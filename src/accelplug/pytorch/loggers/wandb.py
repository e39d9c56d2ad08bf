"""``lightning.pytorch.loggers.wandb``'s path: ``accelplug.loggers.wandb``, the same objects."""

from __future__ import annotations

from ...loggers.wandb import *  # noqa: F403 - the mirror follows whatever the module exports
from ...loggers.wandb import _WANDB_AVAILABLE as _WANDB_AVAILABLE  # Lightning's flag, patched here by tests
from ...loggers.wandb import __all__ as __all__
