"""``lightning.pytorch.plugins.precision.amp``'s path: ``MixedPrecision``.

They live in :mod:`accelplug.precision.lightning.mixed`.
"""

from __future__ import annotations

from ...precision.lightning.mixed import (
    MixedPrecision,
)

__all__ = [
    "MixedPrecision",
]
