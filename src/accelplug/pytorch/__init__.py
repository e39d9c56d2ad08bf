"""``accelplug.pytorch``: Lightning's ``lightning.pytorch`` (and ``pytorch_lightning``) import paths.

A project that writes ``import lightning.pytorch as pl`` or ``from pytorch_lightning.callbacks import ...``
migrates by one line: ``accelplug.pytorch`` stands where ``lightning.pytorch`` stood. Nothing is defined
under this package: every module re-exports accelplug's own objects, so ``accelplug.pytorch.Trainer is
accelplug.Trainer`` and a class checked with ``isinstance`` is the same class on either path. Sub-packages
are imported when first used, as in Lightning (``pl.callbacks.EarlyStopping`` after ``import ... as pl``).
"""

from __future__ import annotations

from .._import_paths import lazy_submodules
from ..callbacks import Callback
from ..checkpoint.migration import LIGHTNING_VERSION as __version__
from ..core.datamodule import LightningDataModule
from ..core.module import LightningModule
from ..seed import seed_everything
from ..trainer import Trainer

__all__ = ["Callback", "LightningDataModule", "LightningModule", "Trainer", "__version__", "seed_everything"]

# The sub-packages a script reaches as attributes (``pl.callbacks``) without importing them first, and
# ``cli_lightning_logo`` (and its ``LIGHTNING_LOGO``), which Lightning's examples call first and which lives
# with the CLI (jsonargparse).
__getattr__ = lazy_submodules(
    __name__,
    (
        "accelerators",
        "callbacks",
        "cli",
        "core",
        "demos",
        "loggers",
        "plugins",
        "profilers",
        "serve",
        "strategies",
        "trainer",
        "tuner",
        "utilities",
    ),
    {"cli_lightning_logo": "cli", "LIGHTNING_LOGO": "cli"},
)
