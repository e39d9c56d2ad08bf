"""``lightning.pytorch.profilers``'s path (imports only)."""

from __future__ import annotations

from ..._import_paths import lazy_submodules
from ...profilers import AdvancedProfiler, PassThroughProfiler, Profiler, PyTorchProfiler, SimpleProfiler

__all__ = [
    "AdvancedProfiler",
    "PassThroughProfiler",
    "Profiler",
    "PyTorchProfiler",
    "SimpleProfiler",
    "XLAProfiler",
]

__getattr__ = lazy_submodules(
    __name__, ("advanced", "base", "profiler", "pytorch", "simple", "xla"), {"XLAProfiler": "xla"}
)
