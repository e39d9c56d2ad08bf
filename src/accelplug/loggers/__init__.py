"""Where metrics go: the logger protocol (:mod:`.base`) and one module per built-in logger.

Lightning's ``lightning.pytorch.loggers`` names, so ``from accelplug.loggers import CSVLogger`` reads as
it does there. Any object with ``log_metrics(metrics, step)`` is a logger (a Lightning logger included).
"""

from .base import MetricsLogger, is_logger, next_version_dir
from .csv_logs import CSVLogger
from .tensorboard import TensorBoardLogger

__all__ = ["CSVLogger", "MetricsLogger", "TensorBoardLogger", "is_logger", "next_version_dir"]
