"""``accelplug.fabric.accelerators``: the accelerator classes ``Fabric(accelerator=...)`` accepts besides names."""

from __future__ import annotations

from ..accelerator import Accelerator
from ..accelerators import CPUAccelerator, CUDAAccelerator, MPSAccelerator

__all__ = ["Accelerator", "CPUAccelerator", "CUDAAccelerator", "MPSAccelerator"]
