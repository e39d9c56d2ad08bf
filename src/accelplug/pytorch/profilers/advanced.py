"""``lightning.pytorch.profilers.advanced``'s path (imports only)."""

from __future__ import annotations

from ...profilers.advanced import AdvancedProfiler

__all__ = ["AdvancedProfiler"]
