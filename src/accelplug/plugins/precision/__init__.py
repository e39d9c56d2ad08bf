"""``lightning.pytorch.plugins.precision``'s path: the precision classes ``plugins=`` takes.

They live in :mod:`accelplug.precision.lightning`.
"""

from __future__ import annotations

from ...precision.lightning import (
    BitsandbytesPrecision,
    DoublePrecision,
    Float8Precision,
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
    "Float8Precision",
    "HalfPrecision",
    "MixedPrecision",
    "Precision",
    "TransformerEnginePrecision",
]
