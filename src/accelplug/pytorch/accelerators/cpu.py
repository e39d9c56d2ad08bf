"""``lightning.pytorch.accelerators.cpu``'s path (imports only)."""

from __future__ import annotations

from ...accelerators.cpu import (  # noqa: F401 - the stat names' constants, which Lightning's module holds too
    _CPU_PERCENT,
    _CPU_SWAP_PERCENT,
    _CPU_VM_PERCENT,
    CPUAccelerator,
    get_cpu_stats,
)

__all__ = ["CPUAccelerator", "get_cpu_stats"]
