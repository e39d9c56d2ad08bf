"""``lightning.fabric.plugins.io.torch_io``'s path (imports only)."""

from __future__ import annotations

from ....checkpoint.io import TorchCheckpointIO

__all__ = ["TorchCheckpointIO"]
