"""``lightning.fabric.utilities.apply_func``'s path (imports only)."""

from __future__ import annotations

from ...data.batches import CONVERSION_DTYPES, convert_tensors_to_scalars, convert_to_tensors, move_data_to_device

__all__ = ["CONVERSION_DTYPES", "convert_tensors_to_scalars", "convert_to_tensors", "move_data_to_device"]
