"""``lightning.fabric.utilities.apply_func``'s import path: accelplug's one batch mover and its helpers."""

from __future__ import annotations

from ...data.batches import convert_tensors_to_scalars, convert_to_tensors, move_data_to_device

__all__ = ["convert_tensors_to_scalars", "convert_to_tensors", "move_data_to_device"]
