"""``accelplug.fabric.loggers`` (Lightning's ``lightning.fabric.loggers``): where ``fabric.log`` sends metrics.

Imports only: the loggers live in :mod:`accelplug.loggers`, one implementation for the Trainer and Fabric.
``CSVLogger`` and ``TensorBoardLogger`` here are Lightning Fabric's (``root_dir`` is the folder given, no
``hparams.yaml``), also at Lightning's module paths (``.csv_logs``, ``.logger``, ``.tensorboard``); the Trainer's
classes of those names extend them. Any object with ``log_metrics(metrics, step)`` is a logger too:
``Fabric(loggers=...)`` asks nothing else of it.
"""

from __future__ import annotations

from ..._import_paths import lazy_submodules
from .csv_logs import CSVLogger
from .logger import Logger
from .tensorboard import TensorBoardLogger

__all__ = ["CSVLogger", "Logger", "TensorBoardLogger"]

__getattr__ = lazy_submodules(__name__, ())  # its other submodules, when first read (as after `import lightning`)
