"""``lightning.fabric.utilities.spike``'s path (imports only)."""

from __future__ import annotations

from ...callbacks.spike import SpikeDetection, TrainingSpikeException

__all__ = ["SpikeDetection", "TrainingSpikeException"]
