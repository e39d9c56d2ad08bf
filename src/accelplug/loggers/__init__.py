"""Where metrics go: the ``Logger`` base (:mod:`.logger`), the protocol calls (:mod:`.protocol`), one module per logger.

Lightning's ``lightning.pytorch.loggers`` names, so ``from accelplug.loggers import CSVLogger`` reads as
it does there. Any object with ``log_metrics(metrics, step)`` is a logger (a Lightning logger included).
The tracker loggers import their package only when used (``pip install "accelplug[wandb]"``, ...), so
importing this package never pulls in wandb, mlflow or comet_ml; every name is imported from its module when
first used, so a Trainer loads only the logger it makes.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ._files import next_version_dir
    from .csv_logs import CSVLogger
    from .protocol import is_logger
    from .tensorboard import TensorBoardLogger

_LAZY = {
    "next_version_dir": "_files",
    "CSVLogger": "csv_logs",
    "is_logger": "protocol",
    "TensorBoardLogger": "tensorboard",
    "Logger": "logger",
    "DummyLogger": "logger",
    "WandbLogger": "wandb",
    "MLFlowLogger": "mlflow",
    "CometLogger": "comet",
    "LitLogger": "litlogger",
    "TrackerNotInstalledError": "_requirements",
}

__all__ = [
    "CSVLogger",
    "CometLogger",
    "DummyLogger",
    "LitLogger",
    "Logger",
    "MLFlowLogger",
    "TensorBoardLogger",
    "TrackerNotInstalledError",
    "WandbLogger",
    "is_logger",
    "next_version_dir",
]


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        return getattr(importlib.import_module(f"{__name__}.{_LAZY[name]}"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
