"""``lightning.fabric.plugins.collectives.torch_collective``'s path (imports only)."""

from __future__ import annotations

from ....distributed.collective import TorchCollective

__all__ = ["TorchCollective"]
