"""``lightning.fabric.plugins.precision``'s path (imports only)."""

from __future__ import annotations

from ...._import_paths import lazy_submodules
from ....backends import XLAPrecision
from ....precision.lightning import (
    BitsandbytesPrecision,
    DoublePrecision,
    FSDPPrecision,
    HalfPrecision,
    MixedPrecision,
    Precision,
    TransformerEnginePrecision,
)
from ....precision.lightning.deepspeed import FabricDeepSpeedPrecision as DeepSpeedPrecision

__all__ = [
    "BitsandbytesPrecision",
    "DeepSpeedPrecision",
    "DoublePrecision",
    "FSDPPrecision",
    "HalfPrecision",
    "MixedPrecision",
    "Precision",
    "TransformerEnginePrecision",
    "XLAPrecision",
]

__getattr__ = lazy_submodules(
    __name__, ("amp", "bitsandbytes", "deepspeed", "double", "fsdp", "half", "precision", "transformer_engine", "xla")
)
