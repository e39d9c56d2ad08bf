"""``lightning.pytorch.profilers.base``'s path (imports only)."""

from __future__ import annotations

from ...profilers.base import PassThroughProfiler

__all__ = ["PassThroughProfiler"]
