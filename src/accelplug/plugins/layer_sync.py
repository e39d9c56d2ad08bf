"""Lightning's layer-sync plugins at their ``plugins`` path; they live in :mod:`accelplug.strategies.layer_sync`."""

from __future__ import annotations

from ..strategies.layer_sync import (
    LayerSync,
    TorchSyncBatchNorm,
)

__all__ = [
    "LayerSync",
    "TorchSyncBatchNorm",
]
