"""``lightning.fabric.utilities.distributed``'s path (imports only)."""

from __future__ import annotations

from torch.distributed import ReduceOp

from ...data.samplers import DistributedSamplerWrapper
from ...distributed.shared_filesystem import is_shared_filesystem

__all__ = ["DistributedSamplerWrapper", "ReduceOp", "is_shared_filesystem"]
