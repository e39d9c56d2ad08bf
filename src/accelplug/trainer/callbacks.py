"""Moved to :mod:`accelplug.callbacks`; this path keeps working for one release, with a ``DeprecationWarning``.

Callbacks sit below the Trainer now (they never import it), where the next ones go too.
"""

import warnings

from ..callbacks import Callback, DeviceStatsMonitor, EarlyStopping, LearningRateMonitor, ModelCheckpoint

__all__ = ["Callback", "DeviceStatsMonitor", "EarlyStopping", "LearningRateMonitor", "ModelCheckpoint"]

warnings.warn(
    "accelplug.trainer.callbacks moved to accelplug.callbacks (same names); import from there.",
    DeprecationWarning,
    stacklevel=2,
)
