"""``lightning.fabric.strategies``'s path: accelplug's own strategy classes (the Trainer's), so a strategy from a
plugin distribution works the same way. ``FSDPStrategy`` here is ``FabricFSDPStrategy``: it saves sharded checkpoints
by default, as Lightning Fabric's does; pass ``state_dict_type="full"`` for one file that loads anywhere. A back end's
strategy (DeepSpeed, XLA) is its plugin's class, or a stand-in naming the plugin (:mod:`accelplug.backends`)."""

from __future__ import annotations

from ..._import_paths import lazy_submodules
from ...backends import XLAFSDPStrategy
from ...strategies.base import Strategy
from ...strategies.ddp import DDPStrategy
from ...strategies.fsdp import FabricFSDPStrategy as FSDPStrategy
from ...strategies.model_parallel import FabricModelParallelStrategy as ModelParallelStrategy
from ...strategies.parallel import ParallelStrategy
from ...strategies.single_device import SingleDeviceStrategy

__all__ = [
    "STRATEGY_REGISTRY",
    "DDPStrategy",
    "DeepSpeedStrategy",
    "FSDPStrategy",
    "ModelParallelStrategy",
    "ParallelStrategy",
    "SingleDeviceStrategy",
    "SingleDeviceXLAStrategy",
    "Strategy",
    "XLAFSDPStrategy",
    "XLAStrategy",
]

__getattr__ = lazy_submodules(
    __name__,
    (
        "ddp",
        "deepspeed",
        "dp",
        "fsdp",
        "model_parallel",
        "parallel",
        "registry",
        "single_device",
        "single_xla",
        "strategy",
        "xla",
        "xla_fsdp",
    ),
    {
        "DataParallelStrategy": "dp",
        "DeepSpeedStrategy": "deepspeed",
        "SingleDeviceXLAStrategy": "single_xla",
        "XLAStrategy": "xla",
        "STRATEGY_REGISTRY": "accelplug.registry_views",
    },
)
