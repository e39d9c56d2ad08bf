"""``lightning.pytorch.accelerators``'s path: accelplug's ``Accelerator`` base and its built-in ones.

Third-party accelerators arrive through plugin distributions (``accelplug list``), not this module.
"""

from __future__ import annotations

from ..accelerator import Accelerator
from ..accelerators import CPUAccelerator, CUDAAccelerator, MPSAccelerator

__all__ = ["Accelerator", "CPUAccelerator", "CUDAAccelerator", "MPSAccelerator"]
