"""``lightning.pytorch.accelerators.mps``'s path (imports only)."""

from __future__ import annotations

from ...accelerators.mps import MPSAccelerator
from ...accelerators.mps import mps_host_stats as get_device_stats

__all__ = ["MPSAccelerator", "get_device_stats"]
