"""``lightning.pytorch.strategies``'s path: accelplug's strategy classes, the same objects.

A back end's strategy (DeepSpeed, XLA) comes from its plugin distribution, never from this package.
"""

from __future__ import annotations

from ..strategies import DDPStrategy, FSDPStrategy, ParallelStrategy, SingleDeviceStrategy, Strategy

__all__ = ["DDPStrategy", "FSDPStrategy", "ParallelStrategy", "SingleDeviceStrategy", "Strategy"]
