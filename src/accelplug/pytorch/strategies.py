"""``lightning.pytorch.strategies``'s path: accelplug's strategy classes, the same objects.

A back end's strategy (DeepSpeed, XLA) comes from its plugin distribution, never from this package; Lightning's
names for them (``DeepSpeedStrategy``) import from here as from ``accelplug.fabric.strategies``: the plugin's
class, or where it is not installed a stand-in that names the distribution when instantiated
(:mod:`accelplug.fabric.plugin_strategies`).
"""

from __future__ import annotations

from .._import_paths import lazy_submodules
from ..strategies import (
    DDPStrategy,
    FSDPStrategy,
    ModelParallelStrategy,
    ParallelStrategy,
    SingleDeviceStrategy,
    Strategy,
)

__all__ = [
    "DDPStrategy",
    "FSDPStrategy",
    "ModelParallelStrategy",
    "ParallelStrategy",
    "SingleDeviceStrategy",
    "Strategy",
]

__getattr__ = lazy_submodules(__name__, (), {"DeepSpeedStrategy": "accelplug.fabric.plugin_strategies"})
