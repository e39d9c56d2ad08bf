"""``accelplug.fabric.strategies``: the strategies a Fabric script imports, as ``lightning.fabric.strategies``.

They are accelplug's own strategy classes (the Trainer's), so a strategy from a plugin distribution works the
same way. ``FSDPStrategy`` here is :class:`~accelplug.strategies.fsdp.FabricFSDPStrategy`, which saves sharded
checkpoints by default, as Lightning Fabric's does; pass ``state_dict_type="full"`` for one file that loads
anywhere.
"""

from __future__ import annotations

from ...strategies.base import Strategy
from ...strategies.ddp import DDPStrategy
from ...strategies.fsdp import FabricFSDPStrategy as FSDPStrategy
from ...strategies.single_device import SingleDeviceStrategy

__all__ = ["DDPStrategy", "FSDPStrategy", "SingleDeviceStrategy", "Strategy"]
