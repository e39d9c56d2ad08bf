"""``lightning.pytorch.callbacks.finetuning``'s path: the same objects as :mod:`accelplug.callbacks.finetuning`."""

from __future__ import annotations

from ...callbacks.finetuning import BackboneFinetuning, BaseFinetuning, multiplicative

__all__ = ["BackboneFinetuning", "BaseFinetuning", "multiplicative"]
