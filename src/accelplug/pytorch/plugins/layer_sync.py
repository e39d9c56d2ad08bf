"""``lightning.pytorch.plugins.layer_sync``'s path: the layer-sync plugins of :mod:`accelplug.plugins.layer_sync`."""

from __future__ import annotations

from ...strategies.layer_sync import LayerSync, TorchSyncBatchNorm

__all__ = ["LayerSync", "TorchSyncBatchNorm"]
