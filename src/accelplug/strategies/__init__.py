"""Ways of spreading a run over devices: one device, or one process per device (DDP)."""

from .base import Strategy
from .ddp import DDPStrategy
from .single_device import SingleDeviceStrategy

__all__ = ["DDPStrategy", "SingleDeviceStrategy", "Strategy"]
