"""``lightning.pytorch.plugins.precision``'s path (imports only); ``*PrecisionPlugin``: Lightning 1.x's names."""

from __future__ import annotations

from ...._import_paths import lazy_submodules
from ....precision.lightning import (
    BitsandbytesPrecision,
    DeepSpeedPrecision,
    DoublePrecision,
    FSDPPrecision,
    HalfPrecision,
    MixedPrecision,
    Precision,
    TransformerEnginePrecision,
)
from ....precision.lightning.deprecated import (
    BitsandbytesPrecisionPlugin,
    DeepSpeedPrecisionPlugin,
    DoublePrecisionPlugin,
    FSDPMixedPrecisionPlugin,
    FSDPPrecisionPlugin,
    HalfPrecisionPlugin,
    MixedPrecisionPlugin,
    PrecisionPlugin,
    TransformerEnginePrecisionPlugin,
)

__all__ = [
    "BitsandbytesPrecision",
    "BitsandbytesPrecisionPlugin",
    "DeepSpeedPrecision",
    "DeepSpeedPrecisionPlugin",
    "DoublePrecision",
    "DoublePrecisionPlugin",
    "FSDPMixedPrecisionPlugin",
    "FSDPPrecision",
    "FSDPPrecisionPlugin",
    "HalfPrecision",
    "HalfPrecisionPlugin",
    "MixedPrecision",
    "MixedPrecisionPlugin",
    "Precision",
    "PrecisionPlugin",
    "TransformerEnginePrecision",
    "TransformerEnginePrecisionPlugin",
    "XLAPrecision",
    "XLAPrecisionPlugin",
]

__getattr__ = lazy_submodules(
    __name__,
    (
        "amp",
        "bitsandbytes",
        "deepspeed",
        "double",
        "fsdp",
        "half",
        "precision",
        "precision_plugin",
        "transformer_engine",
        "xla",
    ),
    {"XLAPrecision": "accelplug.backends", "XLAPrecisionPlugin": "accelplug.backends"},
)
