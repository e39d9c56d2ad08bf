"""The module named by the ``torch_accelerator`` entry point in group ``accelplug``."""

from __future__ import annotations

from accelplug import Accelerator, hookimpl

from .accelerator import TorchAcceleratorBridge


@hookimpl
def register_accelerators() -> list[type[Accelerator]]:
    return [TorchAcceleratorBridge]
