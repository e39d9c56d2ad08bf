"""accelplug: run PyTorch training on whatever accelerator this machine has.

Attributes are imported on first use, so ``import accelplug`` costs almost nothing on top of torch
and never loads plugins; the registry loads them on the first ``get_registry()``.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

_EXPORTS = {
    "Accelerator": "accelplug.accelerator",
    "AcceleratorRegistry": "accelplug.registry",
    "AcceleratorUnavailableError": "accelplug.errors",
    "MisconfigurationException": "accelplug.errors",
    "PluginFailure": "accelplug.registry",
    "Selection": "accelplug.selection",
    "Trainer": "accelplug.trainer",
    "get_registry": "accelplug.registry",
    "hookimpl": "accelplug.hookspecs",
    "select": "accelplug.selection",
}

__all__ = [
    "Accelerator",
    "AcceleratorRegistry",
    "AcceleratorUnavailableError",
    "MisconfigurationException",
    "PluginFailure",
    "Selection",
    "Trainer",
    "__version__",
    "get_registry",
    "hookimpl",
    "select",
]

if TYPE_CHECKING:
    from .accelerator import Accelerator
    from .errors import AcceleratorUnavailableError, MisconfigurationException
    from .hookspecs import hookimpl
    from .registry import AcceleratorRegistry, PluginFailure, get_registry
    from .selection import Selection, select
    from .trainer import Trainer


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'accelplug' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *_EXPORTS])
