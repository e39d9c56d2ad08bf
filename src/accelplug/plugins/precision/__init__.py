"""``lightning.pytorch.plugins.precision``'s path: the precision classes ``plugins=`` takes.

They live in :mod:`accelplug.precision.lightning`.
"""

from __future__ import annotations

from ..._import_paths import lazy_submodules
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

__getattr__ = lazy_submodules(__name__, ())  # its other submodules, when first read (as after `import lightning`)
