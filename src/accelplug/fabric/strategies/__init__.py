"""``accelplug.fabric.strategies``: the strategies a Fabric script imports, as ``lightning.fabric.strategies``.

They are accelplug's own strategy classes (the Trainer's), so a strategy from a plugin distribution works the
same way. ``FSDPStrategy`` here is ``FabricFSDPStrategy``: it saves sharded checkpoints by default, as Lightning
Fabric's does; pass ``state_dict_type="full"`` for one file that loads anywhere. ``DeepSpeedStrategy`` imports
by Lightning's name: the plugin's class, or where it is not installed a stand-in that names the distribution
when instantiated (:mod:`accelplug.fabric.plugin_strategies`).
"""

from __future__ import annotations

from ..._import_paths import lazy_submodules
from ...strategies.base import Strategy
from ...strategies.ddp import DDPStrategy
from ...strategies.fsdp import FabricFSDPStrategy as FSDPStrategy
from ...strategies.single_device import SingleDeviceStrategy

__all__ = ["DDPStrategy", "DeepSpeedStrategy", "FSDPStrategy", "SingleDeviceStrategy", "Strategy"]

__getattr__ = lazy_submodules(__name__, (), {"DeepSpeedStrategy": "accelplug.fabric.plugin_strategies"})
