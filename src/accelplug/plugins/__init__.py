"""``accelplug.plugins``: what Lightning's ``plugins=`` argument takes, at Lightning's import paths.

``accelplug.plugins.environments`` holds the cluster environments (Lightning's
``lightning.pytorch.plugins.environments``); ``accelplug.plugins.precision`` the precision plugins and
``accelplug.plugins.layer_sync`` the layer-sync plugins (both also named here, as in Lightning).
"""

from .layer_sync import LayerSync, TorchSyncBatchNorm
from .precision import (
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
    "LayerSync",
    "MixedPrecision",
    "Precision",
    "TorchSyncBatchNorm",
    "TransformerEnginePrecision",
]
