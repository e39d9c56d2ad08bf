"""``lightning.pytorch.profilers.simple``'s path (imports only; ``math`` is the module the profiler sums with, where
code written for Lightning replaces ``math.fsum``)."""

from __future__ import annotations

import math as math

from ...profilers.simple import SimpleProfiler

__all__ = ["SimpleProfiler"]
