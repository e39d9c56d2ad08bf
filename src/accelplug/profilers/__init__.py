"""Profilers for ``Trainer(profiler=...)``: Lightning 2.6's ``lightning.pytorch.profilers``.

``Trainer(profiler="simple" | "advanced" | "pytorch")`` builds one with its defaults; a :class:`Profiler`
object is used as given; ``None`` leaves ``trainer.profiler`` a :class:`PassThroughProfiler` and the
Trainer on its uninstrumented path (no per-step cost). Which actions are recorded, and under which names,
is ``docs/profiling.md``.
"""

from __future__ import annotations

from typing import Any

from ..errors import MisconfigurationException, did_you_mean
from .advanced import AdvancedProfiler
from .base import PassThroughProfiler, Profiler
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

#: The names ``Trainer(profiler=...)`` accepts (any case), and what each builds.
PROFILER_NAMES: dict[str, type[Profiler]] = {
    "simple": SimpleProfiler,
    "advanced": AdvancedProfiler,
    "pytorch": PyTorchProfiler,
}


def profiler_from(value: Any) -> Profiler:
    """``Trainer(profiler=value)`` as the profiler object the run uses (a PassThroughProfiler for None)."""
    if value is None or value is False:
        return PassThroughProfiler()
    if isinstance(value, Profiler):
        return value
    if isinstance(value, str):
        name = value.lower()
        if name in PROFILER_NAMES:
            return PROFILER_NAMES[name]()
        if name == "xla":
            raise MisconfigurationException(
                "profiler='xla': the XLAProfiler belongs to an XLA back end, not to accelplug's core; install an "
                "XLA plugin (such as accelplug-xla) and pass the profiler object it provides."
            )
        raise MisconfigurationException(
            f"profiler={value!r} is not a profiler name.{did_you_mean(name, PROFILER_NAMES)} "
            f"Accepted: {', '.join(repr(n) for n in PROFILER_NAMES)}, a Profiler object, or None."
        )
    raise MisconfigurationException(
        f"profiler={value!r} ({type(value).__name__}): expected one of {', '.join(repr(n) for n in PROFILER_NAMES)}, "
        "a Profiler object (accelplug.profilers.SimpleProfiler(...), or your own subclass of Profiler), or None."
    )
