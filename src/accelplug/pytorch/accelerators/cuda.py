"""``lightning.pytorch.accelerators.cuda``'s path (imports only)."""

from __future__ import annotations

from ...accelerators.cuda import CUDAAccelerator, get_nvidia_gpu_stats, num_cuda_devices

__all__ = ["CUDAAccelerator", "get_nvidia_gpu_stats", "num_cuda_devices"]
