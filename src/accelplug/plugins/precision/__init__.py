"""``lightning.pytorch.plugins.precision``'s path: the precision classes ``plugins=`` takes.

They live in :mod:`accelplug.precision.lightning`.
"""

from __future__ import annotations

from ...precision.lightning import (
    BitsandbytesPrecision,
    DoublePrecision,
    FSDPPrecision,
    HalfPrecision,
    MixedPrecision,
    Precision,
    TransformerEnginePrecision,
)

__all__ = [
    "BitsandbytesPrecision",
    "DoublePrecision",
    "FSDPPrecision",
    "HalfPrecision",
    "MixedPrecision",
    "Precision",
    "TransformerEnginePrecision",
]
