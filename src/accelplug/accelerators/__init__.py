"""The accelerators that ship with accelplug, registered through ``accelplug.builtin_plugin`` like a plugin's."""

from ..accelerator import Accelerator
from .cpu import CPUAccelerator
from .cuda import CUDAAccelerator
from .mps import MPSAccelerator

__all__ = ["BUILTIN_ACCELERATORS", "CPUAccelerator", "CUDAAccelerator", "MPSAccelerator"]

#: The built-in accelerators (the ``auto`` order comes from their ``auto_priority``, not from here).
BUILTIN_ACCELERATORS: tuple[type[Accelerator], ...] = (CPUAccelerator, CUDAAccelerator, MPSAccelerator)
