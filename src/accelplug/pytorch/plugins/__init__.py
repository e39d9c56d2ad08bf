"""``lightning.pytorch.plugins``'s path (imports only)."""

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
from ...strategies.layer_sync import LayerSync, TorchSyncBatchNorm

__all__ = [
    "AsyncCheckpointIO",
    "BitsandbytesPrecision",
    "CheckpointIO",
    "ClusterEnvironment",
    "DeepSpeedPrecision",
    "DoublePrecision",
    "FSDPPrecision",
    "HalfPrecision",
    "LayerSync",
    "MixedPrecision",
    "Precision",
    "TorchCheckpointIO",
    "TorchSyncBatchNorm",
    "TransformerEnginePrecision",
    "XLACheckpointIO",
    "XLAPrecision",
]

__getattr__ = lazy_submodules(
    __name__,
    ("environments", "io", "layer_sync", "precision"),
    {"XLACheckpointIO": "accelplug.backends", "XLAPrecision": "accelplug.backends"},
)
