"""``lightning.fabric.utilities.throughput``'s path (imports only)."""

from __future__ import annotations

from ...fabric.throughput import FabricThroughputMonitor as ThroughputMonitor
from ...measure.flops import measure_flops
from ...measure.throughput import Throughput, get_available_flops

__all__ = ["Throughput", "ThroughputMonitor", "get_available_flops", "measure_flops"]
