"""``lightning.pytorch.profilers.pytorch``'s path (imports only)."""

from __future__ import annotations

from ...profilers.pytorch import PyTorchProfiler, RegisterRecordFunction, ScheduleWrapper, warning_cache

__all__ = ["PyTorchProfiler", "RegisterRecordFunction", "ScheduleWrapper", "warning_cache"]
