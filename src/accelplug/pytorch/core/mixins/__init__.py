"""``lightning.pytorch.core.mixins``'s path: the hyper-parameter mixin the LightningModule and DataModule share."""

from __future__ import annotations

from ...._import_paths import lazy_submodules
from ....core.hparams import HyperparametersMixin

__all__ = ["HyperparametersMixin"]

__getattr__ = lazy_submodules(__name__, ())  # its other submodules, when first read (as after `import lightning`)
