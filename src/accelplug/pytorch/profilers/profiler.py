"""``lightning.pytorch.profilers.profiler``'s path (imports only)."""

from __future__ import annotations

from ...profilers.base import Profiler, log

__all__ = ["Profiler", "log"]
