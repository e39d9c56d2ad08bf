"""``lightning.pytorch.core.mixins.hparams_mixin``'s path: accelplug's ``HyperparametersMixin``."""

from __future__ import annotations

from ....core.hparams import HyperparametersMixin

__all__ = ["HyperparametersMixin"]
