"""Moved to :mod:`accelplug.loggers`; this path keeps working for one release, with a ``DeprecationWarning``."""

import warnings

from ..loggers import CSVLogger, TensorBoardLogger, is_logger, next_version_dir

__all__ = ["CSVLogger", "TensorBoardLogger", "is_logger", "next_version_dir"]

warnings.warn(
    "accelplug.trainer.loggers moved to accelplug.loggers (same names); import from there.",
    DeprecationWarning,
    stacklevel=2,
)
