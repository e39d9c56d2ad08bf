"""``lightning.pytorch.plugins``'s path: the same plugin classes as :mod:`accelplug.plugins`."""

from __future__ import annotations

from ...plugins import (
    BitsandbytesPrecision,
    DoublePrecision,
    FSDPPrecision,
    HalfPrecision,
    LayerSync,
    MixedPrecision,
    Precision,
    TorchSyncBatchNorm,
    TransformerEnginePrecision,
)

__all__ = [
    "BitsandbytesPrecision",
    "DoublePrecision",
    "FSDPPrecision",
    "HalfPrecision",
    "LayerSync",
    "MixedPrecision",
    "Precision",
    "TorchSyncBatchNorm",
    "TransformerEnginePrecision",
]
