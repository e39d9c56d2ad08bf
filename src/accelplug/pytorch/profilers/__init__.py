"""``lightning.pytorch.profilers``'s path: accelplug's profilers, the same objects."""

from __future__ import annotations

from ...profilers import AdvancedProfiler, PassThroughProfiler, Profiler, PyTorchProfiler, SimpleProfiler

__all__ = ["AdvancedProfiler", "PassThroughProfiler", "Profiler", "PyTorchProfiler", "SimpleProfiler"]
