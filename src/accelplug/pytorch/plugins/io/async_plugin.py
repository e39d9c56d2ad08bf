"""``lightning.pytorch.plugins.io.async_plugin``'s path (imports only)."""

from __future__ import annotations

from ....checkpoint import AsyncCheckpointIO

__all__ = ["AsyncCheckpointIO"]
