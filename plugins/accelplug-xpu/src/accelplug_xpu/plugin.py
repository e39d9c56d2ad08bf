"""The module named by the ``xpu`` entry point in group ``accelplug``."""

from __future__ import annotations

from accelplug import Accelerator, hookimpl

from .accelerator import XPUAccelerator


@hookimpl
def register_accelerators() -> list[type[Accelerator]]:
    return [XPUAccelerator]
