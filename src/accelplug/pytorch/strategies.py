"""``lightning.pytorch.strategies``'s path: accelplug's strategy classes, the same objects.

A back end's strategy (DeepSpeed, XLA) comes from its plugin distribution, never from this package; Lightning's
names for them (``DeepSpeedStrategy``) import from here as from ``accelplug.fabric.strategies``: the plugin's
class, or where it is not installed a stand-in that names the distribution when instantiated.
"""

from __future__ import annotations

from typing import Any

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


def __getattr__(name: str) -> Any:
    from ..fabric import strategies

    if name in strategies._FROM_PLUGINS:
        return getattr(strategies, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
