"""``lightning.fabric.utilities.spike``'s path (imports only): Fabric's ``SpikeDetection``, called through
``fabric.call("on_train_batch_end", fabric=..., loss=..., batch=..., batch_idx=...)``."""

from __future__ import annotations

from ...callbacks.spike import FabricSpikeDetection as SpikeDetection
from ...callbacks.spike import TrainingSpikeException

__all__ = ["SpikeDetection", "TrainingSpikeException"]
