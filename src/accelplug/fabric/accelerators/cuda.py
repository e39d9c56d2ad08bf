"""``lightning.fabric.accelerators.cuda``'s path (imports only)."""

from __future__ import annotations

from ...accelerators.cuda import CUDAAccelerator, find_usable_cuda_devices, is_cuda_available, num_cuda_devices

__all__ = ["CUDAAccelerator", "find_usable_cuda_devices", "is_cuda_available", "num_cuda_devices"]
