"""Lightning's classes for back ends that plugin distributions give accelplug: DeepSpeed and XLA (TPUs).

A script written for Lightning imports ``DeepSpeedStrategy``, ``XLAAccelerator``, ``XLAPrecision``... from
Lightning's paths whether or not the back end is installed, and Lightning's own test files ask
``XLAAccelerator.is_available()`` at import time. accelplug keeps back ends out of its core (they are plugin
distributions: ``accelplug-deepspeed``, ``accelplug-xla``), so each name here is:

- the plugin's class, where the plugin is installed and registers that name (``DeepSpeedStrategy`` is then
  ``accelplug-deepspeed``'s, ``XLAAccelerator`` ``accelplug-xla``'s);
- else a stand-in of the same kind (a ``Strategy``, an ``Accelerator``...): its class-level questions answer
  as Lightning's do without the back end (``XLAAccelerator.is_available()`` is False, ``XLAEnvironment.detect()``
  False), and building one raises :class:`~accelplug.errors.BackendNotInstalledError`, an ``ImportError`` as
  Lightning raises, naming the distribution to install.

:data:`BACKEND_STRATEGY_NAMES` lists the ``strategy=`` names Lightning registers for these back ends, with the
arguments each name stands for, so Lightning's ``StrategyRegistry`` lists them here too.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, NoReturn

from .accelerator import Accelerator
from .checkpoint.io import TorchCheckpointIO
from .environments.base import ClusterEnvironment
from .errors import BackendNotInstalledError
from .precision.lightning.base import Precision
from .precision.lightning.deprecated import renamed
from .profilers.base import Profiler
from .strategies.base import Strategy
from .strategies.ddp import DDPStrategy
from .strategies.parallel import ParallelStrategy
from .strategies.single_device import SingleDeviceStrategy

__all__ = [
    "BACKEND_STRATEGY_NAMES",
    "DEEPSPEED",
    "XLA",
    "Backend",
    "XLACheckpointIO",
    "XLAEnvironment",
    "XLAFSDPStrategy",
    "XLAPrecision",
    "XLAPrecisionPlugin",
    "XLAProfiler",
    "is_stand_in",
]


@dataclass(frozen=True)
class Backend:
    """A back end a plugin distribution provides: what it is, and what to install for it."""

    title: str
    #: the plugin distribution that gives accelplug this back end
    distribution: str
    #: the package the back end itself needs
    package: str

    def refuse(self, name: str) -> NoReturn:
        raise BackendNotInstalledError(
            f"To use `{name}`, install the plugin distribution that gives accelplug {self.title}: "
            f"pip install {self.distribution} (it brings {self.package}). accelplug keeps back ends in plugins; "
            "`accelplug list` shows the installed ones."
        )


DEEPSPEED = Backend("DeepSpeed", "accelplug-deepspeed", "deepspeed")
XLA = Backend("XLA (TPUs)", "accelplug-xla", "torch_xla")

#: The ``strategy=`` names Lightning registers for these back ends: name -> (class name, arguments).
BACKEND_STRATEGY_NAMES: dict[str, tuple[str, dict[str, Any]]] = {
    "deepspeed": ("DeepSpeedStrategy", {}),
    "deepspeed_stage_1": ("DeepSpeedStrategy", {"stage": 1}),
    "deepspeed_stage_1_offload": ("DeepSpeedStrategy", {"stage": 1, "offload_optimizer": True}),
    "deepspeed_stage_2": ("DeepSpeedStrategy", {"stage": 2}),
    "deepspeed_stage_2_offload": ("DeepSpeedStrategy", {"stage": 2, "offload_optimizer": True}),
    "deepspeed_stage_3": ("DeepSpeedStrategy", {"stage": 3}),
    "deepspeed_stage_3_offload": (
        "DeepSpeedStrategy",
        {"stage": 3, "offload_optimizer": True, "offload_parameters": True},
    ),
    "deepspeed_stage_3_offload_nvme": (
        "DeepSpeedStrategy",
        {
            "stage": 3,
            "offload_optimizer": True,
            "offload_parameters": True,
            "remote_device": "nvme",
            "offload_params_device": "nvme",
            "offload_optimizer_device": "nvme",
        },
    ),
    "single_xla": ("SingleDeviceXLAStrategy", {}),
    "xla_debug": ("XLAStrategy", {"debug": True}),
    "xla": ("XLAStrategy", {}),
    "xla_fsdp": ("XLAFSDPStrategy", {}),
}

_STAND_INS: set[type] = set()


def is_stand_in(cls: object) -> bool:
    """Whether ``cls`` is one of this module's stand-ins (its back end is not installed)."""
    return cls in _STAND_INS


