"""``accelplug.plugins``: what Lightning's ``plugins=`` argument takes, at Lightning's import paths.

``accelplug.plugins.environments`` holds the cluster environments (Lightning's
``lightning.pytorch.plugins.environments``); ``accelplug.plugins.precision`` the precision plugins,
``accelplug.plugins.layer_sync`` the layer-sync plugins and ``accelplug.plugins.io`` the checkpoint writers
(Lightning's ``lightning.pytorch.plugins.io``: ``Trainer(plugins=[AsyncCheckpointIO()])``), all also named here,
as in Lightning.
"""

from __future__ import annotations

from .._import_paths import lazy_submodules
from ..checkpoint import AsyncCheckpointIO, CheckpointIO, TorchCheckpointIO
from ..precision.lightning import (
    BitsandbytesPrecision,
    DoublePrecision,
    FSDPPrecision,
    HalfPrecision,
    MixedPrecision,
    Precision,
    TransformerEnginePrecision,
)
from ..strategies.layer_sync import LayerSync, TorchSyncBatchNorm

__all__ = [
    "AsyncCheckpointIO",
    "BitsandbytesPrecision",
    "CheckpointIO",
    "DoublePrecision",
    "FSDPPrecision",
    "HalfPrecision",
    "LayerSync",
    "MixedPrecision",
    "Precision",
    "TorchCheckpointIO",
    "TorchSyncBatchNorm",
    "TransformerEnginePrecision",
]

__getattr__ = lazy_submodules(__name__, ())  # its other submodules, when first read (as after `import lightning`)
