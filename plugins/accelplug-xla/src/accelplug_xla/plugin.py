"""The module named by the ``xla`` entry point in group ``accelplug``: two accelerators and their strategy.

Importing it is cheap (torch_xla is not imported here; see :mod:`accelplug_xla.environment`).
"""

from __future__ import annotations

from accelplug import Accelerator, Strategy, hookimpl

from .accelerator import TPUAccelerator, XLAAccelerator
from .strategy import SingleXLAStrategy


@hookimpl
def register_accelerators() -> list[type[Accelerator]]:
    return [XLAAccelerator, TPUAccelerator]


@hookimpl
def register_strategies() -> list[type[Strategy]]:
    return [SingleXLAStrategy]
