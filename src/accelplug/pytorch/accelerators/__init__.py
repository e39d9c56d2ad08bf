"""``lightning.pytorch.accelerators``'s path: accelplug's accelerators (third-party ones arrive through plugin
distributions, ``accelplug list``); ``XLAAccelerator`` is the XLA plugin's, or a stand-in naming it."""

from __future__ import annotations

from ..._import_paths import lazy_submodules
from ...accelerator import Accelerator
from ...accelerators import CPUAccelerator, CUDAAccelerator, MPSAccelerator
from ...accelerators.cuda import find_usable_cuda_devices

__all__ = [
    "Accelerator",
    "AcceleratorRegistry",
    "CPUAccelerator",
    "CUDAAccelerator",
    "MPSAccelerator",
    "XLAAccelerator",
    "find_usable_cuda_devices",
]

__getattr__ = lazy_submodules(
    __name__,
    ("accelerator", "cpu", "cuda", "mps", "xla"),
    {"XLAAccelerator": "xla", "AcceleratorRegistry": "accelplug.registry_views"},
)
