"""Ways of spreading a run over devices: one device, one process per device (DDP), or sharded (FSDP).

:data:`BUILTIN_STRATEGIES` is the one list of the built-ins, registered by accelplug's own plugin through
the ``register_strategies`` hook as a plugin registers its own: a new built-in strategy is its module and
one line here.
"""

from .base import Strategy
from .ddp import DDP_PRESETS, DDPStrategy
from .fsdp import FSDPStrategy
from .parallel import ParallelStrategy
from .single_device import SingleDeviceStrategy

__all__ = [
    "BUILTIN_STRATEGIES",
    "DDPStrategy",
    "FSDPStrategy",
    "ParallelStrategy",
    "SingleDeviceStrategy",
    "Strategy",
]

#: The built-in strategies, in the order they are listed.
#: Lightning's other DDP names (``"ddp_spawn"``, ``"ddp_find_unused_parameters_true"``...) follow ``"ddp"``.
BUILTIN_STRATEGIES: tuple[type[Strategy], ...] = (SingleDeviceStrategy, DDPStrategy, *DDP_PRESETS, FSDPStrategy)
