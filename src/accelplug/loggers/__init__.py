"""Where metrics go: the ``Logger`` base (:mod:`.logger`), the protocol calls (:mod:`.protocol`), one module per logger.

Lightning's ``lightning.pytorch.loggers`` names, so ``from accelplug.loggers import CSVLogger`` reads as
it does there. Any object with ``log_metrics(metrics, step)`` is a logger (a Lightning logger included).
The tracker loggers import their package only when used (``pip install "accelplug[wandb]"``, ...), so
importing this package never pulls in wandb, mlflow or comet_ml.
"""

from __future__ import annotations

import importlib
from typing import Any

from ._files import next_version_dir
from .csv_logs import CSVLogger
from .protocol import is_logger
from .tensorboard import TensorBoardLogger

_LAZY = {
    "Logger": "logger",
    "DummyLogger": "logger",
    "WandbLogger": "wandb",
    "MLFlowLogger": "mlflow",
    "CometLogger": "comet",
    "LitLogger": "litlogger",
    "TrackerNotInstalledError": "_requirements",
}

__all__ = ["CSVLogger", "TensorBoardLogger", "is_logger", "next_version_dir", *_LAZY]


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        return getattr(importlib.import_module(f"{__name__}.{_LAZY[name]}"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
