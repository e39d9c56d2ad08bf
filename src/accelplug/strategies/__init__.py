"""Ways of spreading a run over devices: one device, one process per device (DDP), or sharded (FSDP).

:data:`BUILTIN_STRATEGIES` is the one list of the built-ins, registered by accelplug's own plugin through
the ``register_strategies`` hook as a plugin registers its own: a new built-in strategy is its module and
one line here. The list holds names and where each class lives, not the classes: the plugin declares them by
name (:class:`~accelplug.hookspecs.Deferred`), so a run imports only the strategy it uses. The classes are this
package's attributes, each imported when first read.
"""

from __future__ import annotations

from .._import_paths import lazy_submodules
from .base import Strategy

__all__ = [
    "BUILTIN_STRATEGIES",
    "DDP_PRESETS",
    "DDP_PRESET_SETTINGS",
    "DDPStrategy",
    "FSDPStrategy",
    "ModelParallelStrategy",
    "ParallelStrategy",
    "SingleDeviceStrategy",
    "Strategy",
]

#: Lightning's registered DDP names beyond ``"ddp"`` itself: (name, start method, ``find_unused_parameters``).
#: :mod:`.ddp` registers each as a class ``DDPStrategy_<name>`` (``DDP_PRESETS``) that builds a plain DDPStrategy with
#: those presets, as Lightning's registry does.
DDP_PRESET_SETTINGS: tuple[tuple[str, str, bool | None], ...] = (
    ("ddp_spawn", "spawn", None),
    ("ddp_fork", "fork", None),
    ("ddp_notebook", "fork", None),
    *(
        (f"{prefix}_find_unused_parameters_{str(flag).lower()}", method, flag)
        for prefix, method in (("ddp", "popen"), ("ddp_spawn", "spawn"), ("ddp_fork", "fork"), ("ddp_notebook", "fork"))
        for flag in (False, True)
    ),
)

#: The built-in strategies, in the order they are listed: (name, ``"module:Class"``).
#: Lightning's other DDP names (``"ddp_spawn"``, ``"ddp_find_unused_parameters_true"``...) follow ``"ddp"``.
BUILTIN_STRATEGIES: tuple[tuple[str, str], ...] = (
    ("single_device", f"{__name__}.single_device:SingleDeviceStrategy"),
    ("ddp", f"{__name__}.ddp:DDPStrategy"),
    *((name, f"{__name__}.ddp:DDPStrategy_{name}") for name, _method, _find_unused in DDP_PRESET_SETTINGS),
    ("fsdp", f"{__name__}.fsdp:FSDPStrategy"),
)

__getattr__ = lazy_submodules(
    __name__,
    (),
    {
        "DDP_PRESETS": "ddp",
        "DDPStrategy": "ddp",
        "FSDPStrategy": "fsdp",
        "ModelParallelStrategy": "model_parallel",
        "ParallelStrategy": "parallel",
        "SingleDeviceStrategy": "single_device",
    },
)
