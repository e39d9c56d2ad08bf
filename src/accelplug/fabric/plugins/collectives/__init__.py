"""``lightning.fabric.plugins.collectives``'s path (imports only)."""

from __future__ import annotations

from ...._import_paths import lazy_submodules
from ....distributed.collective import Collective, SingleDeviceCollective, TorchCollective

__all__ = ["Collective", "SingleDeviceCollective", "TorchCollective"]

__getattr__ = lazy_submodules(__name__, ("collective", "single_device", "torch_collective"))
