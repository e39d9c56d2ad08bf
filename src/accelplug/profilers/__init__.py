"""Profilers for ``Trainer(profiler=...)``: Lightning 2.6's ``lightning.pytorch.profilers``.

``Trainer(profiler="simple" | "advanced" | "pytorch")`` builds one with its defaults; a :class:`Profiler`
object is used as given; ``None`` leaves ``trainer.profiler`` a :class:`PassThroughProfiler` and the
Trainer on its uninstrumented path (no per-step cost). Which actions are recorded, and under which names,
is ``docs/profiling.md``. The three profilers are imported when first used (the advanced one loads
``cProfile`` and ``pstats``): a Trainer without one needs :mod:`.base` only.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from .._import_paths import lazy_submodules
from ..errors import MisconfigurationException, did_you_mean
from .base import PassThroughProfiler, Profiler

if TYPE_CHECKING:
    from .advanced import AdvancedProfiler
    from .pytorch import PyTorchProfiler
    from .simple import SimpleProfiler

__all__ = [
    "PROFILER_NAMES",
    "AdvancedProfiler",
    "PassThroughProfiler",
    "Profiler",
    "PyTorchProfiler",
    "SimpleProfiler",
    "profiler_from",
]

#: The names ``Trainer(profiler=...)`` accepts (any case), and the module and class each builds.
PROFILER_NAMES: dict[str, tuple[str, str]] = {
    "simple": ("simple", "SimpleProfiler"),
    "advanced": ("advanced", "AdvancedProfiler"),
    "pytorch": ("pytorch", "PyTorchProfiler"),
}

__getattr__ = lazy_submodules(
    __name__, ("advanced", "pytorch", "simple"), {class_name: module for module, class_name in PROFILER_NAMES.values()}
)


def _profiler_class(name: str) -> type[Profiler]:
    module, class_name = PROFILER_NAMES[name]
    found: type[Profiler] = getattr(importlib.import_module(f"{__name__}.{module}"), class_name)
    return found


def profiler_from(value: Any) -> Profiler:
    """``Trainer(profiler=value)`` as the profiler object the run uses (a PassThroughProfiler for None)."""
    if value is None or value is False:
        return PassThroughProfiler()
    if isinstance(value, Profiler):
        return value
    if isinstance(value, str):
        name = value.lower()
        if name in PROFILER_NAMES:
            return _profiler_class(name)()
        if name == "xla":
            raise MisconfigurationException(
                "profiler='xla': the XLAProfiler belongs to an XLA back end, not to accelplug's core; install an "
                "XLA plugin (such as accelplug-xla) and pass the profiler object it provides."
            )
        raise MisconfigurationException(  # Lightning's key phrase and names (xla included)
            f"profiler={value!r} is not a profiler name.{did_you_mean(name, PROFILER_NAMES)} When passing string "
            "value for the `profiler` parameter of `Trainer`, it can only be one of "
            f"{[*PROFILER_NAMES, 'xla']}; or pass a Profiler object, or None."
        )
    raise MisconfigurationException(
        f"profiler={value!r} ({type(value).__name__}): expected one of {', '.join(repr(n) for n in PROFILER_NAMES)}, "
        "a Profiler object (accelplug.profilers.SimpleProfiler(...), or your own subclass of Profiler), or None."
    )