def _stand_in(class_name: str, base: type, backend: Backend, **attributes: Any) -> Any:
    """A class named ``class_name`` of ``base``'s kind whose instances cannot be made: building one names the
    plugin. ``attributes`` are its class attributes (a registered ``name``, class-level queries)."""

    def refuse(self: object, *args: Any, **kwargs: Any) -> None:
        backend.refuse(class_name)

    namespace = {
        "__init__": refuse,
        "__module__": __name__,
        "__doc__": f"Lightning's ``{class_name}``: {backend.title}, which {backend.distribution} provides "
        "(not installed).",
        **attributes,
    }
    cls = type(class_name, (base,), namespace)
    _STAND_INS.add(cls)
    return cls


def _registered(kind: str, name: str) -> Any:
    """The class a loaded plugin registered as ``name`` (a strategy or an accelerator), or None."""
    from .registry import get_registry

    registry = get_registry()
    if kind == "strategy":
        return registry.get_strategy(name) if name in registry.strategy_names() else None
    return registry.get(name) if name in registry.names() else None


def _not_available() -> bool:
    return False


def _no_devices() -> int:
    return 0


def _why_xla_is_missing() -> str:
    return f"it needs {XLA.package}, which {XLA.distribution} brings: pip install {XLA.distribution}"


#: The stand-ins, made at import (cheap); the names below prefer a plugin's registered class, asked on first read.
_DEEPSPEED_STRATEGY = _stand_in("DeepSpeedStrategy", DDPStrategy, DEEPSPEED, name="deepspeed")
_XLA_STRATEGY = _stand_in("XLAStrategy", DDPStrategy, XLA, name="xla")
_SINGLE_XLA_STRATEGY = _stand_in("SingleDeviceXLAStrategy", SingleDeviceStrategy, XLA, name="single_xla")
_XLA_ACCELERATOR = _stand_in(
    "XLAAccelerator",
    Accelerator,
    XLA,
    name="xla",
    device_type="xla",
    is_available=classmethod(lambda cls: _not_available()),
    device_count=classmethod(lambda cls: _no_devices()),
    unavailable_reason=classmethod(lambda cls: _why_xla_is_missing()),
)
#: Lightning's name -> (what a plugin registers it as, the registered name, the stand-in).
_FROM_PLUGINS: dict[str, tuple[str, str, Any]] = {
    "DeepSpeedStrategy": ("strategy", "deepspeed", _DEEPSPEED_STRATEGY),
    "XLAStrategy": ("strategy", "xla", _XLA_STRATEGY),
    "SingleDeviceXLAStrategy": ("strategy", "single_xla", _SINGLE_XLA_STRATEGY),
    "XLAAccelerator": ("accelerator", "xla", _XLA_ACCELERATOR),
}

XLAFSDPStrategy: type[Strategy] = _stand_in("XLAFSDPStrategy", ParallelStrategy, XLA, name="xla_fsdp")
XLAPrecision: type[Precision] = _stand_in("XLAPrecision", Precision, XLA)
XLACheckpointIO: type[TorchCheckpointIO] = _stand_in("XLACheckpointIO", TorchCheckpointIO, XLA)
XLAProfiler: type[Profiler] = _stand_in("XLAProfiler", Profiler, XLA)
XLAPrecisionPlugin: type[Precision] = renamed("XLAPrecisionPlugin", XLAPrecision, __name__)
XLAEnvironment: type[ClusterEnvironment] = _stand_in(
    "XLAEnvironment", ClusterEnvironment, XLA, detect=staticmethod(_not_available)
)


def __getattr__(name: str) -> Any:
    """A name a plugin may provide: its registered class, asked of the registry at each read (a plugin installed
    later is found), else the stand-in."""
    if name not in _FROM_PLUGINS:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    kind, registered, stand_in = _FROM_PLUGINS[name]
    return _registered(kind, registered) or stand_in
