"""``lightning.fabric.accelerators``'s path: accelplug's accelerators, the same objects; ``XLAAccelerator`` is the XLA
plugin's, or a stand-in naming it."""

from __future__ import annotations

from ..._import_paths import lazy_submodules
from ...accelerator import Accelerator
from ...accelerators import CPUAccelerator, CUDAAccelerator, MPSAccelerator
from ...accelerators.cuda import find_usable_cuda_devices

__all__ = [
    "ACCELERATOR_REGISTRY",
    "Accelerator",
    "CPUAccelerator",
    "CUDAAccelerator",
    "MPSAccelerator",
    "XLAAccelerator",
    "find_usable_cuda_devices",
]

__getattr__ = lazy_submodules(
    __name__,
    ("accelerator", "cpu", "cuda", "mps", "registry", "xla"),
    {"XLAAccelerator": "xla", "ACCELERATOR_REGISTRY": "accelplug.registry_views"},
)
