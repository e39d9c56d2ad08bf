"""``lightning.pytorch.utilities.memory``'s path: telling an out-of-memory error from any other.

They live in :mod:`accelplug.hardware.memory`.
"""

from __future__ import annotations

from ..data.batches import recursive_detach
from ..hardware.memory import (
    garbage_collection_cuda,
    is_cuda_out_of_memory,
    is_cudnn_snafu,
    is_oom_error,
    is_out_of_cpu_memory,
)

__all__ = [
    "garbage_collection_cuda",
    "is_cuda_out_of_memory",
    "is_cudnn_snafu",
    "is_oom_error",
    "is_out_of_cpu_memory",
    "recursive_detach",
]
