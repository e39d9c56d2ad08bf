"""``lightning.pytorch.plugins``'s path (imports only); ``*PrecisionPlugin``: Lightning 1.x names (deprecated)."""

from __future__ import annotations

from ..._import_paths import lazy_submodules
from ...checkpoint import AsyncCheckpointIO, CheckpointIO, TorchCheckpointIO
from ...environments import ClusterEnvironment
from ...precision.lightning import (
    BitsandbytesPrecision,
    DeepSpeedPrecision,
    DoublePrecision,
    FSDPPrecision,
    HalfPrecision,
    MixedPrecision,
    Precision,
    TransformerEnginePrecision,
)
from ...precision.lightning.deprecated import (
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
from ...strategies.layer_sync import LayerSync, TorchSyncBatchNorm

__all__ = [
    "AsyncCheckpointIO",
    "BitsandbytesPrecision",
    "BitsandbytesPrecisionPlugin",
    "CheckpointIO",
    "ClusterEnvironment",
    "DeepSpeedPrecision",
    "DeepSpeedPrecisionPlugin",
    "DoublePrecision",
    "DoublePrecisionPlugin",
    "FSDPMixedPrecisionPlugin",
    "FSDPPrecision",
    "FSDPPrecisionPlugin",
    "HalfPrecision",
    "HalfPrecisionPlugin",
    "LayerSync",
    "MixedPrecision",
    "MixedPrecisionPlugin",
    "Precision",
    "PrecisionPlugin",
    "TorchCheckpointIO",
    "TorchSyncBatchNorm",
    "TransformerEnginePrecision",
    "TransformerEnginePrecisionPlugin",
    "XLACheckpointIO",
    "XLAPrecision",
    "XLAPrecisionPlugin",
]

__getattr__ = lazy_submodules(
    __name__,
    ("environments", "io", "layer_sync", "precision"),
    {
        "XLACheckpointIO": "accelplug.backends",
        "XLAPrecision": "accelplug.backends",
        "XLAPrecisionPlugin": "accelplug.backends",
    },
)
