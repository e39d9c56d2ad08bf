"""``lightning.pytorch.utilities.grads``'s path: ``grad_norm`` (:mod:`accelplug.measure.grads`)."""

from __future__ import annotations

from ..measure.grads import (
    grad_norm,
)

__all__ = [
    "grad_norm",
]
