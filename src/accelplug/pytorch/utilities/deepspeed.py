"""``lightning.pytorch.utilities.deepspeed``'s path (imports only)."""

from __future__ import annotations

from ...checkpoint.deepspeed import CPU_DEVICE, convert_zero_checkpoint_to_fp32_state_dict, ds_checkpoint_dir

__all__ = ["CPU_DEVICE", "convert_zero_checkpoint_to_fp32_state_dict", "ds_checkpoint_dir"]
