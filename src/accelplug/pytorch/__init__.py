"""``accelplug.pytorch``: Lightning's ``lightning.pytorch`` (and ``pytorch_lightning``) import paths.

A project that writes ``import lightning.pytorch as pl`` or ``from pytorch_lightning.callbacks import ...``
migrates by one line: ``accelplug.pytorch`` stands where ``lightning.pytorch`` stood. Nothing is defined
under this package: every module re-exports accelplug's own objects, so ``accelplug.pytorch.Trainer is
accelplug.Trainer`` and a class checked with ``isinstance`` is the same class on either path. Sub-packages
are imported when first used, as in Lightning (``pl.callbacks.EarlyStopping`` after ``import ... as pl``).
"""

from __future__ import annotations

import importlib
from typing import Any

from ..callbacks import Callback
from ..datamodule import LightningDataModule
from ..module import LightningModule
from ..seed import seed_everything
from ..trainer import Trainer

__all__ = ["Callback", "LightningDataModule", "LightningModule", "Trainer", "seed_everything"]

#: the sub-packages a script reaches as attributes (``pl.callbacks``) without importing them first
_SUBPACKAGES = frozenset(
    {
        "accelerators",
        "callbacks",
        "cli",
        "core",
        "demos",
        "loggers",
        "plugins",
        "profilers",
        "strategies",
        "trainer",
        "tuner",
        "utilities",
    }
)


def __getattr__(name: str) -> Any:
    if name in _SUBPACKAGES:
        return importlib.import_module(f"{__name__}.{name}")
    if name in ("cli_lightning_logo", "LIGHTNING_LOGO"):  # Lightning's examples call it first; it lives with the CLI
        return getattr(importlib.import_module(f"{__name__}.cli"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
