"""The path of ``BitsandbytesPrecision`` and ``TransformerEnginePrecision`` beside the other precision classes.

They live in :mod:`accelplug.precision.lightning.quantized`.
"""

from __future__ import annotations

from ...precision.lightning.quantized import (
    BitsandbytesPrecision,
    TransformerEnginePrecision,
)

__all__ = [
    "BitsandbytesPrecision",
    "TransformerEnginePrecision",
]
