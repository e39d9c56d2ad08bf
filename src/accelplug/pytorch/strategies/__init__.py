"""``lightning.pytorch.strategies``'s path: accelplug's strategy classes, the same objects; a back end's strategy
(DeepSpeed, XLA) is its plugin's class, or a stand-in naming the plugin (:mod:`accelplug.backends`)."""

from __future__ import annotations

from ..._import_paths import lazy_submodules
from ...strategies import (
    DDPStrategy,
    FSDPStrategy,
    ModelParallelStrategy,
    ParallelStrategy,
    SingleDeviceStrategy,
    Strategy,
)

__all__ = [
    "DDPStrategy",
    "DeepSpeedStrategy",
    "FSDPStrategy",
    "ModelParallelStrategy",
    "ParallelStrategy",
    "SingleDeviceStrategy",
    "SingleDeviceXLAStrategy",
    "Strategy",
    "StrategyRegistry",
    "XLAStrategy",
]

__getattr__ = lazy_submodules(
    __name__,
    ("ddp", "deepspeed", "fsdp", "model_parallel", "parallel", "single_device", "single_xla", "strategy", "xla"),
    {
        "DeepSpeedStrategy": "deepspeed",
        "SingleDeviceXLAStrategy": "single_xla",
        "XLAStrategy": "xla",
        "StrategyRegistry": "accelplug.registry_views",
    },
)
