"""``lightning.pytorch.plugins.precision.half``'s path: ``HalfPrecision`` and ``DoublePrecision``.

They live in :mod:`accelplug.precision.lightning.half`.
"""

from __future__ import annotations

from ...precision.lightning.half import (
    DoublePrecision,
    HalfPrecision,
)

__all__ = [
    "DoublePrecision",
    "HalfPrecision",
]
