"""``lightning.fabric.accelerators.mps``'s path (imports only)."""

from __future__ import annotations

from ...accelerators.mps import MPSAccelerator, _get_all_available_mps_gpus

__all__ = ["MPSAccelerator", "_get_all_available_mps_gpus"]
