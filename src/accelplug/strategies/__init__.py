"""Ways of spreading a run over devices: one device, one process per device (DDP), or sharded (FSDP)."""

from .base import Strategy
from .ddp import DDPStrategy
from .fsdp import FSDPStrategy
from .single_device import SingleDeviceStrategy

__all__ = ["DDPStrategy", "FSDPStrategy", "SingleDeviceStrategy", "Strategy"]
