"""``lightning.fabric.plugins.io.checkpoint_io``'s path (imports only)."""

from __future__ import annotations

from ....checkpoint.io import CheckpointIO

__all__ = ["CheckpointIO"]
