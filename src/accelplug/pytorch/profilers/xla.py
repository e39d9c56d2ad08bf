"""``lightning.pytorch.profilers.xla``'s path (imports only)."""

from __future__ import annotations

from ...backends import XLAProfiler

__all__ = ["XLAProfiler"]
