"""``lightning.fabric.utilities.cloud_io``'s path (imports only)."""

from __future__ import annotations

from ...checkpoint.filesystem import get_filesystem

__all__ = ["get_filesystem"]
