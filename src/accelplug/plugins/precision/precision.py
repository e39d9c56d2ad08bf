"""``lightning.pytorch.plugins.precision.precision``'s path: the ``Precision`` base.

They live in :mod:`accelplug.precision.lightning.base`.
"""

from __future__ import annotations

from ...precision.lightning.base import (
    CONTEXT_METHODS,
    STEP_METHODS,
    Precision,
    PrecisionLoop,
)

__all__ = [
    "CONTEXT_METHODS",
    "STEP_METHODS",
    "Precision",
    "PrecisionLoop",
]
