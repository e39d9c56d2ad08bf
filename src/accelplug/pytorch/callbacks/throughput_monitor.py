"""``lightning.pytorch.callbacks.throughput_monitor``'s path: the objects of
:mod:`accelplug.callbacks.throughput_monitor`."""

from __future__ import annotations

from ...callbacks.throughput_monitor import *  # noqa: F403 - the same names
from ...callbacks.throughput_monitor import __all__ as __all__
from ...measure.throughput import get_available_flops  # noqa: F401 - replaceable here, as in Lightning
