"""``lightning.pytorch.profilers.simple``'s path (imports only)."""

from __future__ import annotations

from ...profilers.simple import SimpleProfiler

__all__ = ["SimpleProfiler"]
