"""``lightning.pytorch.plugins.io.torch_plugin``'s path (imports only)."""

from __future__ import annotations

from ....checkpoint import TorchCheckpointIO

__all__ = ["TorchCheckpointIO"]
