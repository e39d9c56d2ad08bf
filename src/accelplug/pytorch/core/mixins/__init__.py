"""``lightning.pytorch.core.mixins``'s path: the hyper-parameter mixin the LightningModule and DataModule share."""

from __future__ import annotations

from ....core.hparams import HyperparametersMixin

__all__ = ["HyperparametersMixin"]
