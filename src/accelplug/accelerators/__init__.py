"""The accelerators that ship with accelplug (registered through ``accelplug.builtin_plugin``)."""

from .cpu import CPUAccelerator
from .cuda import CUDAAccelerator
from .mps import MPSAccelerator

__all__ = ["CPUAccelerator", "CUDAAccelerator", "MPSAccelerator"]
