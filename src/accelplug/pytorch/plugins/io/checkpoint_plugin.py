"""``lightning.pytorch.plugins.io.checkpoint_plugin``'s path (imports only)."""

from __future__ import annotations

from ....checkpoint import CheckpointIO

__all__ = ["CheckpointIO"]
