"""``lightning.fabric.plugins.io.xla``'s path (imports only)."""

from __future__ import annotations

from ....backends import XLACheckpointIO

__all__ = ["XLACheckpointIO"]
