"""Experiment loggers. Tracker loggers load their package only when used (``accelplug[wandb]``, ...)."""

from __future__ import annotations

import importlib
from typing import Any

_LAZY = {
    "Logger": "logger",
    "DummyLogger": "logger",
    "WandbLogger": "wandb",
    "MLFlowLogger": "mlflow",
    "CometLogger": "comet",
    "TrackerNotInstalledError": "_requirements",
}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        return getattr(importlib.import_module(f"{__name__}.{_LAZY[name]}"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
