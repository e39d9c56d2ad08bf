"""``lightning.pytorch.accelerators.cpu``'s path (imports only)."""

from __future__ import annotations

from ...accelerators.cpu import CPUAccelerator, get_cpu_stats

__all__ = ["CPUAccelerator", "get_cpu_stats"]
