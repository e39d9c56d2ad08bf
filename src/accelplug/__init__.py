"""accelplug: run PyTorch training on whatever accelerator this machine has.

Attributes are imported on first use, so ``import accelplug`` costs almost nothing on top of torch
and never loads plugins; the registry loads them on the first ``get_registry()``.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from . import _console, _import_paths
from ._version import __version__

_import_paths.install()  # old module paths (``accelplug.module``...) keep importing, with a DeprecationWarning
_console.install()  # Lightning's console: INFO lines shown when the program configured no logging, short warnings

_EXPORTS = {
    "Accelerator": "accelplug.accelerator",
    "AttributeDict": "accelplug.core.hparams",
    "BatchSizeFinder": "accelplug.callbacks",
    "CSVLogger": "accelplug.loggers",
    "Callback": "accelplug.callbacks",
    "BackboneFinetuning": "accelplug.callbacks",
    "BaseFinetuning": "accelplug.callbacks",
    "BasePredictionWriter": "accelplug.callbacks",
    "GradientAccumulationScheduler": "accelplug.callbacks",
    "ModelPruning": "accelplug.callbacks",
    "SpikeDetection": "accelplug.callbacks",
    "ThroughputMonitor": "accelplug.callbacks",
    "DeviceStatsMonitor": "accelplug.callbacks",
    "EarlyStopping": "accelplug.callbacks",
    "Fabric": "accelplug.fabric",
    "LearningRateMonitor": "accelplug.callbacks",
    "LightningDataModule": "accelplug.core.datamodule",
    "LightningModule": "accelplug.core.module",
    "ModelCheckpoint": "accelplug.callbacks",
    "Module": "accelplug.core.module",
    "DataModule": "accelplug.core.datamodule",
    "NumericPrecision": "accelplug.precision.base",
    "Strategy": "accelplug.strategies.base",
    "TensorBoardLogger": "accelplug.loggers",
    "Checkpoint": "accelplug.callbacks",
    "LambdaCallback": "accelplug.callbacks",
    "LearningRateFinder": "accelplug.callbacks",
    "ModelSummary": "accelplug.callbacks",
    "OnExceptionCheckpoint": "accelplug.callbacks",
    "ProgressBar": "accelplug.callbacks",
    "RichModelSummary": "accelplug.callbacks",
    "RichProgressBar": "accelplug.callbacks",
    "RichProgressBarTheme": "accelplug.callbacks",
    "TQDMProgressBar": "accelplug.callbacks",
    "Timer": "accelplug.callbacks",
    "StochasticWeightAveraging": "accelplug.callbacks",
    "WeightAveraging": "accelplug.callbacks",
    "EMAWeightAveraging": "accelplug.callbacks",
    "Logger": "accelplug.loggers",
    "DummyLogger": "accelplug.loggers",
    "WandbLogger": "accelplug.loggers",
    "MLFlowLogger": "accelplug.loggers",
    "CometLogger": "accelplug.loggers",
    "LitLogger": "accelplug.loggers",
    "seed_everything": "accelplug.seed",
    "AcceleratorRegistry": "accelplug.registry",
    "AcceleratorUnavailableError": "accelplug.errors",
    "MisconfigurationException": "accelplug.errors",
    "PluginFailure": "accelplug.registry",
    "Selection": "accelplug.selection",
    "Trainer": "accelplug.trainer",
    "get_registry": "accelplug.registry",
    "hookimpl": "accelplug.hookspecs",
    # lightning.pytorch's banner, for a script that imports accelplug where it imported lightning.pytorch
    "cli_lightning_logo": "accelplug.lightning_cli",
    "LIGHTNING_LOGO": "accelplug.lightning_cli",
    "select": "accelplug.selection",
}

#: Neutral names for the Lightning-compatible classes.
_ALIASES = {"Module": "LightningModule", "DataModule": "LightningDataModule"}
#: Old names, still answered (``accelplug.Precision`` warns and gives ``NumericPrecision``).
_RENAMED = {"Precision": "accelplug.precision.base"}

__all__ = [
    "LIGHTNING_LOGO",
    "Accelerator",
    "AcceleratorRegistry",
    "AcceleratorUnavailableError",
    "AttributeDict",
    "BackboneFinetuning",
    "BaseFinetuning",
    "BasePredictionWriter",
    "BatchSizeFinder",
    "CSVLogger",
    "Callback",
    "Checkpoint",
    "CometLogger",
    "DataModule",
    "DeviceStatsMonitor",
    "DummyLogger",
    "EMAWeightAveraging",
    "EarlyStopping",
    "Fabric",
    "GradientAccumulationScheduler",
    "LambdaCallback",
    "LearningRateFinder",
    "LearningRateMonitor",
    "LightningDataModule",
    "LightningModule",
    "LitLogger",
    "Logger",
    "MLFlowLogger",
    "MisconfigurationException",
    "ModelCheckpoint",
    "ModelPruning",
    "ModelSummary",
    "Module",
    "NumericPrecision",
    "OnExceptionCheckpoint",
    "PluginFailure",
    "ProgressBar",
    "RichModelSummary",
    "RichProgressBar",
    "RichProgressBarTheme",
    "Selection",
    "SpikeDetection",
    "StochasticWeightAveraging",
    "Strategy",
    "TQDMProgressBar",
    "TensorBoardLogger",
    "ThroughputMonitor",
    "Timer",
    "Trainer",
    "WandbLogger",
    "WeightAveraging",
    "__version__",
    "cli_lightning_logo",
    "get_registry",
    "hookimpl",
    "seed_everything",
    "select",
]

if TYPE_CHECKING:
    from .accelerator import Accelerator
    from .callbacks import (
        BackboneFinetuning,
        BaseFinetuning,
        BasePredictionWriter,
        BatchSizeFinder,
        Callback,
        Checkpoint,
        DeviceStatsMonitor,
        EarlyStopping,
        EMAWeightAveraging,
        GradientAccumulationScheduler,
        LambdaCallback,
        LearningRateFinder,
        LearningRateMonitor,
        ModelCheckpoint,
        ModelPruning,
        ModelSummary,
        OnExceptionCheckpoint,
        ProgressBar,
        RichModelSummary,
        RichProgressBar,
        RichProgressBarTheme,
        SpikeDetection,
        StochasticWeightAveraging,
        ThroughputMonitor,
        Timer,
        TQDMProgressBar,
        WeightAveraging,
    )
    from .core.datamodule import LightningDataModule
    from .core.datamodule import LightningDataModule as DataModule
    from .core.hparams import AttributeDict
    from .core.module import LightningModule
    from .core.module import LightningModule as Module
    from .errors import AcceleratorUnavailableError, MisconfigurationException
    from .fabric import Fabric
    from .hookspecs import hookimpl
    from .loggers import (
        CometLogger,
        CSVLogger,
        DummyLogger,
        LitLogger,
        Logger,
        MLFlowLogger,
        TensorBoardLogger,
        WandbLogger,
    )
    from .precision.base import NumericPrecision
    from .registry import AcceleratorRegistry, PluginFailure, get_registry
    from .seed import seed_everything
    from .selection import Selection, select
    from .strategies.base import Strategy
    from .trainer import Trainer


#: Sub-packages reachable as attributes without importing them first (``import accelplug as L; L.pytorch``),
#: as ``lightning``'s are; each loads on first use.
_SUBPACKAGES = frozenset({"callbacks", "cli", "fabric", "loggers", "plugins", "pytorch", "tuner", "utilities"})


def __getattr__(name: str) -> Any:
    if name in _SUBPACKAGES:
        return importlib.import_module(f"{__name__}.{name}")
    if name in _RENAMED:
        return getattr(importlib.import_module(_RENAMED[name]), name)
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'accelplug' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), _ALIASES.get(name, name))
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *_EXPORTS])
